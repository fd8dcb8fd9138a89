"""Every Pulsar summary figure on hand-made traces whose answers are worked out by hand (docs/analysis.md).

Three runs, analysed together in one Spark job as ``clusteremu analyze`` does: ``shedding`` (three brokers, one
over-unloading round, one over-loading placement, a leader change, lookups and unavailability), ``infinite``
(load reports with an infinite and a NaN value, no unloads) and ``calm`` (balanced, nothing happens).
"""
from __future__ import annotations

import math

import pytest

from clusteremu.tools.analysis import AnalysisOptions, analyze
from clusteremu.tools.analysis.runs import open_run_info

pytestmark = pytest.mark.spark

STRATEGY = {"strategy": {"shedding": "org.apache.pulsar.broker.loadbalance.impl.ThresholdShedder",
                         "placement": "org.apache.pulsar.broker.loadbalance.impl.LeastResourceUsageWithWeight"}}


def shedding_run(b):
    for k in range(30):
        t = 10.0 + 60 * k
        if t < 600:
            scores = {"b1": 80.0, "b2": 20.0, "b3": 50.0}
        elif t < 900:
            scores = {"b1": 10.0, "b2": 50.0, "b3": 50.0}
        else:
            scores = {"b1": 45.0, "b2": 50.0, "b3": 52.0}
        rates = {"b1": 1000.0, "b2": 500.0, "b3": 1000.0}
        for broker, score in scores.items():
            b.load_report(t, broker, score, msg_rate=rates[broker])
    b.event(0.0, "b1", "leader_elected", previous="")
    b.event(5.0, "b1", "bundle_placed", bundle="y1", broker="b1", strategy="LRUW", random_fallback=False,
            scores={"b1": 80.0, "b2": 20.0, "b3": 50.0})
    placed = {500.0: ("x1", "b3", False), 520.0: ("x2", "b2", True), 540.0: ("x3", "b1", False)}
    for t, (bundle, dest, rnd) in placed.items():
        b.event(t - 1, "b1", "unload_decided", bundle=bundle, source="b1", destination="", reason="overloaded")
        b.event(t, "b1", "bundle_unloaded", bundle=bundle, destination="", reason="shedding", topics=2)
        b.event(t + 1, "b1", "bundle_placed", bundle=bundle, broker=dest, strategy="LRUW", random_fallback=rnd,
                scores={"b1": 80.0, "b2": 20.0, "b3": 50.0})
    b.event(950.0, "b3", "bundle_unloaded", bundle="x4", destination="", reason="shedding", topics=2)
    b.event(951.0, "b1", "bundle_placed", bundle="x4", broker="b1", strategy="LRUW", random_fallback=False,
            scores={"b1": 45.0, "b2": 50.0, "b3": 52.0})
    b.event(1000.0, "metadata-store", "leader_vacant", previous="b1")
    b.event(1010.0, "b2", "leader_elected", previous="b1")
    b.event(1.0, "client-1", "topic_connected", topic="t1", broker="b1", hops=1, unavailable_s=0.0)
    b.event(1.5, "client-1", "topic_connected", topic="t2", broker="b2", hops=1, unavailable_s=0.0)
    b.event(500.5, "client-1", "topic_disconnected", topic="t1", broker="b1", reason="unload")
    b.event(502.3, "client-1", "lookup_hop", topic="t1", hop=1, broker="b1", response="redirect", target="b3", authoritative=False)
    b.event(502.4, "client-1", "lookup_hop", topic="t1", hop=2, broker="b3", response="connect", target="b3", authoritative=True)
    b.event(502.5, "client-1", "topic_connected", topic="t1", broker="b3", hops=2, unavailable_s=2.0)
    b.event(1300.0, "client-1", "topic_disconnected", topic="t2", broker="b2", reason="timeout")
    b.event(1303.9, "client-1", "lookup_hop", topic="t2", hop=1, broker="b2", response="connect", target="b2", authoritative=True)
    b.event(1304.0, "client-1", "topic_connected", topic="t2", broker="b2", hops=1, unavailable_s=4.0)
    b.event(300.0, "b2", "stw_pause", duration_s=1.0, cause="gc-young")
    b.event(1500.0, "b2", "stw_pause", duration_s=3.0, cause="gc-full")
    b.event(1400.0, "faults", "fault_begin", fault="pause", index=0, label="scripted")
    b.event(1403.0, "faults", "fault_end", fault="pause", index=0, label="scripted")
    return b.write(writers=3, segment_bytes=4096)


