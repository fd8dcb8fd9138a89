"""Pulsar's derived series of load reports (:mod:`clusteremu.tools.analysis.pulsar_series`): exact values under the
documented latest-value-per-broker rules."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from clusteremu.emulator.testing import write_run
from clusteremu.emulator.trace.query import Trace
from clusteremu.tools.analysis import pulsar_series as series

INF, NAN = math.inf, math.nan


def frame(rows: list[tuple]) -> pd.DataFrame:
    """Rows (t, agent, seq, score, rate_in, rate_out, tput_in, tput_out) as a load_report frame."""
    cols = ["t", "agent", "seq", "score", "msg_rate_in", "msg_rate_out", "msg_throughput_in", "msg_throughput_out"]
    return pd.DataFrame(rows, columns=cols)


ROWS = [
    (1.0, "b1", 1, 10.0, 5.0, 5.0, 100.0, 0.0),
    (1.0, "b2", 1, 30.0, 10.0, 10.0, 50.0, 50.0),
    (2.0, "b1", 2, 20.0, 20.0, 20.0, 300.0, 100.0),
    (3.0, "b3", 1, NAN, 0.0, 0.0, 0.0, 0.0),
    (4.0, "b2", 2, INF, 10.0, 10.0, 100.0, 100.0),
    (5.0, "b1", 3, 5.0, 1.0, 1.0, 100.0, 100.0),
]


def col(df: pd.DataFrame, name: str) -> list:
    return [None if isinstance(v, float) and math.isnan(v) else v for v in df[name]]


def test_score_spread_is_max_minus_min_of_latest_values_at_each_report_time():
    out = series.score_spread(frame(ROWS))
    assert list(out.columns) == ["t", "score_spread", "brokers"]
    assert list(out["t"]) == [1.0, 2.0, 3.0, 4.0, 5.0]
    # b3 reports NaN (takes no part); b2's inf propagates.
    assert col(out, "score_spread") == [20.0, 10.0, 10.0, INF, INF]
    assert list(out["brokers"]) == [2, 2, 2, 2, 2]


def test_brokers_without_a_report_yet_take_no_part_and_one_broker_has_no_spread():
    out = series.score_spread(frame(ROWS[:1]))
    assert col(out, "score_spread") == [0.0] and list(out["brokers"]) == [1]


def test_a_nan_report_replaces_the_earlier_value():
    rows = [(1.0, "b1", 1, 10.0, 1, 1, 1, 1), (1.0, "b2", 1, 50.0, 1, 1, 1, 1), (2.0, "b2", 2, NAN, 1, 1, 1, 1)]
    out = series.score_spread(frame(rows))
    assert col(out, "score_spread") == [40.0, 0.0] and list(out["brokers"]) == [2, 1]
    only_nan = series.score_spread(frame([(1.0, "b1", 1, NAN, 1, 1, 1, 1)]))
    assert col(only_nan, "score_spread") == [None] and list(only_nan["brokers"]) == [0]


def test_msg_rate_ratio_with_a_zero_minimum():
    out = series.msg_rate_ratio(frame(ROWS))
    # rates in+out: t1 b1=10 b2=20; t2 b1=40; t3 b3=0 joins (0 min -> inf); t4 b2=20; t5 b1=2.
    assert col(out, "msg_rate_ratio") == [2.0, 2.0, INF, INF, INF]
    assert list(out["brokers"]) == [2, 2, 3, 3, 3]
    idle = series.msg_rate_ratio(frame([(1.0, "b1", 1, 1, 0, 0, 0, 0), (1.0, "b2", 1, 1, 0, 0, 0, 0)]))
    assert col(idle, "msg_rate_ratio") == [1.0]  # every broker idle: balanced


def test_throughput_ratio():
    out = series.throughput_ratio(frame(ROWS[:3]))
    # t1: b1=100, b2=100; t2: b1=400, b2=100.
    assert col(out, "throughput_ratio") == [1.0, 4.0]


def test_stale_after_drops_brokers_whose_latest_report_is_too_old():
    out = series.score_spread(frame(ROWS), stale_after=1.5)
    # t3: b2 (t=1) is stale, b3 NaN: only b1 -> 0. t4: b1 (t=2) stale: only b2=inf -> inf-inf is NaN.
    # t5: b1=5 and b2=inf (age 1).
    assert col(out, "score_spread") == [20.0, 10.0, 0.0, None, INF]
    assert list(out["brokers"]) == [2, 2, 1, 1, 2]


def test_same_time_reports_of_one_broker_use_the_last_in_canonical_order_and_input_order_does_not_matter():
    rows = [(1.0, "b1", 2, 40.0, 1, 1, 1, 1), (1.0, "b1", 1, 10.0, 1, 1, 1, 1), (1.0, "b2", 1, 0.0, 1, 1, 1, 1)]
    out = series.score_spread(frame(rows))
    assert col(out, "score_spread") == [40.0]
    shuffled = frame(ROWS).sample(frac=1.0, random_state=3)
    pd.testing.assert_frame_equal(series.score_spread(shuffled), series.score_spread(frame(ROWS)))


def test_latest_values_wide_table():
    wide = series.latest_values(frame(ROWS), "score")
    assert list(wide.columns) == ["b1", "b2", "b3"] and list(wide.index) == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert wide.loc[3.0, "b1"] == 20.0 and math.isnan(wide.loc[1.0, "b3"]) and wide.loc[5.0, "b2"] == INF
    custom = series.spread(frame(ROWS), lambda df: df["msg_rate_in"] * 2, name="x")
    assert list(custom.columns) == ["t", "x", "brokers"] and col(custom, "x")[0] == 10.0


def test_empty_input_gives_an_empty_series_with_the_columns():
    for fn, name in ((series.score_spread, "score_spread"), (series.msg_rate_ratio, "msg_rate_ratio")):
        out = fn(frame([]))
        assert out.empty and list(out.columns) == ["t", name, "brokers"]


def test_a_whole_trace_frame_is_filtered_to_load_reports_and_matches_the_trace_frame(tmp_path):
    events = [(0.0, "b1", "agent_started", {"agent_kind": "broker"})]
    for t, agent, _seq, score, ri, ro, ti, to in ROWS:
        events.append((t, agent, "load_report", {"score": score, "msg_rate_in": ri, "msg_rate_out": ro,
                                                 "msg_throughput_in": ti, "msg_throughput_out": to}))
    run = write_run(tmp_path / "r", events)
    whole = run.to_pandas()
    assert "agent_started" in set(whole["kind"])
    expected = series.score_spread(frame(ROWS))
    pd.testing.assert_frame_equal(series.score_spread(whole), expected)
    pd.testing.assert_frame_equal(series.score_spread(Trace(run).frame("load_report")), expected)


def test_usable_per_group_as_spark_applyInPandas_would_call_it():
    df = pd.concat([frame(ROWS).assign(run="a"), frame(ROWS[:2]).assign(run="b")])
    parts = []
    for run, group in df.groupby("run"):
        parts.append(series.score_spread(group).assign(run=run))
    out = pd.concat(parts, ignore_index=True)
    assert list(out[out.run == "b"]["score_spread"]) == [20.0]
    assert set(series.SCHEMAS) == {"score_spread", "msg_rate_ratio", "throughput_ratio"}
    for name, ddl in series.SCHEMAS.items():
        assert [c.split()[0] for c in ddl.split(", ")] == ["t", name, "brokers"]
    assert out["brokers"].dtype == np.int64
