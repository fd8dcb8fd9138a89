"""The AvgShedder article's figures beside the emulation (tools/analysis/pulsar_article.py): every row's figure on a
hand-made trace whose answer is worked out by hand, the verdicts, the rating's intervals over seeds, one short
fixed-seed run (the replayed ThresholdShedder history explains the first unload), and the generic entry point
(tools/compare.py ``article_tables``). No Spark."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clusteremu.emulator.runner import execute
from clusteremu.scenarios.loader import load_scenario
from clusteremu.tools import compare
from clusteremu.tools.analysis import pulsar_article as pa
from clusteremu.tools.compare import RunSummary

STRONG = {"machine": {"cores": 8.0}, "machines": {"broker-4": {"cores": 32.0}}}


class E:
    """An event as the kernel's reader yields it."""

    _seq = 0

    def __init__(self, t: float, agent: str, kind: str, **fields: Any) -> None:
        E._seq += 1
        self.t, self.agent, self.kind, self.seq, self.fields = t, agent, kind, E._seq, fields


def report(t: float, broker: str, score: float, rate: float = 100.0, bundles: int = 4) -> E:
    """A load report whose CPU is ``score`` % (the only resource in use) and whose msg rate (in + out) and
    throughput (in + out, 1 KiB messages) are ``rate``."""
    return E(t, broker, "load_report", cpu=score, memory=0.0, direct_memory=0.0, bandwidth_in=0.0, bandwidth_out=0.0,
             msg_rate_in=rate / 2, msg_rate_out=rate / 2, msg_throughput_in=rate * 512, msg_throughput_out=rate * 512,
             score=score, num_bundles=bundles, num_topics=10, reason="threshold")


def shed(t: float, source: str, bundle: str, dest: str = "", placed: E | None = None) -> list[E]:
    """A shedding decision (with the placement that chose ``dest`` just before it) and the owner's unload."""
    out = [placed] if placed is not None else []
    return out + [E(t, "broker-1", "unload_decided", bundle=bundle, source=source, destination=dest, reason="shedding"),
                  E(t + 0.01, source, "bundle_unloaded", bundle=bundle, destination=dest, reason="shedding", topics=3)]


def placed(t: float, bundle: str, broker: str, random: bool, scores: dict[str, float]) -> E:
    return E(t, "broker-1", "bundle_placed", bundle=bundle, broker=broker, strategy="LeastResourceUsageWithWeight",
             random_fallback=random, scores=scores)


def cycle(t: float, unloads: int, strategy: str = "ThresholdShedder") -> E:
    return E(t, "broker-1", "shedding_cycle", strategy=strategy, brokers=3, unloads=unloads, skipped="")


def run(name: str, events: list[E], *, end: float = 1800.0, faults: tuple = (), cluster: dict | None = None,
        seed: int = 1) -> pa.ArticleRun:
    scenario = {"scenario": {"name": name}, "config": {}, "cluster": cluster or {"machine": {"cores": 8.0}},
                "faults": [dict(f) for f in faults]}
    return pa.run_from_events(events, scenario, seed=seed, end=end)


# -- the hand-made runs, one per experiment ---------------------------------------------------------------------
def threshold_homogeneous() -> pa.ArticleRun:
    """3 brokers idle at t=5, loaded 60/30/30 % from t=65; cycles at 60, 120 and 180 s (the third acts)."""
    ev = [report(5, b, 0.0) for b in ("broker-1", "broker-2", "broker-3")]
    ev += [report(65, "broker-1", 60.0), report(65, "broker-2", 30.0), report(65, "broker-3", 30.0)]
    ev += [cycle(60, 0), cycle(120, 0), cycle(180, 1), cycle(240, 1), cycle(300, 1)]
    # a placement that picked the source itself (no decision follows) and a lookup-time placement: not counted
    ev += [placed(170, "x", "broker-1", True, {"broker-1": 60, "broker-2": 30, "broker-3": 30})]
    ev += shed(180, "broker-1", "x", "broker-2", placed(180, "x", "broker-2", True, {"broker-1": 60, "broker-2": 30, "broker-3": 30}))
    ev += [placed(180.2, "x", "broker-3", True, {"broker-1": 60, "broker-2": 30, "broker-3": 30})]
    ev += shed(240, "broker-1", "y", "broker-3", placed(240, "y", "broker-3", True, {"broker-1": 50, "broker-2": 40, "broker-3": 30}))
    ev += shed(300, "broker-2", "z", "broker-1", placed(300, "z", "broker-1", False, {"broker-1": 70, "broker-2": 40, "broker-3": 40}))
    return run("threshold-homogeneous", ev, end=2700)


