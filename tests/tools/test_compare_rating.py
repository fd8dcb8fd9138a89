"""Grouping runs and the AvgShedder article's rating table, on hand-made summaries (no Spark, no emulation)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from clusteremu.base.errors import InputError
from clusteremu.tools.analysis.pulsar_rating import RatingRules, rate, speed_minutes, strongest_share
from clusteremu.tools.compare import Criterion, Group, RunSummary, comparison, group_runs, label_of, to_csv

THRESHOLD = {"shedding": "org.apache.pulsar.broker.loadbalance.impl.ThresholdShedder",
             "placement": "org.apache.pulsar.broker.loadbalance.impl.LeastResourceUsageWithWeight"}
UNIFORM = {"shedding": "UniformLoadShedder", "placement": "LeastLongTermMessageRate"}
AVG = {"shedding": "AvgShedder", "placement": "AvgShedder"}
STRONG = {"machine": {"cores": 8.0}, "machines": {"broker-4": {"cores": 32.0}}}


def rounds(over: int, total: int, *, margin: float = 10.0) -> list[dict]:
    """``total`` determined shedding rounds, ``over`` of which left their broker ``margin`` points below all."""
    out = []
    for i in range(total):
        after = 30.0 - margin if i < over else 45.0
        out.append({"broker": "broker-1", "over_unloaded": after < 30.0, "score_before": 80.0,
                    "others_mean_before": 40.0, "score_after": after, "others_min_after": 30.0})
    return out


def pulsar_run(root: Path, name, strategy, *, per_hour=0.0, ol=(0, 0), ou=(0, 0), quiet_s=300.0, end_s=1800.0,
               faults=(), strong_share=None, seed=1):
    """A run's directory with a summary.json-like summary and, for heterogeneous runs, a broker_load table in
    which broker-4 (32 cores, the others 8) carries ``strong_share`` times the others' msg rate."""
    d = root / f"{name}-{strategy['shedding']}-{seed}"
    cluster = {"brokers": 4, "machine": {"cores": 8.0}}
    if strong_share is not None:
        cluster = {"brokers": 4, **STRONG}
        (d / "analysis").mkdir(parents=True)
        pd.DataFrame({"t": [10.0, 10.0, 10.0, 10.0, 5.0], "broker": ["broker-1", "broker-2", "broker-3", "broker-4", "broker-4"],
                      "msg_rate": [100.0, 100.0, 100.0, 100.0 * strong_share, 1e9]}).to_parquet(d / "analysis" / "broker_load.parquet")
    figures = {
        "unloads": {"total": 3, "window_per_hour": per_hour},
        "over_loading": {"events": ol[0], "after_shedding": ol[1]},
        "over_unloading": {"rounds_detail": rounds(*ou)},
        "settle": {"quiet_time_s": quiet_s, "time_s": None},
        "faults": [{"fault": "crash", "start_s": s} for s in faults],
        "gc_pauses": {"count": 2},
    }
    summary = {"run": {"scenario": name, "model": "pulsar", "end_s": end_s}, "figures": figures, "partial": False}
    return RunSummary(d, summary, {"scenario": {"name": name}, "strategy": strategy, "cluster": cluster}, seed)


