"""RocketMQ's figures, panels and rating on a hand-made trace whose answers are worked out by hand (docs/analysis.md,
*RocketMQ figures*): first each part without Spark, then the whole analysis in the Spark job beside real runs.

The hand-made run (``until`` 100 s, one broker ``broker-a`` with queues ``T/broker-a/0`` and ``/1`` at 10 msg/s):

* start-up: the queues at 0, consumer-1 starts at 1 and takes both → orphan 0–1 on each (2 queue-s), stable at 1;
* consumer-2 starts at 50 (a change), takes queue 1 at 51, consumer-1 drops it at 52 → overlap 51–52 (1 s),
  stable 2 s after the change, one queue moved;
* consumer-2 crashes at 70 (a change), consumer-1 takes queue 1 at 75 → orphan 70–75 (5 s), stable after 5 s;
* lag (``queue_stats``): queue 0 −1 at 5 (nothing committed), 20 at 60, 10 at 72; queue 1 40 at 60, 30 at 72;
* consumed: consumer-1 [0, 300) of queue 0 and [100, 150) of queue 1, consumer-2 [120, 200) of queue 1 → 30
  consumed twice; 7 POP messages revived on queue 0.
"""
from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pandas as pd
import pytest

from clusteremu.cli import main
from clusteremu.emulator import systems
from clusteremu.emulator.testing import assert_eventually, assert_never
from clusteremu.emulator.trace.query import Trace
from clusteremu.tools.analysis import ANALYSIS_DIR, AnalysisOptions, analyze, declared_options, write_analysis
from clusteremu.tools.analysis.common import empty_rows
from clusteremu.tools.analysis.encoding import jsonable
from clusteremu.tools.analysis.model import PartResult, RunParams
from clusteremu.tools.analysis.rocketmq import SCHEMA, RocketMQFigures, consumer_lag_panel, part_rows, run_figures
from clusteremu.tools.analysis.rocketmq_rating import RATING, strategy_label
from clusteremu.tools.analysis.runs import open_run_info
from clusteremu.tools.compare import Group, Rating, RunSummary, comparison, group_runs, load_summaries
from clusteremu.tools.report import MAX_LINES

UNTIL = 100.0
WINDOW_START = 40.0  # settle window of 60 s
Q0, Q1 = "T/broker-a/0", "T/broker-a/1"
SCENARIO = {"strategy": {"allocateMessageQueueStrategy": "AllocateMessageQueueAveragely"}}


def rocketmq_run(b: Any) -> Any:
    """Write the hand-made run's events into the :class:`TraceBuilder` ``b`` (returned)."""
    b.event(0.0, "broker-a", "queues_created", broker="broker-a", subscription="T", queues=2, rate_per_queue=10.0, room="")
    b.event(1.0, "consumer-1", "consumer_started", cid="c1", group="g", room="", incarnation=1,
            strategy="AVG", rebalance="client", orderly=False)
    for q in (Q0, Q1):
        b.event(1.0, "consumer-1", "queue_taken", queue=q, cid="c1", offset=0.0, offset_source="last", mode="PULL")
    b.event(5.0, "broker-a", "queue_stats", group="g", queue=Q0, max_offset=10.0, committed=-1.0, lag=-1.0)
    b.event(50.0, "consumer-1", "consume_progress", queue=Q1, cid="c1", mode="PULL", ranges=[[100.0, 150.0]],
            consumed=50.0, offset=150.0, max_offset=160.0, lag=10.0, reason="interval")
    b.event(50.0, "consumer-2", "consumer_started", cid="c2", group="g", room="", incarnation=1,
            strategy="AVG", rebalance="client", orderly=False)
    b.event(51.0, "consumer-2", "queue_taken", queue=Q1, cid="c2", offset=120.0, offset_source="committed", mode="PULL")
    b.event(52.0, "consumer-1", "queue_dropped", queue=Q1, cid="c1", offset=150.0, reason="rebalance", mode="PULL", held_s=51.0)
    b.event(55.0, "consumer-2", "consume_progress", queue=Q1, cid="c2", mode="PULL", ranges=[[120.0, 200.0]],
            consumed=80.0, offset=200.0, max_offset=210.0, lag=10.0, reason="interval")
    b.event(60.0, "broker-a", "queue_stats", group="g", queue=Q0, max_offset=600.0, committed=580.0, lag=20.0)
    b.event(60.0, "broker-a", "queue_stats", group="g", queue=Q1, max_offset=600.0, committed=560.0, lag=40.0)
    b.event(60.0, "consumer-1", "consume_progress", queue=Q0, cid="c1", mode="PULL", ranges=[[0.0, 300.0]],
            consumed=300.0, offset=300.0, max_offset=320.0, lag=20.0, reason="interval")
    b.event(65.0, "broker-a", "pop_revived", group="g", queue=Q0, cid="c1", from_offset=10.0, messages=7.0)
    b.event(70.0, "consumer-2", "agent_stopped", reason="crash")
    b.event(72.0, "broker-a", "queue_stats", group="g", queue=Q0, max_offset=720.0, committed=710.0, lag=10.0)
    b.event(72.0, "broker-a", "queue_stats", group="g", queue=Q1, max_offset=720.0, committed=690.0, lag=30.0)
    b.event(75.0, "consumer-1", "queue_taken", queue=Q1, cid="c1", offset=690.0, offset_source="committed", mode="PULL")
    return b


