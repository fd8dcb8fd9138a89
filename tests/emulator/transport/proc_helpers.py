"""Starting ``clusteremu`` as a subprocess and finding its worker processes, for the liveness and tcp tests."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[3]


#: every process started by ``clusteremu`` in the current test (the ``reap`` fixture kills what is left)
STARTED: list[subprocess.Popen] = []


def clusteremu(*args: str, **kw) -> subprocess.Popen:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)
    # A shell without job control starts background commands with SIGINT ignored, and children inherit that;
    # restore the default so that the interpreter installs its KeyboardInterrupt handler (Ctrl-C tests).
    kw.setdefault("preexec_fn", lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    proc = subprocess.Popen([sys.executable, "-m", "clusteremu", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    STARTED.append(proc)
    return proc


def reap_started() -> None:
    """Kill whatever a test started and left running (and its workers), so a failing test never leaks."""
    for proc in STARTED:
        try:
            family = psutil.Process(proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            family = []
        for p in [*family]:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)
    STARTED.clear()


def workers_of(proc: subprocess.Popen, n: int, timeout_s: float = 30.0) -> list[psutil.Process]:
    """The ``n`` worker processes that ``proc`` spawned, once they all run (fails after ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        kids = [c for c in psutil.Process(proc.pid).children() if "agent" in c.cmdline()]
        if len(kids) == n:
            return kids
        assert proc.poll() is None, proc.communicate()[1]
        time.sleep(0.05)
    raise AssertionError(f"{n} workers did not start within {timeout_s} s")


def wait_for(predicate, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
