"""``clusteremu compare`` on runs that already have summaries (no Spark): formats and the rating's JSON shape."""
from __future__ import annotations

import json

from clusteremu.cli import main


def analysed_run(trace, dirname, strategy, *, over_loading, settle_s):
    b = trace(dirname, name="x-homogeneous", scenario={"strategy": strategy})
    run_dir = b.event(1.0, "b1", "stw_pause", duration_s=0.1, cause="gc").write()
    figures = {
        "score_spread": {"window": {"mean": 8.0}},
        "unloads": {"total": 2, "window_per_hour": 0.0},
        "over_loading": {"events": over_loading, "after_shedding": 2},
        "over_unloading": {"rounds_detail": [{"over_unloaded": False, "score_before": 80.0, "others_mean_before": 40.0,
                                              "score_after": 50.0, "others_min_after": 40.0}]},
        "settle": {"time_s": None, "quiet_time_s": settle_s},
        "gc_pauses": {"count": 1},
    }
    summary = {"run": {"scenario": "x-homogeneous", "model": "pulsar", "end_s": 1800.0}, "partial": False, "figures": figures}
    (run_dir / "analysis").mkdir()
    (run_dir / "analysis" / "summary.json").write_text(json.dumps(summary))
    return run_dir


def test_compare_json_groups_by_strategy_and_rates(trace, capsys):
    a = analysed_run(trace, "a", {"shedding": "ThresholdShedder", "placement": "LeastResourceUsageWithWeight"}, over_loading=2, settle_s=1320.0)
    b = analysed_run(trace, "b", {"shedding": "AvgShedder", "placement": "AvgShedder"}, over_loading=0, settle_s=540.0)
    assert main(["compare", str(a), str(b), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = {r["strategy"]: r["criteria"] for r in out["rows"]}
    assert rows["ThresholdShedder+LeastResourceUsageWithWeight"]["over_loading"] == {
        "grade": "poor", "figure": 100.0, "unit": "% of placements after shedding on an above-average broker"}
    assert rows["AvgShedder+AvgShedder"]["speed"]["grade"] == "good"
    assert rows["ThresholdShedder+LeastResourceUsageWithWeight"]["speed"] == {
        "grade": "fair", "figure": 22.0,
        "unit": "minutes from the load step to the last shedding unload (still unloading at the end: until the end)"}
    assert rows["AvgShedder+AvgShedder"]["over_unloading"]["figure"] == 0.0
    assert [g["label"] for g in out["groups"]] == list(rows)


def test_compare_table_and_csv_and_bad_input(trace, capsys, tmp_path):
    a = analysed_run(trace, "a", {"shedding": "AvgShedder", "placement": "AvgShedder"}, over_loading=0, settle_s=60.0)
    assert main(["compare", str(a)]) == 0
    table = capsys.readouterr().out
    assert "AvgShedder+AvgShedder" in table and "rating" in table and "good" in table
    assert main(["compare", str(a), "--format", "csv", "--by", "scenario"]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("x-homogeneous,1,")
    assert main(["compare", str(tmp_path / "missing")]) == 2
    capsys.readouterr()
    assert main(["compare", str(a), "--by", "nonsense"]) == 2
    err = capsys.readouterr().err
    assert "--by nonsense" in err and "strategy, scenario, seed, model, run" in err
    assert main(["compare", str(a), "--by", "cluster.brokers,nonsense.key"]) == 2
    assert main(["compare", str(a), "--format", "markdown"]) == 2