@pytest.fixture
def hand_run(trace) -> Path:
    return rocketmq_run(trace("rocketmq", name="rocketmq-hand", model="rocketmq", until=UNTIL, scenario=SCENARIO)).write()


def compute(run_dir: Path, name: str, **options: float) -> PartResult:
    """Part ``name`` of :class:`RocketMQFigures` on the run, as an executor computes it."""
    (part,) = [p for p in RocketMQFigures().parts() if p.name == name]
    params = RunParams("rocketmq", UNTIL, WINDOW_START, {"settle_window_s": UNTIL - WINDOW_START, "change_merge_s": 15.0, **options}, SCENARIO)
    return part.compute(part_rows(run_dir, part), params)


# -- the parts, without Spark --------------------------------------------------------------------------------------
def test_overlap_and_orphan_windows_per_queue_and_in_total(hand_run):
    res = compute(hand_run, "allocation")
    f = res.figures
    assert f["overlap"] == {"seconds": 1.0, "after_start_s": 1.0, "window_s": 1.0, "windows": 1, "queues": 1, "longest_s": 1.0}
    # The start-up orphans (0–1 on both queues) are not "after the start-up" (its stable allocation, at 1).
    assert f["orphan"] == {"seconds": 7.0, "after_start_s": 5.0, "window_s": 5.0, "windows": 3, "queues": 2, "longest_s": 5.0}
    assert f["queues"]["after_start_s"] == 1.0
    pq = f["queues"]["per_queue"]
    assert (pq[Q0]["overlap_s"], pq[Q0]["orphan_s"], pq[Q1]["overlap_s"], pq[Q1]["orphan_s"]) == (0.0, 1.0, 1.0, 6.0)
    assert (pq[Q0]["takes"], pq[Q1]["takes"]) == (1, 3)
    w = res.tables["allocation_windows"]
    assert w[["queue", "kind", "start", "end"]].values.tolist() == [
        [Q1, "overlap", 51.0, 52.0], [Q0, "orphan", 0.0, 1.0], [Q1, "orphan", 0.0, 1.0], [Q1, "orphan", 70.0, 75.0]]


def test_each_membership_change_until_a_stable_allocation(hand_run):
    f = compute(hand_run, "allocation").figures["changes"]
    startup, join, crash = f["list"]
    assert startup["startup"] and startup["time_to_stable_s"] == 1.0 and startup["events"].startswith("broker-a queues created")
    assert (join["start"], join["time_to_stable_s"], join["takes"], join["net_moved"]) == (50.0, 2.0, 1, 1)
    assert (crash["start"], crash["time_to_stable_s"], crash["takes"], crash["net_moved"], crash["events"]) == \
        (70.0, 5.0, 1, 1, "consumer-2 stopped (crash)")
    assert (f["count"], f["stable"], f["never_stable"], f["wait_s_mean"]) == (2, 2, 0, 3.5)
    assert f["time_to_stable_s"]["max"] == 5.0 and f["net_moved_pct_mean"] == 50.0
    # Merged into one change when a crash follows within the merge time, the join never became stable before it.
    merged = compute(hand_run, "allocation", change_merge_s=25.0).figures["changes"]
    assert merged["count"] == 1 and merged["list"][1]["time_to_stable_s"] == 25.0


