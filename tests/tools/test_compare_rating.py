"""Grouping runs and the AvgShedder article's rating table, on hand-made summaries (no Spark)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from emulator.errors import InputError
from tools.compare import Criterion, Group, RatingRules, RunSummary, comparison, group_runs, label_of, rate, to_csv

THRESHOLD = {"shedding": "org.apache.pulsar.broker.loadbalance.impl.ThresholdShedder",
             "placement": "org.apache.pulsar.broker.loadbalance.impl.LeastResourceUsageWithWeight"}
UNIFORM = {"shedding": "UniformLoadShedder", "placement": "LeastLongTermMessageRate"}
AVG = {"shedding": "AvgShedder", "placement": "AvgShedder"}


def pulsar_run(name, strategy, *, spread=10.0, per_hour=0.0, ol=(0, 0), ou=(0, 0), settle_s=300.0, end_s=1800.0, seed=1):
    figures = {
        "score_spread": {"window": {"mean": spread, "max": spread}},
        "unloads": {"total": 3, "window_per_hour": per_hour},
        "over_loading": {"events": ol[0], "after_shedding": ol[1]},
        "over_unloading": {"events": ou[0], "determined": ou[1]},
        "settle": {"time_s": settle_s},
        "gc_pauses": {"count": 2},
    }
    summary = {"run": {"scenario": name, "model": "pulsar", "end_s": end_s}, "figures": figures, "partial": False}
    return RunSummary(Path(f"/runs/{name}-{seed}"), summary, {"scenario": {"name": name}, "strategy": strategy,
                                                              "cluster": {"brokers": 5}}, seed)


def article_runs():
    """The article's three strategies in three experiments each: heterogeneous brokers, load jitter, and the
    homogeneous cluster where over-loading, over-unloading and speed show, with figures like the article's."""
    return [
        # ThresholdShedder + LRUW: fair on heterogeneous, good on jitter, over-loads, over-unloads, 22 min.
        pulsar_run("hetero-heterogeneous", THRESHOLD, spread=25.0, settle_s=None),
        pulsar_run("jitter-load", THRESHOLD, per_hour=0.0),
        pulsar_run("homogeneous", THRESHOLD, ol=(4, 5), ou=(2, 3), settle_s=22 * 60.0),
        # UniformLoadShedder + LLTMR: poor on heterogeneous and jitter, no over-loading/unloading, 15 min.
        pulsar_run("hetero-heterogeneous", UNIFORM, spread=45.0, settle_s=300.0),
        pulsar_run("jitter-load", UNIFORM, per_hour=30.0, settle_s=None),
        pulsar_run("homogeneous", UNIFORM, ol=(0, 6), ou=(0, 6), settle_s=15 * 60.0),
        # AvgShedder: fair on heterogeneous, good elsewhere, 9 min.
        pulsar_run("hetero-heterogeneous", AVG, spread=28.0),
        pulsar_run("jitter-load", AVG, per_hour=0.0),
        pulsar_run("homogeneous", AVG, ol=(0, 1), ou=(0, 1), settle_s=9 * 60.0),
    ]


def grades(table):
    return {row["strategy"]: {k: v["grade"] for k, v in row["criteria"].items()} for row in table["rows"]}


def test_the_rating_reproduces_the_articles_table():
    table = rate(group_runs(article_runs(), "strategy"))
    assert grades(table) == {
        "ThresholdShedder+LeastResourceUsageWithWeight": {
            "heterogeneous": "fair", "jitter": "good", "over_loading": "poor", "over_unloading": "poor", "speed": "fair"},
        "UniformLoadShedder+LeastLongTermMessageRate": {
            "heterogeneous": "poor", "jitter": "poor", "over_loading": "good", "over_unloading": "good", "speed": "fair"},
        "AvgShedder+AvgShedder": {
            "heterogeneous": "fair", "jitter": "good", "over_loading": "good", "over_unloading": "good", "speed": "good"},
    }


def test_each_grade_carries_its_figure_and_unit():
    rows = {r["strategy"]: r["criteria"] for r in rate(group_runs(article_runs(), "strategy"))["rows"]}
    t = rows["ThresholdShedder+LeastResourceUsageWithWeight"]
    # The heterogeneous figure comes from the heterogeneous experiment only; jitter from the jitter one.
    assert t["heterogeneous"]["figure"] == 25.0 and t["jitter"]["figure"] == 0.0
    # Pooled over the group's runs: 4 over-loading placements of 5 placements after shedding, in all.
    assert t["over_loading"]["figure"] == pytest.approx(80.0)
    assert t["over_unloading"]["figure"] == pytest.approx(100 * 2 / 3)
    # A run that never settled counts as its length: (30 + 5 + 22) / 3 minutes.
    assert t["speed"]["figure"] == pytest.approx((30 + 5 + 22) / 3)
    for crit in t.values():
        assert set(crit) == {"grade", "figure", "unit"} and crit["unit"]
    json.dumps({"rows": [{"strategy": "x", "criteria": t}]})


def test_the_json_shape_and_a_group_without_pulsar_runs():
    hb = RunSummary(Path("/runs/hb"), {"run": {"scenario": "kernel-heartbeat", "model": "heartbeat"},
                                       "figures": {"sessions": {"expiries": 1}}}, {"scenario": {"name": "kernel-heartbeat"}}, 1)
    result = comparison(group_runs([*article_runs()[:3], hb], "strategy"), "strategy")
    assert set(result) == {"by", "groups", "rows"}
    assert [r["strategy"] for r in result["rows"]] == ["ThresholdShedder+LeastResourceUsageWithWeight", "(no strategy)"]
    assert result["rows"][1]["criteria"] == {}
    for row in result["rows"]:
        assert set(row) == {"strategy", "criteria"}
        for name, c in row["criteria"].items():
            assert name in {"heterogeneous", "jitter", "over_loading", "over_unloading", "speed"}
            assert c["grade"] in {"good", "fair", "poor"} and isinstance(c["figure"], float)
    first = result["groups"][0]
    assert first["runs"] == 3 and first["figures"]["gc_pauses.count"] == 2.0
    lines = to_csv(result).splitlines()
    assert lines[0].startswith("group,runs,") and len(lines) == 3


def test_thresholds_are_inclusive_and_infinity_is_poor():
    c = Criterion("x", 10.0, 20.0)
    assert [c.grade(v) for v in (0.0, 10.0, 10.1, 20.0, 21.0, float("inf"))] == ["good", "good", "fair", "fair", "poor", "poor"]
    rules = RatingRules(speed=Criterion("minutes", 1.0, 2.0))
    (row,) = rate([Group("g", [pulsar_run("homogeneous", AVG, settle_s=90.0)])], rules)["rows"]
    assert row["criteria"]["speed"] == {"grade": "fair", "figure": 1.5, "unit": "minutes"}


def test_labels():
    run = article_runs()[0]
    assert label_of(run, "strategy") == "ThresholdShedder+LeastResourceUsageWithWeight"
    assert label_of(run, "cluster.brokers") == "5"
    assert label_of(run, "cluster.bookies") == "(unset)"
    assert label_of(run, "scenario,seed") == "scenario=hetero-heterogeneous seed=1"
    with pytest.raises(InputError):
        label_of(run, " , ")
    no_strategy = RunSummary(Path("/r"), {"run": {}}, {}, None)
    assert label_of(no_strategy, "strategy") == "(no strategy)"