def article_runs(root: Path) -> list[RunSummary]:
    """The article's three strategies on its experiments, with figures like the article's."""
    return [
        # ThresholdShedder + LRUWW: the strong broker takes some load, history smooths jitter, random placement
        # onto loaded brokers, a broker shed until it is the least loaded, 22 and 30 min to settle.
        pulsar_run(root, "threshold-heterogeneous", THRESHOLD, strong_share=1.5),
        pulsar_run(root, "threshold-jitter", THRESHOLD, per_hour=0.0),
        pulsar_run(root, "threshold-homogeneous", THRESHOLD, ol=(4, 8), ou=(1, 3), quiet_s=22 * 60.0),
        pulsar_run(root, "threshold-scale-in", THRESHOLD, ol=(2, 6), ou=(2, 3), quiet_s=900.0 + 30 * 60.0, end_s=3600.0,
                   faults=(900.0,)),
        # UniformLoadShedder + LLTMR: even traffic on unequal brokers, unloads all through the jitter run.
        pulsar_run(root, "uniform-heterogeneous", UNIFORM, strong_share=1.0),
        pulsar_run(root, "uniform-jitter", UNIFORM, per_hour=18.0, quiet_s=None),
        pulsar_run(root, "uniform-homogeneous", UNIFORM, ol=(0, 6), ou=(0, 4), quiet_s=15 * 60.0),
        # AvgShedder: the strong broker carries the most traffic, no unload under jitter, one round in 9 min.
        pulsar_run(root, "avgshedder-heterogeneous", AVG, strong_share=1.4),
        pulsar_run(root, "avgshedder-jitter", AVG, per_hour=0.0),
        pulsar_run(root, "avgshedder-homogeneous", AVG, ol=(0, 2), ou=(0, 1), quiet_s=9 * 60.0),
    ]


def grades(table):
    return {row["strategy"]: {k: v["grade"] for k, v in row["criteria"].items()} for row in table["rows"]}


def test_the_rating_reproduces_the_articles_table(tmp_path):
    table = rate(group_runs(article_runs(tmp_path), "strategy"))
    assert grades(table) == {
        "ThresholdShedder+LeastResourceUsageWithWeight": {
            "heterogeneous": "fair", "jitter": "good", "over_loading": "poor", "over_unloading": "poor", "speed": "fair"},
        "UniformLoadShedder+LeastLongTermMessageRate": {
            "heterogeneous": "poor", "jitter": "poor", "over_loading": "good", "over_unloading": "good", "speed": "fair"},
        "AvgShedder+AvgShedder": {
            "heterogeneous": "fair", "jitter": "good", "over_loading": "good", "over_unloading": "good", "speed": "good"},
    }


def test_each_criterion_reads_its_own_experiments_and_carries_figure_and_unit(tmp_path):
    rows = {r["strategy"]: r["criteria"] for r in rate(group_runs(article_runs(tmp_path), "strategy"))["rows"]}
    t = rows["ThresholdShedder+LeastResourceUsageWithWeight"]
    assert t["heterogeneous"]["figure"] == pytest.approx(1.5) and t["jitter"]["figure"] == 0.0
    # Over-loading and over-unloading pool the step-change runs: 6 of 14 placements, 3 of 6 rounds.
    assert t["over_loading"]["figure"] == pytest.approx(100 * 6 / 14)
    assert t["over_unloading"]["figure"] == pytest.approx(50.0)
    # Speed counts from the load step: 22 min from the start, 30 min from the scale-in at 900 s.
    assert t["speed"]["figure"] == pytest.approx((22 + 30) / 2)
    for crit in t.values():
        assert set(crit) == {"grade", "figure", "unit"} and crit["unit"]
    json.dumps({"rows": [{"strategy": "x", "criteria": t}]})


def test_a_round_ending_within_the_margin_of_the_least_loaded_is_balance(tmp_path):
    close = pulsar_run(tmp_path, "avgshedder-homogeneous", AVG, ou=(1, 1))
    close.summary["figures"]["over_unloading"]["rounds_detail"] = rounds(1, 1, margin=1.0)
    (row,) = rate([Group("g", [close])])["rows"]
    assert row["criteria"]["over_unloading"]["figure"] == 0.0
    (row,) = rate([Group("g", [close])], RatingRules(least_margin=0.5))["rows"]
    assert row["criteria"]["over_unloading"]["figure"] == 100.0


def test_speed_and_strongest_share_figures(tmp_path):
    still = pulsar_run(tmp_path, "x-scale-in", AVG, quiet_s=None, end_s=3600.0, faults=(1200.0,))
    assert speed_minutes(still) == pytest.approx(40.0)  # never quiet: from the scale-in to the end
    early = pulsar_run(tmp_path, "x-scale-in", AVG, quiet_s=600.0, faults=(1200.0,))
    assert speed_minutes(early) == 0.0  # nothing moved after the step
    # The strongest broker's latest report counts (not its earlier 1e9), over the others' mean.
    assert strongest_share(pulsar_run(tmp_path, "y-heterogeneous", AVG, strong_share=2.5)) == pytest.approx(2.5)
    assert strongest_share(pulsar_run(tmp_path, "z-homogeneous", AVG)) is None  # all brokers alike


