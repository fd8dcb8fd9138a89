"""Spark for clusteremu: the session builder and the segment source.

* :func:`spark_session` / :func:`spark_context` — a session on ``local[*]`` or any master URL;
* :func:`read_events` — the events of run directories as a DataFrame, decoded in the executors
  (``binaryFile`` + ``mapInArrow``), with damaged segments reported, not fatal;
* :class:`EventSchema` — which kinds and fields a job reads.
"""
from __future__ import annotations

from .segments import EventSchema, Problem, decode_segment, read_events, segment_files
from .session import DEFAULT_MASTER, MASTER_ENV, active_session, resolve_master, spark_context, spark_session

__all__ = [
    "DEFAULT_MASTER",
    "EventSchema",
    "MASTER_ENV",
    "Problem",
    "active_session",
    "decode_segment",
    "read_events",
    "resolve_master",
    "segment_files",
    "spark_context",
    "spark_session",
]
