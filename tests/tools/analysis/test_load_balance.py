"""The time-following load-balancing figures on small frames whose answers are worked out by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from clusteremu.tools.analysis import load_balance as lb
from clusteremu.tools.analysis.model import absent_reasons


def reports(rows):
    """(t, broker, score[, msg_rate]) → load-report frame."""
    out = []
    for i, r in enumerate(rows):
        t, broker, score = r[:3]
        rate = r[3] if len(r) > 3 else 1000.0
        out.append({"t": float(t), "agent": broker, "seq": i + 1, "kind": "load_report", "score": score,
                    "msg_rate_in": rate / 2, "msg_rate_out": rate / 2, "msg_throughput_in": 5e5, "msg_throughput_out": 5e5})
    return pd.DataFrame(out)


def test_settle_time_is_the_last_unload_or_the_return_under_the_threshold():
    t = np.array([10.0, 70.0, 130.0, 190.0])
    spread = np.array([40.0, 30.0, 10.0, 12.0])
    # Quiet after the unload at 100, balanced from 130: settled from 130, observed long enough.
    assert lb.settle_time(t, spread, np.array([50.0, 100.0]), end=800.0, window=600.0, threshold=15.0) == 130.0
    # An unload after the spread settled moves it.
    assert lb.settle_time(t, spread, np.array([150.0]), end=800.0, window=600.0, threshold=15.0) == 150.0
    # Not observed for a whole window before the end.
    assert lb.settle_time(t, spread, np.array([150.0]), end=700.0, window=600.0, threshold=15.0) is None
    # Spread back over the threshold at the end: never settled.
    assert lb.settle_time(t, np.array([10.0, 10.0, 10.0, 20.0]), np.array([]), end=900.0, window=600.0, threshold=15.0) is None
    # Infinite and NaN spreads are not settled either.
    assert lb.settle_time(t, np.array([10.0, np.inf, 10.0, 10.0]), np.array([]), end=900.0, window=60.0, threshold=15.0) == 130.0
    assert lb.settle_time(t, np.array([10.0, 10.0, np.nan, 10.0]), np.array([]), end=900.0, window=60.0, threshold=15.0) == 190.0
    # Without a threshold only unloads count; with no unload the cluster was quiet from 0.
    assert lb.settle_time(t, None, np.array([]), end=900.0, window=600.0, threshold=None) == 0.0


def test_cluster_series_uses_each_brokers_latest_report():
    df = reports([(0, "b1", 80.0, 1000.0), (0, "b2", 20.0, 500.0), (60, "b1", 50.0, 1000.0), (90, "b2", 45.0, 250.0)])
    s = lb.cluster_series(df)
    assert list(s["t"]) == [0.0, 60.0, 90.0]
    assert list(s["score_spread"]) == [60.0, 30.0, 5.0]
    assert list(s["msg_rate_ratio"]) == [2.0, 2.0, 4.0]
    assert list(s["throughput_ratio"]) == [1.0, 1.0, 1.0]
    assert list(s["brokers"]) == [2, 2, 2]
    figs = lb.series_figures(s, end=120.0, window_start=60.0)
    assert figs["score_spread"]["run"] == {"mean": pytest.approx((60 * 60 + 30 * 30 + 5 * 30) / 120), "max": 60.0, "final": 5.0}
    assert figs["score_spread"]["window"] == {"mean": pytest.approx((30 * 30 + 5 * 30) / 60), "max": 30.0}


def test_over_unloading_needs_a_high_broker_that_ends_up_strictly_lowest():
    df = reports(
        [(0, "b1", 80), (0, "b2", 20), (0, "b3", 50), (100, "b1", 80), (200, "b1", 10), (200, "b2", 50), (200, "b3", 50),
         (400, "b2", 60), (500, "b2", 60), (600, "b2", 55)]
    )
    unloads = pd.DataFrame({"t": [110.0, 120.0, 500.0], "agent": ["b1", "b1", "b2"]})
    out = lb.over_unloading(df, unloads, gap_s=300.0, after_s=180.0, end=1000.0)
    assert (out["rounds"], out["determined"], out["events"], out["share_pct"]) == (2, 2, 1, 50.0)
    first, second = out["rounds_detail"]
    assert first["broker"] == "b1" and first["unloads"] == 2 and first["over_unloaded"] is True
    assert first["score_before"] == 80 and first["others_mean_before"] == 35.0 and first["score_after"] == 10
    # b2 at 60 above the others' mean before; at 680 it is 55 against 10 and 50: not the least loaded.
    assert second["broker"] == "b2" and second["over_unloaded"] is False
    assert out["by_broker"] == {"b1": 1}
    # A round judged after the end of the run, or with no report after it, is undetermined.
    late = lb.over_unloading(df, pd.DataFrame({"t": [900.0], "agent": ["b3"]}), gap_s=300.0, after_s=180.0, end=1000.0)
    assert (late["rounds"], late["undetermined"], late["share_pct"]) == (1, 1, None)
    assert absent_reasons(dict(late)) == {"share_pct": "no shedding round could be judged"}


def test_a_tie_for_least_loaded_is_balance_not_over_unloading():
    df = reports([(0, "b1", 80), (0, "b2", 20), (200, "b1", 20)])
    out = lb.over_unloading(df, pd.DataFrame({"t": [100.0], "agent": ["b1"]}), gap_s=300.0, after_s=180.0, end=1000.0)
    assert out["events"] == 0 and out["determined"] == 1


def test_rounds_split_at_gaps():
    unloads = pd.DataFrame({"t": [10.0, 100.0, 500.0, 20.0], "agent": ["b1", "b1", "b1", "b2"]})
    r = lb.shedding_rounds(unloads, 300.0)
    assert r.to_dict("records") == [
        {"broker": "b1", "start_s": 10.0, "end_s": 100.0, "unloads": 2},
        {"broker": "b2", "start_s": 20.0, "end_s": 20.0, "unloads": 1},
        {"broker": "b1", "start_s": 500.0, "end_s": 500.0, "unloads": 1},
    ]


def test_over_loading_counts_placements_of_shed_bundles_above_the_average():
    rows = [
        # (t, agent, kind, bundle, reason, broker, above_average)
        (5, "leader", "bundle_placed", "y", None, "b1", True),  # first placement: not after shedding
        (10, "leader", "unload_decided", "x1", "overloaded", None, None),
        (10.5, "b1", "bundle_unloaded", "x1", "shedding", None, None),
        (11, "leader", "bundle_placed", "x1", None, "b3", False),
        (20.5, "b1", "bundle_unloaded", "x2", "shedding", None, None),
        (21, "leader", "bundle_placed", "x2", None, "b1", True),  # over-loading
        (30, "b2", "bundle_unloaded", "x3", "shutdown", None, None),
        (31, "leader", "bundle_placed", "x3", None, "b2", True),  # after a shutdown, not shedding
        (40, "leader", "unload_decided", "x4", "overloaded", None, None),
        (40, "leader", "bundle_placed", "x4", None, "b2", True),  # AvgShedder: placed at decision time
        (40.5, "b1", "bundle_unloaded", "x4", "shedding", None, None),
    ]
    df = pd.DataFrame(rows, columns=["t", "agent", "kind", "bundle", "reason", "broker", "above_average"])
    df["seq"] = range(1, len(df) + 1)
    out = lb.over_loading(df, window_start=35.0)
    assert out == {"placements": 5, "placements_above_average": 4, "after_shedding": 3, "events": 2,
                   "share_pct": pytest.approx(200 / 3), "window_events": 1, "by_broker": {"b1": 1, "b2": 1}}


def test_leadership_counts_changes_and_time_without_a_leader():
    df = pd.DataFrame(
        [(0, "b1", 1, "leader_elected", ""), (100, "store", 1, "leader_vacant", "b1"), (112, "b2", 1, "leader_elected", "b1"),
         (300, "b2", 2, "leader_elected", "b2"), (400, "store", 2, "leader_vacant", "b2")],
        columns=["t", "agent", "seq", "kind", "previous"],
    )
    assert lb.leadership(df, end=450.0) == {"elections": 3, "changes": 1, "vacancies": 2, "leaderless_s": 62.0}