def infinite_run(b):
    for k in range(20):
        t = 10.0 + 60 * k
        cpu2 = math.inf if t == 310.0 else 40.0
        b.load_report(t, "b1", 50.0, **({"memory": math.nan} if t == 370.0 else {}))
        b.load_report(t, "b2", cpu2, cpu=cpu2)
    return b.write()


def calm_run(b):
    for k in range(20):
        for broker in ("b1", "b2"):
            b.load_report(10.0 + 60 * k, broker, 40.0)
    return b.write()


@pytest.fixture(scope="module")
def summaries(spark, tmp_path_factory, trace_builder):
    root = tmp_path_factory.mktemp("pulsar")
    dirs = [
        shedding_run(trace_builder(root / "shedding", name="shedding", until=1800.0, scenario=STRATEGY)),
        infinite_run(trace_builder(root / "infinite", name="infinite", until=1200.0)),
        calm_run(trace_builder(root / "calm", name="calm", until=1200.0)),
    ]
    infos = [open_run_info(i, d) for i, d in enumerate(dirs)]
    results = analyze(spark, infos, AnalysisOptions(settle_window_s=600.0, settle_spread=15.0))
    return {r.info.name: r for r in results}


def test_run_block_and_events(summaries):
    s = summaries["shedding"].summary
    assert s["run"]["strategy"] == "ThresholdShedder+LeastResourceUsageWithWeight"
    assert s["run"]["end_s"] == 1800.0 and s["window"] == {"start_s": 1200.0, "end_s": 1800.0}
    assert not s["partial"] and s["problems"] == []
    assert s["run"]["events_read"] == s["run"]["events_recorded"] == s["figures"]["events"]["total"]
    assert s["figures"]["events"]["by_kind"]["load_report"] == 90


def test_unloads_settle_and_panels(summaries):
    f = summaries["shedding"].summary["figures"]
    assert f["unloads"]["total"] == 4 and f["unloads"]["by_broker"] == {"b1": 3, "b3": 1}
    assert f["unloads"]["window"] == 0 and f["unloads"]["decisions"] == 3
    # Last unload at 950; spread 7 from the report at 910 on: settled at 950 (950 + 600 <= 1800).
    assert f["settle"] == {"time_s": 950.0, "quiet_time_s": 950.0, "settled": True, "unloads_before": 4,
                           "window_s": 600.0, "spread_threshold": 15.0}
    spread = f["score_spread"]
    # 60 over [10, 610), 40 over [610, 910), 7 over [910, 1800]
    assert spread["run"]["mean"] == pytest.approx((60 * 600 + 40 * 300 + 7 * 890) / 1790)
    assert spread["run"]["max"] == 60.0 and spread["run"]["final"] == 7.0
    assert spread["window"] == {"mean": 7.0, "max": 7.0}
    assert f["msg_rate_ratio"]["window"] == {"mean": 2.0, "max": 2.0}
    assert f["throughput_ratio"]["run"]["max"] == 1.0


def test_over_loading_and_over_unloading(summaries):
    f = summaries["shedding"].summary["figures"]
    ol = f["over_loading"]
    assert (ol["placements"], ol["placements_above_average"], ol["after_shedding"], ol["events"]) == (5, 2, 4, 1)
    assert ol["share_pct"] == 25.0 and ol["by_broker"] == {"b1": 1}
    ou = f["over_unloading"]
    assert (ou["rounds"], ou["determined"], ou["events"], ou["share_pct"], ou["by_broker"]) == (2, 2, 1, 50.0, {"b1": 1})
    assert [r["over_unloaded"] for r in ou["rounds_detail"]] == [True, False]


def test_placements_lookups_unavailability_leader_gc_faults(summaries):
    f = summaries["shedding"].summary["figures"]
    assert f["random_fallbacks"] == {"count": 1, "placements": 5, "window": 0}
    lk = f["lookups"]
    assert (lk["count"], lk["hops"], lk["redirects"], lk["max_hop"], lk["mean_hops"]) == (2, 3, 1, 2, 1.5)
    un = f["unavailability"]
    assert (un["count"], un["p50"], un["p99"], un["max"], un["topics"]) == (2, 3.0, pytest.approx(3.98), 4.0, 2)
    assert un["unload"]["count"] == 1 and un["unload"]["max"] == 2.0
    assert un["by_cause"]["timeout"]["max"] == 4.0 and un["window"]["count"] == 1
    assert f["leader"] == {"elections": 2, "changes": 1, "vacancies": 1, "leaderless_s": 10.0}
    gc = f["gc_pauses"]
    assert (gc["count"], gc["total_s"], gc["max_s"], gc["p50_s"], gc["p99_s"]) == (2, 4.0, 3.0, 2.0, pytest.approx(2.98))
    assert gc["window"]["count"] == 1 and gc["by_cause"]["gc-full"]["max_s"] == 3.0
    assert f["faults"] == [{"index": 0, "fault": "pause", "label": "scripted", "start_s": 1400.0, "end_s": 1403.0}]
    assert f["load_reports"]["non_finite"] == 0