def threshold_scale_in() -> pa.ArticleRun:
    """A round before the scale-in at 900 s (ignored), then broker-1 (2 unloads, left the least loaded),
    broker-2 (3 unloads, not) and broker-3 (1) — the last unload 25 min after the scale-in; broker-1 held 12
    bundles before the scale-in, 7 after."""
    ev = [report(100, "broker-1", 50, bundles=12), report(100, "broker-2", 50), report(100, "broker-3", 50)]
    ev += shed(600, "broker-3", "a")
    ev += [report(950, "broker-1", 80, bundles=7), report(950, "broker-2", 40), report(950, "broker-3", 40),
           report(901, "broker-4", 0, bundles=9), E(902, "broker-4", "agent_stopped", reason="scale_in")]
    # (the leaving broker's last report: not a survivor's, and out of every panel once it stopped)
    ev += shed(960, "broker-1", "b") + shed(1020, "broker-1", "c")
    ev += [report(1100, "broker-1", 20)]
    ev += [report(1450, "broker-2", 70), report(1450, "broker-1", 30), report(1450, "broker-3", 30)]
    ev += shed(1500, "broker-2", "d") + shed(1560, "broker-2", "e") + shed(1620, "broker-2", "f")
    ev += [report(1700, "broker-2", 50)]
    ev += shed(2400, "broker-3", "g")
    return run("threshold-scale-in", ev, end=3600, faults=({"kind": "scale_in", "at": 900.0, "agents": ["broker-4"]},))


def uniform_heterogeneous(name: str = "uniform-heterogeneous") -> pa.ArticleRun:
    """Msg rates 250/100/100/100 (max/min 2.5) until an unload at 120 s, then 120/100/110/100 (1.2); broker-4
    (32 cores) at score 10 against the others' 60."""
    ev = [report(60, "broker-1", 60, 250), report(60, "broker-2", 60, 100), report(60, "broker-3", 60, 100),
          report(60, "broker-4", 10, 100)]
    ev += shed(120, "broker-1", "a")
    ev += [report(130, "broker-1", 60, 120), report(130, "broker-3", 60, 110)]
    ev += shed(1300, "broker-1", "b") + shed(1500, "broker-2", "c")
    return run(name, ev, cluster=STRONG)


def avgshedder_homogeneous() -> pa.ArticleRun:
    """Scores 63 and 38.5 (rates 250 and 100) until one acting cycle at 540 s, then rates 150 and 100."""
    ev = [report(65, "broker-1", 63.0, 250), report(65, "broker-2", 38.5, 100), report(65, "broker-3", 50.0, 200)]
    ev += [cycle(t, 1 if t == 540 else 0, "AvgShedder") for t in range(60, 1200, 60)]
    ev += shed(540, "broker-1", "a", "broker-2") + shed(540, "broker-1", "b", "broker-2")
    ev += [report(600, "broker-1", 50.0, 150), report(600, "broker-3", 50.0, 120)]
    return run("avgshedder-homogeneous", ev)


def avgshedder_heterogeneous() -> pa.ArticleRun:
    """broker-4 (32 cores) at score 20 with msg rate 1100; the others at 60 with 100, 150, 200."""
    ev = [report(60, "broker-1", 60, 100), report(60, "broker-2", 60, 150), report(60, "broker-3", 60, 200),
          report(60, "broker-4", 20, 1100)]
    return run("avgshedder-heterogeneous", ev, cluster=STRONG)


def avgshedder_jitter() -> pa.ArticleRun:
    """Start-up unloads at 300 s only; nothing in the last 10 min."""
    return run("avgshedder-jitter", [report(60, "broker-1", 50)] + shed(300, "broker-1", "a") + shed(1150, "broker-1", "b"))


def avgshedder_cpu_spike() -> pa.ArticleRun:
    """The start-up round at 540 s and one unload after the spike at 1200 s."""
    ev = [report(60, "broker-1", 50)] + shed(540, "broker-1", "a") + shed(1300, "broker-2", "b")
    return run("avgshedder-cpu-spike", ev, faults=({"kind": "cpu_spike", "at": 1200.0, "agents": ["broker-2"]},))


