"""Storm's figures, panels and rating on a hand-made trace whose answers are worked out by hand (docs/analysis.md,
*Storm figures*): first each part without Spark (its rows built from the run directory as the decoder builds
them), then the whole analysis in the Spark job, beside a real run of ``storm-eviction-2x``.

The run (``until`` 100 s, settle window 60 s, Storm 1.x rules, pools: alice 400 % CPU / 1024 MB):

* A (alice, priority 10) submitted at 5, fully scheduled at the round at 10 → 5 s;
* B (bob, 20) submitted at 8, not placed at 10, scheduled at 20 → 12 s;
* C (carol, 0) submitted at 25, scheduled at 30 after evicting B (one rolled-back attempt first) and A; A is
  back at 40, B at 50; C is removed at 75;
* supervisor-2 is deemed dead at 60 (silent 22 s): A loses 2 executors, is partly placed, fully again at 70;
* D (bob) submitted at 85, never scheduled (censored wait 15 s).
"""
from __future__ import annotations

import dataclasses
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from clusteremu.emulator import systems
from clusteremu.emulator.trace import open_run
from clusteremu.emulator.trace.query import Trace
from clusteremu.tools.analysis import ANALYSIS_DIR, AnalysisOptions, analyze, write_analysis
from clusteremu.tools.analysis.common import empty_rows
from clusteremu.tools.analysis.encoding import jsonable
from clusteremu.tools.analysis.model import Part, PartResult, RunParams
from clusteremu.tools.analysis.storm import SCHEMA, StormFigures
from clusteremu.tools.analysis.storm_parts import eviction_figures, status_class
from clusteremu.tools.analysis.storm_rating import RATING, strategy_label
from clusteremu.tools.analysis.runs import open_run_info
from clusteremu.tools.compare import Group, Rating, RunSummary, comparison, group_runs, load_summaries

NIMBUS = "nimbus-1"
EVICTION = "org.apache.storm.scheduler.resource.strategies.eviction.DefaultEvictionStrategy"
SCENARIO = {
    "strategy": {"scheduling": "DefaultResourceAwareStrategy", "priority": "DefaultSchedulingPriorityStrategy", "eviction": EVICTION},
    "config": {"resource.aware.scheduler.user.pools": {"alice": {"cpu": 400, "memory": 1024}}},
}
ROUND_TIMES = (10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 90.0)
CPU_USED = (200.0, 300.0, 300.0, 500.0, 600.0, 500.0, 500.0, 400.0)
FRAGMENTED_CPU = (0.0, 0.0, 0.0, 100.0, 200.0, 0.0, 0.0, 0.0)
#: the model's stranded CPU (free on nodes where no pending executor fits)
STRANDED_CPU = (0.0, 0.0, 150.0, 0.0, 200.0, 0.0, 0.0, 0.0)
SLOTS_USED = (1, 2, 2, 3, 4, 3, 3, 3)
TOPOLOGIES = {"A": ("alice", 10, 200.0, 512.0), "B": ("bob", 20, 100.0, 512.0), "C": ("carol", 0, 100.0, 256.0), "D": ("bob", 20, 100.0, 256.0)}
NO_ROOM = "Not enough resources to schedule - 0/3 executors scheduled"
AFTER_EVICTING = "Not enough resources to schedule after evicting lower priority topologies. Additional Memory Required: 896.0 MB"
#: Per round: topology → its status ("" = fully scheduled).
STATES = (
    {"A": "", "B": NO_ROOM},
    {"A": "", "B": ""},
    {"A": AFTER_EVICTING, "B": AFTER_EVICTING, "C": ""},
    {"A": "", "B": AFTER_EVICTING, "C": ""},
    {"A": "", "B": "", "C": ""},
    {"A": NO_ROOM, "B": "", "C": ""},
    {"A": "", "B": "", "C": ""},
    {"A": "", "B": "", "D": NO_ROOM},
)


def _changed(b: Any, t: float, rnd: int, topo: str, reason: str, executors: int, after: int, *, lost: int = 0,
             pairs: int = 0, worker: int = 0, node: int = 0, rack: int = 0) -> None:
    user = TOPOLOGIES[topo][0]
    b.event(t, NIMBUS, "assignment_changed", round=rnd, topology=topo, topology_name=topo, user=user, reason=reason,
            executors=executors, assigned_before=0, assigned_after=after, workers_before=0, workers_after=1, lost=lost,
            moved=0, workers=[], pairs=pairs, same_worker=worker, same_node=node, same_rack=rack)