def test_tables(summaries):
    r = summaries["shedding"]
    load = r.tables["broker_load"]
    assert len(load) == 90 and set(load["broker"]) == {"b1", "b2", "b3"}
    assert (load["msg_rate"] == load["msg_rate_in"] + load["msg_rate_out"]).all()
    cluster = r.tables["cluster_series"]
    assert list(cluster.columns) == ["t", "score_spread", "msg_rate_ratio", "throughput_ratio", "brokers"] and len(cluster) == 30
    markers = r.tables["markers"]
    assert sorted(markers[markers["kind"] == "unload"]["t"]) == [500.0, 520.0, 540.0, 950.0]
    fault = markers[markers["kind"] == "fault"].iloc[0]
    assert (fault["t"], fault["end_t"]) == (1400.0, 1403.0)
    assert list(r.tables["gc_pauses"]["duration_s"]) == [1.0, 3.0]


def test_infinite_and_nan_load_reports(summaries):
    f = summaries["infinite"].summary["figures"]
    lr = f["load_reports"]
    assert (lr["count"], lr["non_finite"], lr["inf"], lr["nan"]) == (40, 2, 1, 1)
    assert lr["by_broker"] == {"b1": 1, "b2": 1} and lr["fields"] == {"cpu": 1, "memory": 1, "score": 1}
    assert lr["first_non_finite_s"] == 310.0 and lr["last_non_finite_s"] == 370.0
    assert f["score_spread"]["run"]["max"] == "inf"  # strict JSON spelling of an infinite figure
    # The spread returns to 10 at 370: settled from there (no unloads at all).
    assert f["settle"]["time_s"] == 370.0 and f["settle"]["quiet_time_s"] == 0.0
    assert f["unloads"]["total"] == 0 and f["over_unloading"]["rounds"] == 0


def test_a_run_without_unloads(summaries):
    f = summaries["calm"].summary["figures"]
    assert f["unloads"]["total"] == 0 and f["unloads"]["window_per_hour"] == 0.0
    assert f["settle"]["time_s"] == 10.0 and f["settle"]["unloads_before"] == 0
    assert f["score_spread"]["run"] == {"mean": 0.0, "max": 0.0, "final": 0.0}
    # Shares of nothing and a leadership the trace says nothing about are absent with the reason, not 0.
    absent = summaries["calm"].summary["absent"]
    assert f["over_loading"]["events"] == 0 and f["over_unloading"]["share_pct"] is None
    assert absent["over_unloading.share_pct"] == "no shedding round"
    assert absent["over_loading.share_pct"] == "no placement after shedding"
    assert f["unavailability"]["count"] == 0 and f["unavailability"]["p99"] is None
    assert absent["unavailability.p99"] == "no topic was unavailable and reconnected"
    assert f["leader"] == {"elections": 0, "changes": 0, "vacancies": 0, "leaderless_s": None}
    assert absent["leader.leaderless_s"] == "no leader election or vacancy in the trace"
    assert absent["lookups.mean_hops"] == "no lookup" and f["lookups"]["mean_hops"] is None
    assert "settle.time_s" not in absent and not summaries["calm"].summary["partial"]


def test_the_written_analysis_and_its_report(summaries, tmp_path):
    import json
    import re

    import matplotlib.image as mpimg
    import pandas as pd

    from clusteremu.tools.analysis import write_analysis

    out = write_analysis(summaries["shedding"], tmp_path / "analysis")
    assert json.loads((out / "summary.json").read_text()) == summaries["shedding"].summary
    assert len(pd.read_parquet(out / "broker_load.parquet")) == 90
    sources = re.findall(r'<img src="([^"]+)"', (out / "report.html").read_text())
    # This trace's scores are its CPU usages: one panel says so instead of two identical ones.
    assert {s.split("/")[-1] for s in sources} == {
        "score.png", "msg_rate.png", "throughput.png", "num_bundles.png", "topic_unavailability.png", "score_spread.png",
        "ratios.png", "gc_pauses.png", "gc_pause_lengths.png"}
    assert 'alt="Score per broker (weighted max resource usage) — same as: CPU usage per broker"' in (out / "report.html").read_text()
    for src in sources:
        assert mpimg.imread(out / src).shape[1] > 600
