"""The Spark session every analysis, comparison and sweep runs on (DESIGN.md principle 8).

``spark_session(master)`` builds (or reuses) a session that works out of the box on ``local[*]`` and on any
Spark master URL (``local[2]``, ``spark://host:7077``, ``yarn``, ...):

* the Python workers run the interpreter that runs clusteremu (``PYSPARK_PYTHON`` / ``PYSPARK_DRIVER_PYTHON``
  default to ``sys.executable``; without it Spark starts the system ``python3``, which lacks pyarrow and
  clusteremu) — an explicit setting in the environment wins, for clusters whose executors keep Python
  elsewhere;
* Arrow transfers are on, with no silent fall-back to the slow row path;
* the web UI is off and Spark logs only errors (``log4j2.properties`` beside this module), so a CLI verb prints
  its results and nothing else;
* few shuffle partitions: analyses shuffle per-run aggregates, not bulk data.

``spark_context(master)`` is the same as a context manager that stops the session on exit only when it
created it, so a caller inside a test (or a sweep that already has a session) shares the running one;
``BackgroundSession`` starts one in a thread while the caller works on (a sweep starts Spark during its runs).

The driver JVM's stderr reaches ours through a filter that drops the one start-up notice Java prints for the
incubator module Spark's launcher always adds (:mod:`.jvm_stderr`).
"""
from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: The master used when none is given and no session is running.
DEFAULT_MASTER = "local[*]"
#: Environment variable that changes the default master (the ``--master`` flags win over it).
MASTER_ENV = "CLUSTEREMU_SPARK_MASTER"

LOG4J2 = Path(__file__).with_name("log4j2.properties")

#: Settings of every session; ``conf`` arguments override them.
BASE_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.arrow.pyspark.fallback.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
}

#: Extra settings for local masters, where the driver is the only JVM.
LOCAL_CONF: dict[str, str] = {
    "spark.driver.memory": "2g",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "",  # the core count of the master URL
}


def resolve_master(master: str | None) -> str:
    """The master URL to use: the argument, else ``$CLUSTEREMU_SPARK_MASTER``, else ``local[*]``."""
    return master or os.environ.get(MASTER_ENV) or DEFAULT_MASTER


def _local_cores(master: str) -> int | None:
    """Cores of a ``local``/``local[N]``/``local[*]`` master, None for a cluster master."""
    if master == "local":
        return 1
    if master.startswith("local[") and master.endswith("]"):
        spec = master[len("local[") : -1].split(",")[0]
        if spec == "*":
            return os.cpu_count() or 1
        return int(spec) if spec.isdigit() else None
    return None


def _set_python() -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def active_session() -> "SparkSession | None":
    """The session running in this process, if any."""
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def spark_session(
    master: str | None = None, *, app_name: str = "clusteremu", conf: Mapping[str, str] | None = None
) -> "SparkSession":
    """A Spark session on ``master`` (see :func:`resolve_master`); the running one when there is one.

    A session already running in this process is returned as it is (Spark allows one per process), whatever
    ``master`` says: the tests' shared ``local[2]`` session serves every command they call.
    """
    running = active_session()
    if running is not None:
        return running
    _set_python()
    from pyspark.sql import SparkSession

    url = resolve_master(master)
    settings = dict(BASE_CONF)
    if LOG4J2.exists():  # an installed wheel without the file just keeps Spark's own logging settings
        settings["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile={LOG4J2.as_uri()}"
    cores = _local_cores(url)
    if cores is not None:
        # A local session needs no network identity; without this Spark warns when the host name resolves to a
        # loopback address.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        settings.update(LOCAL_CONF)
        settings["spark.default.parallelism"] = str(cores)
    settings.update(conf or {})
    _start_jvm(url, app_name, settings)
    builder = SparkSession.builder.master(url).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def _start_jvm(url: str, app_name: str, settings: Mapping[str, str]) -> None:
    """Start the driver JVM (unless this process has one) with its stderr filtered (:mod:`.jvm_stderr`), and the
    SparkContext on it that the session builder then picks up."""
    from pyspark import SparkConf, SparkContext

    from .jvm_stderr import launch_gateway

    if SparkContext._gateway is not None:  # a JVM this process started earlier serves the new session too
        return
    conf = SparkConf(loadDefaults=False).setMaster(url).setAppName(app_name)
    for key, value in settings.items():
        conf.set(key, value)
    SparkContext(conf=conf, gateway=launch_gateway(conf))


def warm_python_workers(spark: "SparkSession", modules: Sequence[str]) -> None:
    """Run one small task per core that imports ``modules`` in a Python worker: Spark keeps idle workers for
    reuse (``spark.python.worker.reuse``), so the next job's tasks start with them imported, and the JVM has
    compiled its Arrow path once."""
    cores = max(1, spark.sparkContext.defaultParallelism)
    names = list(modules)

    def load(batches: Iterator[Any]) -> Iterator[Any]:
        import importlib

        for name in names:
            importlib.import_module(name)
        yield from batches

    spark.range(cores, numPartitions=cores).mapInArrow(load, "id long").collect()


class BackgroundSession:
    """A session started in a background thread, so that the JVM starts while this process does other work (a
    sweep's runs); :meth:`get` waits for it. ``warm``, when given, runs on the new session in that thread too
    (a small job that starts the Python workers, say). Stops the session at :meth:`close` only if it started it.
    """

    def __init__(
        self,
        master: str | None = None,
        *,
        app_name: str = "clusteremu",
        conf: Mapping[str, str] | None = None,
        warm: "Callable[[SparkSession], None] | None" = None,
    ) -> None:
        self.created = active_session() is None
        self._session: "SparkSession | None" = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._start, args=(master, app_name, conf, warm), name="spark-start", daemon=True)
        self._thread.start()

    def _start(self, master: str | None, app_name: str, conf: Mapping[str, str] | None, warm: "Callable[[SparkSession], None] | None") -> None:
        try:
            self._session = spark_session(master, app_name=app_name, conf=conf)
            if warm is not None and self.created:
                warm(self._session)
        except BaseException as err:  # handed to the caller by get()
            self._error = err

    def get(self) -> "SparkSession":
        """The session, once started (the start's error, if it failed)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._session is not None
        return self._session

    def close(self) -> None:
        """Wait for the start to end, then stop the session if this object started it."""
        self._thread.join()
        if self.created and self._session is not None:
            self._session.stop()

    def __enter__(self) -> "BackgroundSession":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def spark_context(
    master: str | None = None, *, app_name: str = "clusteremu", conf: Mapping[str, str] | None = None
) -> Iterator["SparkSession"]:
    """``with spark_context(master) as spark:`` — stops the session at the end only if it started it here."""
    created = active_session() is None
    session = spark_session(master, app_name=app_name, conf=conf)
    try:
        yield session
    finally:
        if created:
            session.stop()