def storm_run(b: Any) -> Any:
    """Write the run's events into the :class:`TraceBuilder` ``b`` (returned)."""
    b.event(0.0, NIMBUS, "nimbus_leader_elected", previous="")
    for topo, t in (("A", 5.0), ("B", 8.0)):
        user, prio, _cpu, _mem = TOPOLOGIES[topo]
        b.event(t, NIMBUS, "topology_submitted", topology=topo, topology_name=topo, user=user, priority=prio)
    b.event(5.1, "user-alice", "topology_request", op="submit", topology_name="A", attempt=1, nimbus=NIMBUS, result="ok", topology="A")
    b.event(12.0, "supervisor-1", "worker_launched", topology="A", port=6700, executors=4, cpu=200.0, memory_mb=512.0)
    for i, t in enumerate(ROUND_TIMES):
        rnd = i + 1
        if t == 30.0:
            b.event(25.0, NIMBUS, "topology_submitted", topology="C", topology_name="C", user="carol", priority=0)
            for victim, rolled in (("B", True), ("B", False), ("A", False)):
                user, prio, _c, _m = TOPOLOGIES[victim]
                b.event(t, NIMBUS, "topology_evicted", round=rnd, topology=victim, topology_name=victim, user=user, priority=prio,
                        by="C", by_name="C", by_user="carol", by_priority=0, rolled_back=rolled)
        if t == 60.0:
            b.event(t, NIMBUS, "supervisor_dead", supervisor="supervisor-2", cause="node_deleted", silent_s=22.0,
                    hosted=["A"], hosted_executors=2)
        if t == 90.0:
            b.event(75.0, NIMBUS, "topology_removed", topology="C", topology_name="C", user="carol")
            b.event(85.0, NIMBUS, "topology_submitted", topology="D", topology_name="D", user="bob", priority=20)
        cpu = CPU_USED[i]
        b.event(t, NIMBUS, "scheduling_round", round=rnd, generation="1.x", rebalance="", priority_strategy="P", order=[],
                topologies=len(STATES[i]), topologies_fully_scheduled=0, evictions=0, evictions_rolled_back=0,
                assignments_changed=1 if t in (10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0) else 0, supervisors=2,
                cpu_total=800.0, cpu_used=cpu, memory_total_mb=8000.0, memory_used_mb=4 * cpu, slots_total=8,
                slots_used=SLOTS_USED[i], generic_total={}, generic_used={}, nodes=[["supervisor-1", "/r", 400.0]],
                fragmented_cpu=FRAGMENTED_CPU[i], fragmented_memory_mb=4 * FRAGMENTED_CPU[i],
                stranded_cpu=STRANDED_CPU[i], stranded_memory_mb=4 * STRANDED_CPU[i])
        if t == 10.0:
            _changed(b, t, rnd, "A", "scheduled", 4, 4, pairs=8, worker=4, node=8, rack=8)
        elif t == 20.0:
            _changed(b, t, rnd, "B", "scheduled", 3, 3, pairs=2, worker=0, node=1, rack=2)
        elif t == 30.0:
            _changed(b, t, rnd, "A", "evicted", 4, 0)
            _changed(b, t, rnd, "B", "evicted", 3, 0)
            _changed(b, t, rnd, "C", "scheduled", 2, 2)  # no connected pair: not measured
        elif t == 40.0:
            _changed(b, t, rnd, "A", "scheduled", 4, 4, pairs=8, worker=4, node=8, rack=8)
        elif t == 50.0:
            _changed(b, t, rnd, "B", "scheduled", 3, 3, pairs=2, worker=0, node=1, rack=2)
        elif t == 60.0:
            _changed(b, t, rnd, "A", "supervisor_lost", 4, 2, lost=2, pairs=2, worker=2, node=2, rack=2)
        elif t == 70.0:
            _changed(b, t, rnd, "A", "changed", 4, 4, pairs=8, worker=8, node=8, rack=8)
        for topo, status in STATES[i].items():
            user, prio, req_cpu, req_mem = TOPOLOGIES[topo]
            full = status == ""
            b.event(t, NIMBUS, "topology_round", round=rnd, topology=topo, topology_name=topo, user=user, priority=prio, rank=0,
                    status="Running - Fully Scheduled by DefaultResourceAwareStrategy" if full else status,
                    fully_scheduled=full, executors=4, assigned_executors=4 if full else 0, worker_count=1 if full else 0,
                    cpu=req_cpu if full else 0.0, memory_mb=req_mem if full else 0.0, requested_cpu=req_cpu,
                    requested_memory_mb=req_mem, strategy="DefaultResourceAwareStrategy", evicted=False)
    b.event(31.0, "supervisor-1", "worker_killed", topology="A", port=6700, reason="unassigned")
    return b