def test_skew_counts_queues_per_live_consumer(hand_run):
    f = compute(hand_run, "allocation").figures["skew"]
    assert f["final"] == {"consumers": 1, "queues": 2, "min": 2, "max": 2, "skew": 1.0, "excess": 0}
    assert f["stable"]["max"] == 1.0  # consumer-1 and -2 one queue each after the join


def test_lag_per_queue_in_total_and_shared_among_holders(hand_run):
    res = compute(hand_run, "allocation")
    lag = res.figures["lag"]
    assert (lag["samples"], lag["uncommitted"], lag["max"], lag["max_s"]) == (5, 1, 40.0, 4.0)
    assert lag["p99"] == pytest.approx(30.0 + 0.97 * 10.0)  # of 10, 20, 30, 40
    assert lag["total"]["max"] == 60.0 and lag["total"]["run"]["final"] == 40.0 and lag["orphan_max"] == 30.0
    assert lag["by_consumer"] == {"consumer-1": 20.0, "consumer-2": 40.0}
    cl = res.tables["consumer_lag"]
    # consumer-2 is gone at 72: its queue's lag is the orphans' then.
    assert cl[cl["t"] == 72.0][["consumer", "lag"]].values.tolist() == [["consumer-1", 10.0]]
    assert res.tables["lag_total"]["orphan_lag"].tolist() == [0.0, 0.0, 30.0]


def test_messages_consumed_twice(hand_run):
    d = compute(hand_run, "consumption").figures["duplicates"]
    # Revived POP messages are reported beside the duplicates, not counted in them: none of them was consumed.
    assert (d["messages"], d["pop_redelivered"], d["total"], d["consumed"]) == (30.0, 7.0, 30.0, 430.0)
    assert d["by_queue"] == {Q1: 30.0} and d["by_mode"] == {"PULL": 30.0}
    assert d["share_pct"] == pytest.approx(100 * 30 / 430)


def test_pop_messages_consumed_twice_are_counted_exactly_from_the_ranges(trace):
    # consumer-1 popped [0, 40) of queue 0 and [0, 10) of queue 1, did not ack [30, 40) in time; the broker revived
    # it and consumer-2 consumed [30, 60) of queue 0: 10 consumed twice. Queue 1's two ranges only touch: none.
    b = trace("rocketmq", name="rocketmq-pop-hand", model="rocketmq", until=UNTIL, scenario=SCENARIO)
    b.event(0.0, "broker-a", "queues_created", broker="broker-a", subscription="T", queues=2, rate_per_queue=10.0, room="")
    for t, c, q, ranges in ((5.0, "consumer-1", Q0, [[0.0, 20.0], [20.0, 40.0]]), (5.0, "consumer-1", Q1, [[0.0, 10.0]]),
                            (70.0, "consumer-2", Q0, [[30.0, 60.0]]), (70.0, "consumer-2", Q1, [[10.0, 25.0]])):
        b.event(t, c, "consume_progress", queue=q, cid=c, mode="POP", ranges=ranges,
                consumed=sum(y - x for x, y in ranges), offset=-1.0, max_offset=-1.0, lag=-1.0, reason="interval")
    b.event(65.0, "broker-a", "pop_revived", group="g", queue=Q0, cid="c1", from_offset=30.0, messages=10.0)
    d = compute(b.write(), "consumption").figures["duplicates"]
    assert (d["messages"], d["total"], d["consumed"], d["pop_redelivered"]) == (10.0, 10.0, 95.0, 10.0)
    assert d["by_queue"] == {Q0: 10.0} and d["by_mode"] == {"POP": 10.0}