def avgshedder_scale_in() -> pa.ArticleRun:
    """broker-5 leaves at 1200 s: its 3 bundles go to broker-1, broker-2, broker-1; one shedding unload after;
    msg-rate max/min 1.25 before, 1.5 over the last 10 min."""
    ev = [report(60, "broker-1", 50, 125), report(60, "broker-2", 50, 100), report(60, "broker-5", 50, 110)]
    ev += shed(540, "broker-1", "z")
    ev += [E(1200.1, "broker-5", "bundle_unloaded", bundle=b, destination="", reason="shutdown", topics=2) for b in "abc"]
    ev += [E(1200.2, "broker-5", "agent_stopped", reason="scale_in")]
    ev += [E(1200.3, "broker-1", "bundle_owned", bundle="a", via="lookup"),
           E(1200.3, "broker-2", "bundle_owned", bundle="b", via="lookup"),
           E(1200.3, "broker-1", "bundle_owned", bundle="c", via="lookup"),
           E(1300.0, "broker-2", "bundle_owned", bundle="a", via="lookup")]  # a later move is not where it went
    ev += [report(1210, "broker-1", 60, 150), report(1210, "broker-2", 60, 100)]
    ev += shed(1800, "broker-1", "a")
    return run("avgshedder-scale-in", ev, end=2400,
               faults=({"kind": "scale_in", "at": 1200.0, "agents": ["broker-5"]},))


def avgshedder_scale_out() -> pa.ArticleRun:
    """broker-5 joins at 1200 s; the first round after it, at 1320 s, sends 2 of 3 bundles to it."""
    ev = [report(60, "broker-1", 80)] + shed(540, "broker-1", "z", "broker-2")
    ev += shed(1320, "broker-1", "a", "broker-5") + shed(1320, "broker-1", "b", "broker-5") + shed(1320, "broker-2", "c", "broker-3")
    ev += shed(1500, "broker-1", "d", "broker-3")
    return run("avgshedder-scale-out", ev, end=2400,
               faults=({"kind": "scale_out", "at": 1200.0, "agents": ["broker-5"]},))


def hash_corner_case() -> pa.ArticleRun:
    """broker-5 joins at 600 s, broker-3 leaves at 1200 s: its 4 bundles go to broker-5, -1, -2, -5."""
    ev = [report(60, "broker-1", 50)]
    ev += [E(1200.1, "broker-3", "bundle_unloaded", bundle=b, destination="", reason="shutdown", topics=2) for b in "abcd"]
    ev += [E(1200.3, o, "bundle_owned", bundle=b, via="lookup")
           for b, o in zip("abcd", ("broker-5", "broker-1", "broker-2", "broker-5"))]
    return run("avgshedder-hash-corner-case", ev,
               faults=({"kind": "scale_out", "at": 600.0, "agents": ["broker-5"]},
                       {"kind": "scale_in", "at": 1200.0, "agents": ["broker-3"]}))


RUNS = {
    "threshold-homogeneous": threshold_homogeneous, "threshold-scale-in": threshold_scale_in,
    "uniform-heterogeneous": uniform_heterogeneous, "uniform-jitter": lambda: uniform_heterogeneous("uniform-jitter"),
    "avgshedder-homogeneous": avgshedder_homogeneous, "avgshedder-heterogeneous": avgshedder_heterogeneous,
    "avgshedder-jitter": avgshedder_jitter, "avgshedder-cpu-spike": avgshedder_cpu_spike,
    "avgshedder-scale-in": avgshedder_scale_in, "avgshedder-scale-out": avgshedder_scale_out,
    "avgshedder-hash-corner-case": hash_corner_case,
}

