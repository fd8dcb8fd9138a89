"""Progress of an analysis, for a display: which stage runs and how far it is.

:data:`Progress` is the callback the pipeline and the report call — ``progress(stage, done, total)``, ``total``
None while unknown — and :func:`spark_tasks` reports the tasks of the Spark jobs running meanwhile (read from
Spark's status tracker every ``interval`` seconds, in a thread), so that a long job shows its tasks finishing.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator, Optional

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: ``progress(stage, done, total)``: a stage starts or advances (``total`` None: not known).
Progress = Callable[[str, int, Optional[int]], None]


def ignore(stage: str, done: int, total: int | None) -> None:
    """The progress callback that shows nothing."""


@contextmanager
def spark_tasks(spark: "SparkSession", stage: str, progress: Progress, interval: float = 0.25) -> Iterator[None]:
    """While the block runs, report ``stage`` with the finished and total tasks of the active Spark jobs' stages
    (as ``stage (job N)``) every ``interval`` seconds."""
    progress(stage, 0, None)
    stop = threading.Event()
    tracker = spark.sparkContext.statusTracker()

    def watch() -> None:
        while not stop.wait(interval):
            try:
                jobs = tracker.getActiveJobsIds()
                done = total = 0
                for job in jobs:
                    info = tracker.getJobInfo(job)
                    for sid in info.stageIds if info else ():
                        s = tracker.getStageInfo(sid)
                        if s is not None:
                            done, total = done + s.numCompletedTasks, total + s.numTasks
            except Exception:  # the session is stopping: nothing more to show
                return
            if jobs and total:
                progress(f"{stage} (Spark job {max(jobs)})", done, total)

    thread = threading.Thread(target=watch, name="clusteremu-spark-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