def test_every_part_gives_its_figures_on_no_rows():
    # The Spark job computes a part on no rows for a run without any of its kinds (a run that crashed early).
    params = RunParams("rocketmq", 50.0, 0.0, {"settle_window_s": 600.0, "change_merge_s": 15.0}, {})
    out = {}
    for part in RocketMQFigures().parts():
        res = part.compute(empty_rows(part, SCHEMA), params)
        out.update(res.figures)
        assert all(t.empty for t in res.tables.values()), part.name
    assert out["overlap"]["seconds"] == 0.0 and out["changes"]["count"] == 0 and out["lag"]["max"] is None
    assert out["duplicates"]["total"] == 0.0 and out["skew"]["final"]["skew"] is None


def test_panels_show_ownership_and_the_lag_distribution_above_twenty_consumers(hand_run):
    res = compute(hand_run, "allocation")
    panels = RocketMQFigures().panels(res.tables, {})
    assert [p.name for p in panels] == ["queue_ownership", "allocation_windows", "consumer_lag", "lag_total"]
    own = panels[0]  # queue × time coloured by owner, overlap and orphan windows marked over them
    assert own.style == "spans" and own.rows == [Q0, Q1]
    assert {c for _q, _a, _b, c in own.spans} == {"consumer-1", "consumer-2"}
    assert [(q, a, b) for q, a, b, c in own.spans if c == "consumer-2"] == [(Q1, 51.0, 70.0)]
    assert sorted(own.marks) == sorted([(Q1, 51.0, 52.0, "overlap"), (Q0, 0.0, 1.0, "orphan"), (Q1, 0.0, 1.0, "orphan"),
                                        (Q1, 70.0, 75.0, "orphan")])
    many = pd.DataFrame({"t": [10.0] * (MAX_LINES + 5), "consumer": [f"consumer-{i}" for i in range(MAX_LINES + 5)],
                         "lag": [float(i) for i in range(MAX_LINES + 5)]})
    p = consumer_lag_panel({"consumer_lag": many})
    assert list(p.series) == ["min", "median", "max", "top: consumer-24", "top: consumer-23", "top: consumer-22"]
    assert p.series["median"][1].tolist() == [12.0]


# -- the rating --------------------------------------------------------------------------------------------------------
def _summary(name: str, end: float, **figures: Any) -> RunSummary:
    return RunSummary(Path(name), {"run": {"model": "rocketmq", "scenario": name, "end_s": end}, "figures": figures}, {})


def test_rating_pools_a_groups_runs():
    assert isinstance(RATING, Rating)
    a = _summary("a", 3600.0 + 10.0, queues={"after_start_s": 10.0}, overlap={"after_start_s": 2.0}, orphan={"after_start_s": 0.5},
                 duplicates={"total": 10.0, "consumed": 1.0e5}, changes={"count": 1, "wait_s_mean": 3.0, "net_moved_pct_mean": 50.0},
                 lag={"p99_s": 4.0}, skew={"final": {"excess": 0}})
    b = _summary("b", 3600.0 + 10.0, queues={"after_start_s": 10.0}, overlap={"after_start_s": 0.0}, orphan={"after_start_s": 200.0},
                 duplicates={"total": 0.0, "consumed": 1.0e5}, changes={"count": 3, "wait_s_mean": 123.0, "net_moved_pct_mean": 10.0},
                 lag={"p99_s": 100.0}, skew={"final": {"excess": 3}})
    (row,) = RATING.rate([Group("x", [a, b])])
    c = row["criteria"]
    assert c["overlap"]["figure"] == 1.0 and c["overlap"]["grade"] == "fair"  # 2 queue-s over 2 hours
    assert c["orphan"]["figure"] == pytest.approx(100.25) and c["orphan"]["grade"] == "poor"
    assert c["duplicates"]["figure"] == pytest.approx(0.005) and c["duplicates"]["grade"] == "good"
    assert c["time_to_stable"]["figure"] == pytest.approx((3.0 + 3 * 123.0) / 4) and c["time_to_stable"]["grade"] == "poor"
    assert c["moves"]["figure"] == pytest.approx(20.0) and c["lag"]["figure"] == 52.0 and c["skew"]["grade"] == "poor"
    assert list(c) == list(RATING.criteria())


