"""Sweep plans: grids, seeds, suites, validation before anything runs, and local runs (no Spark)."""
from __future__ import annotations

from pathlib import Path

import pytest

from clusteremu.base.errors import InputError
from clusteremu.emulator.trace import open_run
from clusteremu.scenarios.catalog import builtin_path
from clusteremu.tools.sweep import parse_grid, suites, parse_seeds, plan, run_local, split_values


def test_grid_values_split_outside_brackets_and_quotes():
    assert split_values("1,2.5,abc") == ["1", "2.5", "abc"]
    assert split_values('[1, 2],"a,b",{ x = 1, y = 2 }') == ["[1, 2]", '"a,b"', "{ x = 1, y = 2 }"]
    assert parse_grid(["a.b=1,2", "c=x"]) == [("a.b", ["1", "2"]), ("c", ["x"])]
    for bad in (["a.b"], ["=1"], ["a=1,,2"], ["a=1", "a=2"]):
        with pytest.raises(InputError):
            parse_grid(bad)


def test_seeds():
    assert parse_seeds("1..3") == [1, 2, 3]
    assert parse_seeds("5") == [5]
    assert parse_seeds("1..2,7,2") == [1, 2, 7]
    for bad in ("3..1", "x", "1-3", ""):
        with pytest.raises(InputError):
            parse_seeds(bad)


def test_every_suite_names_built_in_scenarios():
    for name, suite in suites().items():
        assert suite.scenarios and suite.description, name
        for scenario in suite.scenarios:
            assert builtin_path(scenario) is not None, f"suite {name}: no built-in scenario {scenario}"


def test_plan_is_the_cross_product_with_one_directory_per_run(tmp_path):
    points = plan(["kernel-heartbeat"], parse_grid(["cluster.members=2,3", "workload.timer_mode=fixed_rate,fixed_delay"]),
                  [1, 2], tmp_path, ["scenario.duration_s=30", "faults=[]"])  # its pause at 120 s is past 30 s
    assert len(points) == 8
    assert len({p.run_dir for p in points}) == 8
    p = points[0]
    assert p.name == "kernel-heartbeat" and p.seed == 1
    assert p.grid == (("cluster.members", "2"), ("workload.timer_mode", "fixed_rate"))
    assert p.label == "kernel-heartbeat cluster.members=2,workload.timer_mode=fixed_rate"
    assert Path(p.run_dir) == tmp_path / "kernel-heartbeat" / "cluster.members=2,workload.timer_mode=fixed_rate" / "seed-1"
    assert p.overrides == ("scenario.duration_s=30", "faults=[]", "cluster.members=2", "workload.timer_mode=fixed_rate")


def test_a_bad_combination_is_refused_before_anything_runs(tmp_path):
    with pytest.raises(InputError) as err:
        plan(["kernel-heartbeat"], parse_grid(["cluster.members=2,0"]), [1], tmp_path)
    assert "cluster.members=0" in str(err.value) and "cluster.members" in err.value.reason
    with pytest.raises(InputError):
        plan(["no-such-scenario"], [], [1], tmp_path)
    assert not any(tmp_path.iterdir())


def test_local_runs_write_their_runs_and_record_failures(tmp_path):
    points = plan(["kernel-heartbeat"], parse_grid(["cluster.members=2,3"]), [1], tmp_path)
    records = run_local(points, jobs=2, until=20.0, progress=False)
    assert [r.ok for r in records] == [True, True]
    for r in records:
        run = open_run(r.point.run_dir)
        assert run.complete and r.events == sum(1 for _ in run.events()) and r.digest == run.digest
    # The same directories again: the run refuses to overwrite, the sweep records it and goes on.
    again = run_local(points, jobs=2, until=20.0, progress=False)
    assert [r.ok for r in again] == [False, False] and "not empty" in again[0].error


def test_runs_in_the_pool_give_what_runs_one_by_one_give_in_the_same_order(tmp_path):
    grid = parse_grid(["cluster.members=2,3"])
    serial = run_local(plan(["kernel-heartbeat"], grid, [1, 2], tmp_path / "serial"), jobs=1, until=20.0, progress=False)
    pooled = run_local(plan(["kernel-heartbeat"], grid, [1, 2], tmp_path / "pooled"), jobs=2, until=20.0, progress=False)
    assert [(r.point.label, r.point.seed) for r in pooled] == [(r.point.label, r.point.seed) for r in serial]
    assert [(r.ok, r.digest, r.events) for r in pooled] == [(r.ok, r.digest, r.events) for r in serial]
    assert all(r.ok for r in pooled) and len({r.digest for r in pooled}) == 4


def test_a_failed_run_in_the_pool_is_recorded_with_its_point_and_the_others_go_on(tmp_path):
    points = plan(["kernel-heartbeat"], [], [1, 2, 3], tmp_path)
    # Seed 2's directory gets a file after planning: its run refuses to overwrite it.
    Path(points[1].run_dir).mkdir(parents=True)
    (Path(points[1].run_dir) / "keep.txt").write_text("mine")
    records = run_local(points, jobs=2, until=20.0, progress=False)
    assert [(r.point.name, r.point.seed, r.ok) for r in records] == [("kernel-heartbeat", 1, True), ("kernel-heartbeat", 2, False),
                                                                      ("kernel-heartbeat", 3, True)]
    assert "not empty" in records[1].error and (Path(points[1].run_dir) / "keep.txt").read_text() == "mine"