#: Each row's figure on its experiment's hand-made run above, worked out by hand.
EXPECTED: dict[str, float] = {
    # history: 0 at 60 s (idle reports), then 0.06/0.03/0.03 at 120 s, 0.114/0.057/0.057 at 180 s (H = 0.9)
    "th.settle": 5.0, "th.unloads": 3.0, "th.first.min": 3.0,
    "th.first.hist_shed": 11.4, "th.first.hist_avg": 7.6, "th.first.hist_min": 5.7,
    "th.first.margin": 11.4 - 7.6 - 10.0, "th.first.cur_shed": 60.0, "th.first.cur_avg": 40.0, "th.first.cur_min": 30.0,
    "th.first.hist_ratio": 7.6 / 40.0, "th.first.random": 1.0, "th.random.leading": 2.0,
    "th.random.share": 100.0 * 2 / 3, "th.random.above": 100.0 / 3,
    "ts.rounds": 3.0, "ts.held": 7.0, "ts.round1": 2.0, "ts.round2": 3.0, "ts.over": 1.0, "ts.balance": 25.0,
    "uh.rate.before": 2.5, "uh.rate.after": 1.2, "uh.tput.before": 2.5, "uh.tput.after": 1.2, "uh.time": 25.0,
    "uh.strong": 10.0 / 60.0,
    "uj.unloads": 2 * 3600.0 / 600.0,
    "ah.rounds": 1.0, "ah.first": 9.0, "ah.gap": 24.5, "ah.rate.before": 2.5, "ah.rate.after": 1.5,
    "ax.strong": 20.0 / 60.0, "ax.most": 1.0, "ax.ratio": 11.0,
    "aj.unloads": 0.0, "ac.unloads": 1.0,
    "ai.receivers": 2.0, "ai.handed": 3.0, "ai.unloads": 1.0, "ai.rate.before": 1.25, "ai.rate.after": 1.5,
    "ao.first": 2.0, "ao.to_new": 100.0 * 2 / 3,
    "ak.on_new": 50.0, "ak.receivers": 3.0,
}


def test_every_row_has_a_worked_example():
    assert set(EXPECTED) == {r.key for r in pa.ROWS}


@pytest.mark.parametrize("row", pa.ROWS, ids=lambda r: r.key)
def test_row_figure_on_a_hand_made_trace(row):
    # unloads are 10 ms after their decisions: 1e-3 of a minute or a point
    assert row.compute(RUNS[row.scenario]()) == pytest.approx(EXPECTED[row.key], abs=1e-3)


def test_rows_without_their_evidence_give_no_figure():
    empty = run("threshold-scale-in", [report(60, "broker-1", 50)])  # no fault, no unload, no cycle
    assert pa.first_threshold_unload(empty) is None and pa.leading_random(empty) is None
    assert next(r for r in pa.ROWS if r.key == "ts.rounds").compute(empty) is None
    assert pa.strong_usage_ratio(empty) is None  # all brokers alike


# -- verdicts ---------------------------------------------------------------------------------------------------
def test_verdicts():
    row = pa.Row("k", "e", "s", "f", "c", lambda r: None, article=10.0, tol=1.0)
    assert pa.verdict(row, pa.Spread([9.5, 10.5, 10.0])) == "match"  # inside the mean's interval
    assert pa.verdict(row, pa.Spread([2.0, 3.0, 2.5, 3.5, 9.5])) == "within spread"  # one draw among the seeds'
    assert pa.verdict(row, pa.Spread([2.0, 3.0])) == "differs"
    assert pa.verdict(row, pa.Spread([])) == "—"
    bound = pa.Row("k", "e", "s", "f", "c", lambda r: None, bound=("==", 0.0))
    assert pa.verdict(bound, pa.Spread([0.0, 0.0])) == "match"
    assert pa.verdict(bound, pa.Spread([0.0, 1.0, 0.0])) == "2/3 seeds"
    assert pa.verdict(bound, pa.Spread([1.0])) == "differs"


def test_figure_rows_pool_the_seeds_of_each_scenario():
    runs = [threshold_homogeneous(), threshold_homogeneous()]
    runs[1].seed = 2
    rows = {f["key"]: f for f in pa.figure_rows(runs)}
    assert rows["th.unloads"]["n"] == 2 and rows["th.unloads"]["mean"] == 3.0 and rows["th.unloads"]["sd"] == 0.0
    assert rows["th.unloads"]["verdict"] == "differs" and rows["th.unloads"]["why"]  # 3 against the article's 8
    assert rows["ts.rounds"]["n"] == 0 and rows["ts.rounds"]["verdict"] == "—"


# -- the rating over seeds --------------------------------------------------------------------------------------
AVG = {"shedding": "AvgShedder", "placement": "AvgShedder"}
THRESHOLD = {"shedding": "ThresholdShedder", "placement": "LeastResourceUsageWithWeight"}


def summary(name: str, strategy: dict, seed: int, quiet_s: float) -> RunSummary:
    figures = {"settle": {"quiet_time_s": quiet_s}, "faults": []}
    return RunSummary(Path(f"/nonexistent/{name}-{seed}"), {"run": {"scenario": name, "model": "pulsar", "end_s": 1800.0},
                                                           "figures": figures}, {"strategy": strategy}, seed)