def part_rows(run_dir: Path, part: Part) -> pd.DataFrame:
    """The rows ``part`` receives in the Spark job: its kinds' events in canonical order, its columns, a field of
    another kind (or one the schema does not read) null."""
    cols = [c for c in part.columns if c not in ("t", "agent", "seq", "kind")]
    recs = []
    for e in open_run(run_dir).events():
        if e.kind in part.kinds:
            read = SCHEMA.kinds.get(e.kind, {})
            recs.append({"t": e.t, "agent": e.agent, "seq": e.seq, "kind": e.kind,
                         **{c: e.fields.get(c) if c in read else None for c in cols}})
    return pd.DataFrame(recs, columns=["t", "agent", "seq", "kind", *cols])


# -- the parts, without Spark --------------------------------------------------------------------------------------
UNTIL = 100.0
WINDOW_START = 40.0  # settle window of 60 s


@pytest.fixture
def hand_run(trace) -> Path:
    return storm_run(trace("storm", name="storm-hand", model="storm", until=UNTIL, scenario=SCENARIO)).write()


def compute(run_dir: Path, name: str) -> PartResult:
    """Part ``name`` of :class:`StormFigures` on the run, as an executor computes it."""
    (part,) = [p for p in StormFigures().parts() if p.name == name]
    params = RunParams("storm", UNTIL, WINDOW_START, {"settle_window_s": UNTIL - WINDOW_START}, SCENARIO)
    return part.compute(part_rows(run_dir, part), params)


def test_time_to_schedule_counts_from_submission_to_the_first_round_that_left_the_topology_fully_scheduled(hand_run):
    res = compute(hand_run, "schedule")
    s, f = res.figures["schedule"], res.figures["failures"]
    assert (s["topologies"], s["scheduled"], s["never_scheduled"], s["never_scheduled_list"]) == (4, 3, 1, ["D"])
    assert s["time_s"]["count"] == 3 and s["time_s"]["mean"] == pytest.approx((5 + 12 + 5) / 3)
    assert s["time_s"]["p50"] == pytest.approx(5.0) and s["time_s"]["max"] == pytest.approx(12.0)
    # D waits from 85 to the end (100): 15 s, a lower bound counted in the mean wait.
    assert s["wait_s_mean"] == pytest.approx((5 + 12 + 5 + 15) / 4)
    topologies = res.tables["topologies"].set_index("topology")
    assert topologies.loc["C", "removed_s"] == 75.0 and math.isnan(topologies.loc["D", "scheduled_s"])
    # 22 topology-rounds; B at 10, A and B at 30, B at 40, A at 60, D at 90 left their topology pending.
    assert (f["topology_rounds"], f["topology_rounds_total"], f["topologies"]) == (6, 22, 3)
    assert f["share_pct"] == pytest.approx(600 / 22)
    assert f["by_status"] == {"Not enough resources to schedule": 3, "Not enough resources to schedule after evicting lower priority topologies": 3}
    assert (f["rounds_with_topologies"], f["rounds_with_pending"], f["window_rounds_with_pending"]) == (8, 5, 3)
    series = res.tables["topology_series"]
    assert series["t"].tolist() == list(ROUND_TIMES)
    assert series["pending"].tolist() == [1, 0, 2, 1, 0, 1, 0, 1] and series["running"].tolist() == [1, 2, 1, 2, 3, 2, 3, 2]