def test_the_rating_is_per_strategy_whatever_the_grouping(tmp_path):
    runs = article_runs(tmp_path)
    result = comparison(group_runs(runs, "scenario"), "scenario")
    assert len(result["groups"]) == len(runs)
    assert [r["strategy"] for r in result["rows"]] == [
        "ThresholdShedder+LeastResourceUsageWithWeight", "UniformLoadShedder+LeastLongTermMessageRate", "AvgShedder+AvgShedder"]


def test_the_json_shape_and_a_group_without_pulsar_runs(tmp_path):
    hb = RunSummary(Path("/runs/hb"), {"run": {"scenario": "kernel-heartbeat", "model": "heartbeat"},
                                       "figures": {"sessions": {"expiries": 1}}}, {"scenario": {"name": "kernel-heartbeat"}}, 1)
    result = comparison(group_runs([*article_runs(tmp_path)[:4], hb], "strategy"), "strategy")
    assert set(result) == {"by", "groups", "rows"}
    assert [r["strategy"] for r in result["rows"]] == ["ThresholdShedder+LeastResourceUsageWithWeight", "(no strategy)"]
    assert result["rows"][1]["criteria"] == {}
    for row in result["rows"]:
        assert set(row) == {"strategy", "criteria"}
        for name, c in row["criteria"].items():
            assert name in {"heterogeneous", "jitter", "over_loading", "over_unloading", "speed"}
            assert c["grade"] in {"good", "fair", "poor"} and isinstance(c["figure"], float) and isinstance(c["unit"], str)
    first = result["groups"][0]
    assert first["runs"] == 4 and first["figures"]["gc_pauses.count"] == 2.0
    lines = to_csv(result).splitlines()
    assert lines[0].startswith("group,runs,") and len(lines) == 3


def test_thresholds_are_inclusive_either_way_and_infinity_is_poor_when_lower_is_better():
    c = Criterion("x", 10.0, 20.0)
    assert [c.grade(v) for v in (0.0, 10.0, 10.1, 20.0, 21.0, float("inf"))] == ["good", "good", "fair", "fair", "poor", "poor"]
    up = Criterion("x", 2.0, 1.2, higher_is_better=True)
    assert [up.grade(v) for v in (3.0, 2.0, 1.9, 1.2, 1.1)] == ["good", "good", "fair", "fair", "poor"]
    with pytest.raises(ValueError):
        c.grade(float("nan"))


def test_a_group_without_the_runs_of_a_criterion_has_no_grade_for_it(tmp_path):
    (row,) = rate([Group("g", [pulsar_run(tmp_path, "avgshedder-homogeneous", AVG, quiet_s=90.0)])],
                  RatingRules(speed=Criterion("minutes", 1.0, 2.0, ("*-homogeneous",))))["rows"]
    assert set(row["criteria"]) == {"over_loading", "over_unloading", "speed"}
    assert row["criteria"]["speed"] == {"grade": "fair", "figure": 1.5, "unit": "minutes"}


def test_labels(tmp_path):
    run = article_runs(tmp_path)[0]
    assert label_of(run, "strategy") == "ThresholdShedder+LeastResourceUsageWithWeight"
    assert label_of(run, "cluster.brokers") == "4"
    assert label_of(run, "cluster.bookies") == "(unset)"
    assert label_of(run, "scenario,seed") == "scenario=threshold-heterogeneous seed=1"
    with pytest.raises(InputError):
        label_of(run, " , ")
    no_strategy = RunSummary(Path("/r"), {"run": {}}, {}, None)
    assert label_of(no_strategy, "strategy") == "(no strategy)"
