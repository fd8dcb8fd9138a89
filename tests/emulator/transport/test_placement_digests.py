"""Same results anywhere: every built-in scenario has one digest whatever the placement and transport."""
from __future__ import annotations

import pytest

from clusteremu.emulator.runner import execute
from clusteremu.emulator.trace import open_run
from clusteremu.scenarios.catalog import builtins
from clusteremu.scenarios.loader import load_scenario

from .conftest import SHRINK

UNTIL = 120.0
NAMES = [b.name for b in builtins()]


def run(tmp_path, name: str, agents: str, until: float = UNTIL):
    sc = load_scenario(name, SHRINK.get(name, []))
    label = agents.replace(":", "-")
    return execute(sc, tmp_path / f"{name}-{label}", until=until, agents=agents)


@pytest.mark.parametrize("name", NAMES)
def test_every_builtin_scenario_has_one_digest_in_process_and_in_one_or_two_worker_processes(tmp_path, name):
    ref = run(tmp_path, name, "inproc")
    assert ref.manifest["complete"] and ref.manifest["events"]["count"] > 0
    for agents in ("inproc:2", "procs:1", "procs:2"):
        other = run(tmp_path, name, agents)
        assert other.manifest["complete"], agents
        assert other.digest == ref.digest, f"{name}: {agents} differs from inproc"
        assert other.manifest["events"]["count"] == ref.manifest["events"]["count"]


@pytest.mark.parametrize("name", ["kernel-heartbeat", "lookup-storm-broker-crash"])
def test_four_worker_processes_give_the_in_process_trace_event_for_event(tmp_path, name):
    ref = run(tmp_path, name, "inproc")
    four = run(tmp_path, name, "procs:4")
    assert four.digest == ref.digest
    writers = four.manifest["events"]["writers"]
    assert sorted(writers) == ["net", "w000", "w001", "w002", "w003"]
    assert four.manifest["placement"] == {"mode": "procs:4", "workers": 4, "rule": "round_robin"}
    a = [e.as_dict() for e in open_run(ref.run_dir).events()]
    b = [e.as_dict() for e in open_run(four.run_dir).events()]
    assert a == b


def test_hash_placement_over_processes_gives_the_same_digest(tmp_path):
    sc = load_scenario("avgshedder-homogeneous", ["run.placement=\"hash\""])
    ref = execute(sc, tmp_path / "ref", until=UNTIL)
    three = execute(sc, tmp_path / "three", until=UNTIL, agents="procs:3")
    assert three.digest == ref.digest
    assert open_run(three.run_dir).compute_digest() == ref.digest