def test_cluster_use_and_stranded_capacity_are_step_series_over_the_rounds(hand_run):
    res = compute(hand_run, "cluster")
    c, usage = res.figures["cluster"], res.tables["cluster_usage"]
    pct = [100 * u / 800 for u in CPU_USED]
    assert usage["cpu_used_pct"].tolist() == pytest.approx(pct)
    assert usage["memory_used_pct"].tolist() == pytest.approx([100 * 4 * u / 8000 for u in CPU_USED])
    assert usage["slots_used_pct"].tolist() == pytest.approx([100 * s / 8 for s in SLOTS_USED])
    # Stranded: Nimbus's fragmented CPU over the free CPU (300 free at 40, 200 at 50).
    assert usage["stranded_cpu_pct"].tolist() == pytest.approx([0, 0, 0, 100 / 3, 100, 0, 0, 0])
    # the model's own figure: free CPU 800 - used, of which STRANDED_CPU is where no pending executor fits
    assert usage["pending_stranded_cpu"].tolist() == list(STRANDED_CPU)
    assert usage["pending_stranded_cpu_pct"].tolist() == pytest.approx([0, 0, 30, 0, 100, 0, 0, 0])
    held = [10, 10, 10, 10, 10, 10, 20, 10]  # each value holds until the next round, the last one until 100
    assert c["cpu_used_pct"]["run"]["mean"] == pytest.approx(sum(p * h for p, h in zip(pct, held)) / 90)
    assert c["cpu_used_pct"]["run"]["max"] == 75.0 and c["cpu_used_pct"]["run"]["final"] == 50.0
    assert c["cpu_used_pct"]["window"]["mean"] == pytest.approx(sum(p * h for p, h in zip(pct[3:], held[3:])) / 60)
    assert c["stranded_cpu_pct"]["run"]["max"] == 100.0 and c["stranded_cpu_pct"]["run"]["mean"] == pytest.approx((100 / 3 + 100) * 10 / 90)
    assert (c["rounds"], c["generation"], c["rounds_changing_assignments"], c["rebalance_rounds"]) == (8, "1.x", 7, 0)


def test_evictions_per_user_and_priority_and_the_victims_use_of_their_guarantee(hand_run):
    res = compute(hand_run, "evictions")
    e = res.figures["evictions"]
    assert (e["count"], e["rolled_back"], e["rounds"], e["window"], e["own_user"]) == (2, 1, 1, 0, 0)
    assert e["by_user"] == {"alice": 1, "bob": 1} and e["by_priority"] == {"10": 1, "20": 1}
    assert e["by_evicting_user"] == {"carol": 2}
    # A is fully scheduled again at 40, B at 50 (evicted at 30).
    assert e["restore_s"]["count"] == 2 and e["restore_s"]["mean"] == pytest.approx(15.0) and e["unrestored"] == 0
    g = e["guarantee"]
    assert g["generation"] == "1.x" and g["pools"] == {"alice": {"cpu": 400.0, "memory_mb": 1024.0}}
    # alice ran A (200 % CPU, 512 MB) before the round: half her guarantee; bob has no pool (infinite use).
    assert (g["within_guarantee"], g["within_guarantee_other_user"]) == (1, 1)
    assert g["list"] == [{"t": 30.0, "topology": "A", "user": "alice", "by_user": "carol", "utilization": 0.5}]
    table = res.tables["evictions"].set_index("topology")
    assert math.isinf(table.loc["B", "utilization"]) and not table.loc["B", "within_guarantee"]