def test_strategy_label_is_the_allocation_strategys_class_name_plus_pop():
    assert strategy_label({}) == "AllocateMessageQueueAveragely"
    assert strategy_label({"strategy": {"allocateMessageQueueStrategy":
                                        "org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueConsistentHash"}}) \
        == "AllocateMessageQueueConsistentHash"
    pop = {"strategy": {"client_version": "5"}, "config": {"clientRebalance": False, "defaultMessageRequestMode": "POP"}}
    assert strategy_label(pop) == "AllocateMessageQueueAveragely+POP"
    assert strategy_label({**pop, "config": {"clientRebalance": False}}) == "AllocateMessageQueueAveragely+broker"
    assert strategy_label({"strategy": {"listener": "orderly"}}) == "AllocateMessageQueueAveragely+orderly"


# -- as a user writes it: the model's claims, on real runs ---------------------------------------------------------------
def test_no_overlap_under_pop(emulate):
    run = emulate("rocketmq-pop-scale-out", until=400)
    # With the kernel's assertions: every queue taken is a POP assignment, and nothing is redelivered ...
    assert_never(run, "queue_taken", where=lambda e: e.mode != "POP")
    assert_never(run, "pop_revived")
    # ... and with the figures: no queue-second with two holders, nothing consumed twice, no orphan once started.
    f = run_figures(run.dir)
    assert f["overlap"]["seconds"] == 0.0 and f["duplicates"]["total"] == 0.0 and f["orphan"]["after_start_s"] == 0.0
    assert f["holds"]["by_mode"] == {"POP": 16}


def test_stable_within_seconds_of_a_scale_out(emulate):
    run = emulate("rocketmq-scale-out-averagely", until=400)
    # Every consumer started by the scale-out is followed within 3 s by a balanced rebalance of its own ...
    assert_eventually(run, "rebalance_result", after=lambda e: e.kind == "consumer_started" and e.t > 300, within=3.0,
                      same_entity=True, where=lambda e: e.balanced)
    # ... and the allocation as a whole is stable within 3 s of the scale-out, 2 of the 16 queues each.
    (change,) = [c for c in run_figures(run.dir)["changes"]["list"] if not c["startup"]]
    assert change["stable"] and change["time_to_stable_s"] <= 3.0
    assert (change["consumers"], change["queues"], change["skew"]) == (8, 16, 1.0)


# -- registered as the lead will register them -------------------------------------------------------------------------
FIGURES_TARGET = "clusteremu.tools.analysis.rocketmq:RocketMQFigures"
RATING_TARGET = "clusteremu.tools.analysis.rocketmq_rating:RATING"


@contextmanager
def registered() -> Iterator[None]:
    """The built-in ``rocketmq`` system pointing at these figures and this rating, the original again after."""
    original = systems.system("rocketmq")
    systems.register(dataclasses.replace(original, figures=FIGURES_TARGET, rating=RATING_TARGET))
    try:
        yield
    finally:
        systems.register(original)


def test_the_option_is_a_flag_of_analyze_compare_and_sweep(capsys):
    with registered():
        assert "change_merge_s" in [o.name for o in declared_options()]
        with pytest.raises(SystemExit):
            main(["compare", "--help"])
        assert "--change-merge-s S" in capsys.readouterr().out
        assert AnalysisOptions(change_merge_s=30).resolved(RocketMQFigures.options) == {"settle_window_s": 600.0, "change_merge_s": 30.0}


