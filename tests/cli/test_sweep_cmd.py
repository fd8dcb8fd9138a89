"""``clusteremu sweep`` end to end: local runs and runs as Spark tasks, then analysis and comparison."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from clusteremu.cli import main


def test_bad_sweeps_are_refused(tmp_path, capsys):
    assert main(["sweep", "--suite", "nope"]) == 2
    assert main(["sweep"]) == 2
    assert main(["sweep", "kernel-heartbeat", "--grid", "cluster.members=0", "--out", str(tmp_path / "s")]) == 2
    assert "cluster.members=0" in capsys.readouterr().err
    assert main(["sweep", "kernel-heartbeat", "--seeds", "2..1"]) == 2


@pytest.mark.spark
def test_local_sweep_runs_analyses_and_compares(spark, tmp_path, capsys):
    out = tmp_path / "sweep"
    code = main(["sweep", "kernel-heartbeat", "--grid", "workload.heartbeat_interval_s=1.0,2.0", "--seeds", "1..2",
                 "--until", "60", "--jobs", "2", "--out", str(out), "--format", "json"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert len(result["runs"]) == 4 and all(r["ok"] for r in result["runs"])
    groups = {g["label"]: g for g in result["groups"]}
    assert set(groups) == {"kernel-heartbeat workload.heartbeat_interval_s=1.0", "kernel-heartbeat workload.heartbeat_interval_s=2.0"}
    assert all(g["runs"] == 2 for g in groups.values())
    p99 = {k: g["figures"]["heartbeats.gap_s.p99"] for k, g in groups.items()}
    assert p99["kernel-heartbeat workload.heartbeat_interval_s=1.0"] == pytest.approx(1.0, abs=0.01)
    assert p99["kernel-heartbeat workload.heartbeat_interval_s=2.0"] == pytest.approx(2.0, abs=0.01)
    for r in result["runs"]:
        assert (Path(r["point"]["run_dir"]) / "analysis" / "summary.json").exists()
        assert not (Path(r["point"]["run_dir"]) / "analysis" / "report.html").exists()  # only with --reports


@pytest.mark.spark
def test_reports_are_rendered_on_request_and_the_stages_are_timed(spark, tmp_path):
    from clusteremu.tools.sweep import plan, sweep

    points = plan(["kernel-heartbeat"], [], [1, 2], tmp_path / "sweep")
    result = sweep(points, tmp_path / "sweep", jobs=2, until=30.0, progress=False, reports=True)
    assert [r.ok for r in result.records] == [True, True] and result.report_errors == {}
    for p in points:
        assert (Path(p.run_dir) / "analysis" / "report.html").exists()
    assert list(result.stages) == ["runs", "spark start (not hidden by the runs)", "analysis (one Spark job)",
                                   "writing the analyses", "reports", "comparison and rating"]
    assert all(t >= 0 for t in result.stages.values())


@pytest.mark.spark
@pytest.mark.slow
def test_each_run_can_be_a_spark_task(spark, tmp_path, capsys):
    out = tmp_path / "sweep"
    code = main(["sweep", "--suite", "kernel", "--grid", "cluster.members=2,3", "--until", "30", "--spark", "local[2]",
                 "--out", str(out), "--format", "json"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    events = {r["point"]["label"]: r["events"] for r in result["runs"]}
    # Two members heartbeat less than three: the runs really differ, and each was analysed.
    assert events["kernel-heartbeat cluster.members=2"] < events["kernel-heartbeat cluster.members=3"]
    assert {g["label"] for g in result["groups"]} == set(events)