def test_grades_carry_a_bootstrap_interval_and_say_when_they_sit_on_a_boundary():
    runs = [summary("avgshedder-homogeneous", AVG, s, q) for s, q in enumerate((540, 560, 530, 550), 1)]
    # ThresholdShedder: 11, 13, 11, 13 min — a mean of 12, the good/fair threshold, with seeds on both sides
    runs += [summary("threshold-homogeneous", THRESHOLD, s, m * 60.0) for s, m in enumerate((11, 13, 11, 13), 1)]
    rows = {g["strategy"]: g for g in pa.grade_rows(runs, resamples=400) if g["criterion"] == "speed"}
    avg = rows["AvgShedder+AvgShedder"]
    assert avg["grade"] == "good" and avg["verdict"] == "match" and avg["seeds"] == 4
    assert 530 / 60 <= avg["ci95"][0] <= avg["figure"] <= avg["ci95"][1] <= 560 / 60
    th = rows["ThresholdShedder+LeastResourceUsageWithWeight"]
    assert th["figure"] == pytest.approx(12.0) and th["grade"] == "good" and th["article"] == "fair"
    assert th["ci95"][0] < 12.0 < th["ci95"][1] and th["verdict"] == "differs, on a boundary"


# -- a short fixed-seed run ---------------------------------------------------------------------------------------
def test_replayed_history_explains_the_first_threshold_unload(tmp_path):
    """threshold-homogeneous, seed 1, 9 min: the first cycle sees only the idle start-up reports, so every
    history creeps up from 0 (the article's idle-then-load timeline), and the broker that sheds first is the one
    whose replayed history is highest and at least avg + threshold."""
    execute(load_scenario("threshold-homogeneous"), tmp_path / "run", seed=1, until=540)
    r = pa.load_run(tmp_path / "run")
    cycles = pa.threshold_history(r)
    assert cycles[0].t == pytest.approx(60.0, abs=1.0) and max(cycles[0].history.values()) < 0.05
    first = pa.first_threshold_unload(r)
    assert first is not None and first.t > cycles[1].t
    source = r.kind("unload_decided")["source"].iloc[0]
    assert source == max(first.history, key=first.history.get)
    assert first.history[source] >= first.avg + first.threshold
    assert all(first.history[b] < first.current[b] for b in first.history)  # still creeping up
    tables = compare.article_tables([RunSummary(tmp_path / "run", {"run": {"model": "pulsar", "scenario": r.name}},
                                                r.scenario, 1)])
    assert [t["title"].split(" (")[0] for t in tables] == [
        "The AvgShedder article's measured figures beside the emulation", "The article's rating table over seeds"]
    th_rows = [row for row in tables[0]["rows"] if row[0] == pa._TH]
    assert th_rows and all(row[7] == "1" for row in th_rows if row[1].startswith("first unload"))


# -- the generic entry point --------------------------------------------------------------------------------------
def test_markdown_and_run_discovery(tmp_path, capsys):
    md = compare.tables_markdown([{"title": "T", "columns": ["a", "b"], "rows": [["x|y", "1"]], "notes": ["n"]}])
    assert "### T" in md and "| a | b |" in md and "x\\|y" in md and "*n*" in md
    run_dir = tmp_path / "sweep" / "s" / "seed-1"
    run_dir.mkdir(parents=True)
    (run_dir / "manifest.json").write_text("{}")
    assert compare.find_run_dirs([tmp_path / "sweep"]) == [run_dir]
    from clusteremu.cli import main

    assert main(["compare", "--article", str(tmp_path / "missing")]) == 2
    assert "no such run" in capsys.readouterr().err


def test_history_restarts_with_a_new_leader_and_skips_cycles_the_strategy_did_not_run():
    ev = [report(5, "broker-1", 0.0), report(5, "broker-2", 0.0), report(65, "broker-1", 60.0), report(65, "broker-2", 20.0)]
    ev += [cycle(60, 0), E(90, "broker-1", "shedding_cycle", strategy="ThresholdShedder", brokers=1, unloads=0,
                          skipped="brokers<=1"), cycle(120, 0)]
    ev += [E(180, "broker-2", "shedding_cycle", strategy="ThresholdShedder", brokers=2, unloads=0, skipped="no_decision")]
    cycles = pa.threshold_history(run("threshold-homogeneous", ev))
    assert [c.t for c in cycles] == [60, 120, 180]
    assert cycles[1].history == pytest.approx({"broker-1": 0.06, "broker-2": 0.02})
    # broker-2 leads from 180 s with a fresh ThresholdShedder: the history starts at the current usage
    assert cycles[2].history == pytest.approx({"broker-1": 0.6, "broker-2": 0.2})