# -- the Spark job, end to end -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def analysed(spark, tmp_path_factory, trace_builder):
    """The hand-made run and real ``rocketmq-scale-out-averagely`` and ``rocketmq-pop-scale-out`` runs (400 s)
    analysed in one Spark job with the RocketMQ system pointing at these figures and this rating, then compared."""
    base = tmp_path_factory.mktemp("rocketmq")
    hand = rocketmq_run(trace_builder(base / "hand", name="rocketmq-hand", model="rocketmq", until=UNTIL, scenario=SCENARIO)).write()
    reals = []
    for name in ("rocketmq-scale-out-averagely", "rocketmq-pop-scale-out"):
        reals.append(base / name)
        subprocess.run([sys.executable, "-m", "clusteremu", "run", name, "--out", str(reals[-1]), "--until", "400", "--quiet"],
                       check=True, capture_output=True, timeout=300)
    # the first one again with its unchanged timer rebalances counted, not written (analysed, not compared)
    counted = base / "counted"
    subprocess.run([sys.executable, "-m", "clusteremu", "run", reals[0].name, "--out", str(counted), "--until", "400",
                    "--set", "workload.trace_unchanged_rebalances=false", "--quiet"],
                   check=True, capture_output=True, timeout=300)
    dirs = [hand, *reals]
    with registered():
        infos = [open_run_info(i, d) for i, d in enumerate([*dirs, counted])]
        analyses = analyze(spark, infos, AnalysisOptions(settle_window_s=UNTIL - WINDOW_START))
        for a, d in zip(analyses, [*dirs, counted]):
            write_analysis(a, d / ANALYSIS_DIR)
        summaries = load_summaries(dirs, analyze_missing=False)
        result = comparison(group_runs(summaries, "strategy"), "strategy")
    return dirs, analyses, result


@pytest.mark.spark
def test_the_spark_job_gives_the_parts_figures_and_a_ranking(analysed):
    (hand, avg, pop), (a, b, c, counted), result = analysed
    s = a.summary
    assert s["partial"] is False and s["problems"] == []
    assert s["run"]["strategy"] == "AllocateMessageQueueAveragely" and s["options"]["change_merge_s"] == 15.0
    f = s["figures"]
    for name in ("allocation", "consumption"):
        expected = jsonable(compute(hand, name).figures)
        assert {k: f[k] for k in expected if k != "queues"} == {k: v for k, v in expected.items() if k != "queues"}, name
    assert f["queues"]["per_queue"][Q1]["duplicates"] == 30.0 and f["drops_by_reason"] == {"rebalance": 1}
    out = hand / ANALYSIS_DIR
    for table in ("holdings", "allocation_windows", "queue_figures", "changes", "consumer_lag", "lag_total"):
        assert (out / f"{table}.parquet").exists()
    images = re.findall(r'<img src="plots/([^"]+)\.png"', (out / "report.html").read_text())
    assert images == ["queue_ownership", "allocation_windows", "consumer_lag", "lag_total"]
    # The real runs: every field read decodes as declared, and the figures agree with the model's own views.
    for analysis, run_dir in ((b, avg), (c, pop)):
        assert analysis.summary["partial"] is False and analysis.summary["problems"] == []
        g, views = analysis.summary["figures"], Trace(run_dir).views
        assert g["overlap"]["seconds"] == pytest.approx(views.overlap_seconds(), abs=1e-9)
        assert g["orphan"]["seconds"] == pytest.approx(views.orphan_seconds(), abs=1e-9)
        assert g["lag"]["max"] == pytest.approx(views.max_lag())
    assert b.summary["figures"]["duplicates"]["messages"] == pytest.approx(Trace(avg).views.duplicates_total())
    # Timer rebalances counted instead of written are the same figures; the events read are fewer.
    g, h = b.summary["figures"], counted.summary["figures"]
    assert g["rebalances"]["by_trigger"]["timer:unchanged"] > 10
    assert h["rebalances"] == g["rebalances"] and h["overlap"] == g["overlap"] and h["lag"] == g["lag"]
    assert h["events"]["total"] < g["events"]["total"]
    rows = {r["strategy"]: r["criteria"] for r in result["rows"]}
    assert rows["AllocateMessageQueueAveragely+POP"]["overlap"]["grade"] == "good"
    assert rows["AllocateMessageQueueAveragely+POP"]["duplicates"]["figure"] == 0.0
    assert set(rows["AllocateMessageQueueAveragely"]) == set(RATING.criteria())