def test_an_earlier_eviction_of_the_same_round_no_longer_counts_in_its_users_use():
    rows = pd.DataFrame(
        [(10.0, NIMBUS, 1, "topology_round", 1, "X", "u", 5, True, None, None, None, None, 300.0, 800.0),
         (10.0, NIMBUS, 2, "topology_round", 1, "Y", "u", 6, True, None, None, None, None, 300.0, 800.0),
         (20.0, NIMBUS, 3, "topology_evicted", 2, "Y", "u", 6, None, "Z", "v", 0, False, None, None),
         (20.0, NIMBUS, 4, "topology_evicted", 2, "X", "u", 5, None, "Z", "v", 0, False, None, None)],
        columns=["t", "agent", "seq", "kind", "round", "topology", "user", "priority", "fully_scheduled", "by", "by_user",
                 "by_priority", "rolled_back", "requested_cpu", "requested_memory_mb"])
    pools = {"config": {"resource.aware.scheduler.user.pools": {"u": {"cpu": 400, "memory": 1000}}}}
    figures, tables = eviction_figures(rows, scenario=pools, window_start=0.0)
    # Y: u uses 600/400 CPU and 1600/1000 memory (over); X: only its own 300/400 and 800/1000 are left (within).
    assert tables["evictions"]["utilization"].tolist() == pytest.approx([(1.5 + 1.6) / 2, (0.75 + 0.8) / 2])
    assert figures["evictions"]["guarantee"]["within_guarantee"] == 1 and figures["evictions"]["unrestored"] == 2


def test_a_dead_supervisors_executors_are_rescheduled_when_its_topologies_are_fully_scheduled_again(hand_run):
    s = compute(hand_run, "supervisors").figures["supervisors"]
    assert (s["dead"], s["with_executors"], s["lost_executors"], s["unrescheduled"]) == (1, 1, 2, 0)
    assert s["by_cause"] == {"node_deleted": 1}
    assert s["reschedule_s"]["max"] == pytest.approx(10.0)  # dead at 60, A fully scheduled at 70
    assert s["outage_s"]["max"] == pytest.approx(32.0) and s["detect_s"]["max"] == pytest.approx(22.0)
    assert s["list"][0]["supervisor"] == "supervisor-2" and s["list"][0]["rescheduled_s"] == 70.0


def test_network_metric_reads_each_topologys_latest_full_placement(hand_run):
    res = compute(hand_run, "network")
    n, table = res.figures["network"], res.tables["network"]
    # Full placements: A at 10, 40, 70; B at 20, 50; C at 30 (no pair). A's partial one at 60 does not count.
    assert (n["placements"], n["topologies"], n["pairs"]) == (6, 2, 10)
    assert table["topology"].tolist() == ["B", "A"] and table["t"].tolist() == [50.0, 70.0]
    assert n["same_worker"]["cdf"] == [0.0, 100.0] and n["same_worker"]["mean"] == 50.0
    assert n["same_node"]["cdf"] == [50.0, 100.0] and n["same_node"]["mean"] == 75.0 and n["same_node"]["min"] == 50.0
    assert n["same_node"]["pooled"] == pytest.approx(90.0) and n["same_rack"]["mean"] == 100.0


def test_nimbus_leadership(hand_run):
    assert compute(hand_run, "nimbus").figures["nimbus"] == {"elections": 1, "changes": 0, "vacancies": 0, "leaderless_s": 0.0}


def test_status_class_drops_the_numbers():
    assert status_class(NO_ROOM) == "Not enough resources to schedule"
    assert status_class(AFTER_EVICTING) == "Not enough resources to schedule after evicting lower priority topologies"
    assert status_class("Fully Scheduled (3 states traversed)") == "Fully Scheduled" and status_class(None) == "(none)"


def test_markers_and_panels(hand_run):
    figures = StormFigures()
    part = Part("markers", figures.marker_kinds, ("t", "agent", "seq", "kind", *{c for k in figures.marker_kinds for c in SCHEMA.kinds[k]}), lambda r, p: PartResult())
    marks = figures.marker_rows(part_rows(hand_run, part))
    assert [(m[0], m[2]) for m in marks] == [(0.0, "leader"), (30.0, "eviction"), (30.0, "eviction"), (60.0, "supervisor_dead")]
    tables = {}
    for name in ("schedule", "cluster", "evictions", "network"):
        tables.update(compute(hand_run, name).tables)
    panels = {p.name: p for p in figures.panels(tables, {})}
    assert list(panels) == ["topologies", "cluster_use", "stranded", "evictions", "network", "network_cdf"]
    t, v = panels["evictions"].series["alice"]
    assert t.tolist() == [0.0, 30.0] and v.tolist() == [0.0, 1.0]
    cdf = panels["network_cdf"]
    assert cdf.x_label and set(cdf.series) == {"same worker", "same node", "same rack"}
    for x, y in cdf.series.values():
        assert y[0] == 0.0 and y[-1] == 100.0 and (np.diff(x) >= 0).all() and (np.diff(y) > 0).all()
    assert figures.panels({}, {}) == []


