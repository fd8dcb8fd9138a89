"""Per-supervisor use over time (the ``supervisor_usage`` table behind the report's per-supervisor panels), from
the supervisors' worker events: launches add, kills remove, a host crash empties, a graceful stop keeps."""
from __future__ import annotations

import pandas as pd

from clusteremu.tools.analysis.storm_parts import supervisor_usage


def rows(*events: tuple) -> pd.DataFrame:
    cols = ("t", "agent", "seq", "kind", "port", "cpu", "memory_mb", "reason")
    return pd.DataFrame([dict(zip(cols, e)) for e in events], columns=list(cols))


def test_launches_kills_crashes_and_graceful_stops():
    table = supervisor_usage(rows(
        (10.0, "supervisor-1", 1, "worker_launched", 6700, 50.0, 512.0, None),
        (10.0, "supervisor-1", 2, "worker_launched", 6701, 30.0, 256.0, None),
        (12.0, "supervisor-2", 1, "worker_launched", 6700, 20.0, 128.0, None),
        (20.0, "supervisor-1", 3, "worker_killed", 6700, None, None, "unassigned"),
        (25.0, "nimbus-1", 9, "agent_stopped", None, None, None, "crash"),  # not a supervisor: ignored
        (30.0, "supervisor-2", 2, "agent_stopped", None, None, None, "rolling_restart"),  # its worker runs on
        (40.0, "supervisor-1", 4, "agent_stopped", None, None, None, "restart"),  # a host crash: all gone
    ))["supervisor_usage"]
    assert table.values.tolist() == [
        [10.0, "supervisor-1", 1, 50.0, 512.0],
        [10.0, "supervisor-1", 2, 80.0, 768.0],
        [12.0, "supervisor-2", 1, 20.0, 128.0],
        [20.0, "supervisor-1", 1, 30.0, 256.0],
        [40.0, "supervisor-1", 0, 0.0, 0.0],
    ]


def test_no_worker_event_gives_an_empty_table():
    table = supervisor_usage(rows((5.0, "nimbus-1", 1, "agent_stopped", None, None, None, "crash")))
    assert table["supervisor_usage"].empty
    assert list(table["supervisor_usage"].columns) == ["t", "supervisor", "workers", "cpu_used", "memory_used_mb"]
