"""The Spark JVM's standard error, less the one start-up notice that no option turns off.

Spark's launcher starts every driver JVM with ``--add-modules=jdk.incubator.vector`` (its fixed
``JavaModuleOptions``), and Java then prints ``WARNING: Using incubator modules: jdk.incubator.vector`` on
stderr: the JVM's module system prints that notice whenever an incubator module is resolved, and no JVM option or
Spark setting silences it. So :func:`launch_gateway` starts the JVM with its stderr on a pipe, and a thread copies
every line of it to this process's stderr (as it was when the JVM started) except exactly that notice. Anything
else — Spark's log lines, a JVM crash report, the tracebacks of the Python workers the JVM starts — passes
unchanged, so no real error is hidden.
"""
from __future__ import annotations

import os
import subprocess
import threading
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from py4j.java_gateway import JavaGateway
    from pyspark import SparkConf

#: Whole lines of the JVM's stderr that are dropped: the incubator notice of the module Spark's launcher adds.
NOISE: frozenset[bytes] = frozenset({b"WARNING: Using incubator modules: jdk.incubator.vector"})

_dropped: list[str] = []


def dropped_lines() -> list[str]:
    """The lines this process has dropped from JVM stderr so far (each is a member of :data:`NOISE`)."""
    return list(_dropped)


def forward(source: IO[bytes], target_fd: int) -> None:
    """Copy ``source`` line by line to the file descriptor ``target_fd`` until end of file, dropping the lines of
    :data:`NOISE`; closes both at the end."""
    try:
        for line in iter(source.readline, b""):
            if line.rstrip(b"\r\n") in NOISE:
                _dropped.append(line.rstrip(b"\r\n").decode())
                continue
            view = memoryview(line)
            while view:
                view = view[os.write(target_fd, view):]
    except OSError:  # our stderr is gone (the process is ending): nothing is left to copy to
        pass
    finally:
        source.close()
        os.close(target_fd)


def launch_gateway(conf: "SparkConf") -> "JavaGateway":
    """Start Spark's driver JVM for ``conf`` (PySpark's own launcher) with its stderr filtered as described above."""
    from pyspark.java_gateway import launch_gateway as pyspark_launch

    # The stderr of this process as it is now (a test framework may swap file descriptor 2 later): where the JVM
    # would have written.
    target = os.dup(2)
    try:
        gateway = pyspark_launch(conf, popen_kwargs={"stderr": subprocess.PIPE})
    except BaseException:
        os.close(target)
        raise
    proc = getattr(gateway, "proc", None)  # None when PySpark attached to a JVM that was already running
    if proc is None or proc.stderr is None:
        os.close(target)
    else:
        threading.Thread(target=forward, args=(proc.stderr, target), name="spark-jvm-stderr", daemon=True).start()
    return gateway