# -- the rating ----------------------------------------------------------------------------------------------------
def _summary(name: str, **figures: Any) -> RunSummary:
    return RunSummary(Path(name), {"run": {"model": "storm", "scenario": name}, "figures": figures}, {})


def test_rating_pools_the_topologies_of_a_groups_runs():
    a = _summary("a", schedule={"topologies": 4, "wait_s_mean": 9.25}, failures={"topology_rounds": 6, "topology_rounds_total": 22},
                 evictions={"count": 2, "guarantee": {"pools": {"alice": {}}, "within_guarantee_other_user": 1}},
                 network={"topologies": 2, "same_node": {"mean": 75.0}})
    b = _summary("b", schedule={"topologies": 1, "wait_s_mean": 100.0}, failures={"topology_rounds": 0, "topology_rounds_total": 8},
                 evictions={"count": 0, "guarantee": {"pools": {}, "within_guarantee_other_user": 5}},
                 network={"topologies": 0, "same_node": {"mean": None}})
    (row,) = RATING.rate([Group("s", [a, b])])
    c = row["criteria"]
    assert c["time_to_schedule"]["figure"] == pytest.approx((4 * 9.25 + 100) / 5) and c["time_to_schedule"]["grade"] == "fair"
    assert c["failures"]["figure"] == pytest.approx(600 / 30) and c["failures"]["grade"] == "poor"
    assert c["evictions"]["figure"] == pytest.approx(40.0) and c["evictions"]["grade"] == "fair"
    assert c["guarantee"]["figure"] == 1.0 and c["guarantee"]["grade"] == "poor"  # b has no pools: not counted
    assert c["network"]["figure"] == 75.0 and c["network"]["grade"] == "good"
    assert list(RATING.criteria()) == list(c) and isinstance(RATING, Rating)
    (empty,) = RATING.rate([Group("none", [])])
    assert empty == {"strategy": "none", "criteria": {}}


def test_strategy_label_is_the_scheduling_and_priority_class_names():
    assert strategy_label({}) == "DefaultResourceAwareStrategy+DefaultSchedulingPriorityStrategy"
    assert strategy_label({"config": {"resource.aware.scheduler.priority.strategy":
                                      "org.apache.storm.scheduler.resource.strategies.priority.FIFOSchedulingPriorityStrategy"}}) \
        == "DefaultResourceAwareStrategy+FIFOSchedulingPriorityStrategy"
    assert strategy_label({"strategy": {"scheduling": "RoundRobinResourceAwareStrategy", "priority": None}}) \
        == "RoundRobinResourceAwareStrategy+DefaultSchedulingPriorityStrategy"
    assert strategy_label(SCENARIO) == "DefaultResourceAwareStrategy+DefaultSchedulingPriorityStrategy+DefaultEvictionStrategy"


# -- the Spark job, end to end -------------------------------------------------------------------------------------
FIGURES_TARGET = "clusteremu.tools.analysis.storm:StormFigures"
RATING_TARGET = "clusteremu.tools.analysis.storm_rating:RATING"


@pytest.fixture(scope="module")
def analysed(spark, tmp_path_factory, trace_builder):
    """The hand-made run and a real ``storm-eviction-2x`` run analysed in one Spark job (settle window 60 s) with
    the Storm system pointing at these figures and this rating, then compared."""
    base = tmp_path_factory.mktemp("storm")
    hand = storm_run(trace_builder(base / "hand", name="storm-hand", model="storm", until=UNTIL, scenario=SCENARIO)).write()
    real = base / "real"
    subprocess.run([sys.executable, "-m", "clusteremu", "run", "storm-eviction-2x", "--out", str(real), "--quiet"],
                   check=True, capture_output=True, timeout=300)
    original = systems.system("storm")
    systems.register(dataclasses.replace(original, figures=FIGURES_TARGET, rating=RATING_TARGET))
    try:
        infos = [open_run_info(i, d) for i, d in enumerate((hand, real))]
        analyses = analyze(spark, infos, AnalysisOptions(settle_window_s=UNTIL - WINDOW_START))
        for a, d in zip(analyses, (hand, real)):
            write_analysis(a, d / ANALYSIS_DIR)
        summaries = load_summaries([hand, real], analyze_missing=False)
        result = comparison(group_runs(summaries, "strategy"), "strategy")
    finally:
        systems.register(original)
    return hand, real, analyses, result


