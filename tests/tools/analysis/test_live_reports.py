"""A broker that stopped (crash or scale-in) stops counting in the spread panels and in over-unloading."""
from __future__ import annotations

import math

import pandas as pd

from clusteremu.tools.analysis import load_balance
from clusteremu.tools.analysis.pulsar import live_reports


def rows() -> pd.DataFrame:
    def report(t, agent, score, seq):
        return {"t": t, "agent": agent, "seq": seq, "kind": "load_report", "score": score, "msg_rate_in": 10.0,
                "msg_rate_out": 10.0, "msg_throughput_in": 1.0, "msg_throughput_out": 1.0, "reason": ""}

    return pd.DataFrame([
        report(0.0, "broker-1", 20.0, 1), report(0.0, "broker-2", 50.0, 1), report(0.0, "broker-3", 90.0, 1),
        {"t": 100.0, "agent": "broker-3", "seq": 2, "kind": "agent_stopped", "reason": "scale_in"},
        {"t": 100.0, "agent": "client-1", "seq": 5, "kind": "agent_stopped", "reason": "fault"},
        report(200.0, "broker-1", 30.0, 2),
    ])


def test_a_stopped_broker_leaves_the_spread_until_it_reports_again():
    reports = live_reports(rows())
    assert set(reports["agent"]) == {"broker-1", "broker-2", "broker-3"}  # clients write no reports
    series = load_balance.cluster_series(reports).set_index("t")
    assert series.loc[0.0, "score_spread"] == 70.0 and series.loc[0.0, "brokers"] == 3
    assert series.loc[100.0, "score_spread"] == 30.0 and series.loc[100.0, "brokers"] == 2
    assert series.loc[200.0, "score_spread"] == 20.0


def test_without_stops_the_reports_are_unchanged():
    r = rows()
    r = r[r["kind"] != "agent_stopped"]
    out = live_reports(r)
    assert len(out) == 4 and not any(math.isnan(v) for v in out["score"])