@pytest.mark.spark
def test_the_spark_job_gives_the_parts_figures_and_the_tallys(analysed):
    hand, _real, (a, _b), result = analysed
    s = a.summary
    assert s["partial"] is False and s["problems"] == []
    assert s["run"]["strategy"] == strategy_label(SCENARIO)
    f = s["figures"]
    for name in ("schedule", "cluster", "evictions", "supervisors", "network", "nimbus"):
        expected = jsonable(compute(hand, name).figures)
        assert {k: f[k] for k in expected} == expected, name
    assert f["assignments"] == {"changes": 9, "by_reason": {"changed": 1, "evicted": 2, "scheduled": 5, "supervisor_lost": 1}}
    assert f["workers"] == {"launched": 1, "killed": 1, "killed_by_reason": {"unassigned": 1}}
    assert f["requests"] == {"count": 1, "by_result": {"submit:ok": 1}}
    out = hand / ANALYSIS_DIR
    for table in ("topologies", "topology_series", "cluster_usage", "evictions", "network", "supervisor_usage"):
        assert (out / f"{table}.parquet").exists()
    images = re.findall(r'<img src="plots/([^"]+)\.png"', (out / "report.html").read_text())
    assert images == ["topologies", "cluster_use", "stranded", "supervisor_cpu", "supervisor_memory", "evictions",
                      "network", "network_cdf"]
    (row,) = [r for r in result["rows"] if r["strategy"] == strategy_label(SCENARIO)]
    assert row["criteria"]["time_to_schedule"]["figure"] == pytest.approx(9.25) and row["criteria"]["guarantee"]["grade"] == "poor"


@pytest.mark.spark
def test_a_real_runs_figures_agree_with_its_trace(analysed):
    _hand, real, (_a, b), result = analysed
    assert b.summary["partial"] is False and b.summary["problems"] == []  # every field read decodes as declared
    f, tr = b.summary["figures"], Trace(real)
    rounds = tr.select("topology_round")
    evicted = tr.select("topology_evicted")
    assert f["schedule"]["topologies"] == tr.count("topology_submitted")
    assert f["failures"]["topology_rounds_total"] == len(rounds)
    assert f["failures"]["topology_rounds"] == sum(1 for e in rounds if not e.fully_scheduled)
    assert f["cluster"]["rounds"] == tr.count("scheduling_round") and f["cluster"]["generation"] == "2.x"
    assert f["evictions"]["count"] == sum(1 for e in evicted if not e.rolled_back)
    assert f["assignments"]["changes"] == tr.count("assignment_changed")
    # The scenario's expectation: batch topologies evicted by prod come back once its topology is removed.
    assert f["evictions"]["count"] > 0 and f["evictions"]["unrestored"] == 0 and f["schedule"]["never_scheduled"] == 0
    (row,) = [r for r in result["rows"] if r["strategy"] == "DefaultResourceAwareStrategy+DefaultSchedulingPriorityStrategy"]
    assert set(row["criteria"]) == set(RATING.criteria())


def test_every_part_gives_its_figures_on_no_rows():
    # The Spark job computes a part on no rows for a run without any of its kinds (a run that crashed early).
    params = RunParams("storm", 50.0, 0.0, {"settle_window_s": 600.0}, {})
    out = {}
    for part in StormFigures().parts():
        res = part.compute(empty_rows(part, SCHEMA), params)
        out.update(res.figures)
        assert all(t.empty for t in res.tables.values()), part.name
    assert out["schedule"]["topologies"] == 0 and out["schedule"]["time_s"]["mean"] is None
    assert out["failures"]["rounds_with_pending"] == 0 and out["cluster"]["rounds"] == 0
    assert out["evictions"]["count"] == 0 and out["evictions"]["guarantee"]["generation"] == "2.x"
    assert out["supervisors"]["dead"] == 0 and out["network"]["topologies"] == 0 and out["nimbus"]["elections"] == 0
