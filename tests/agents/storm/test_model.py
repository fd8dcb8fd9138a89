"""The Storm model's scenario sections: Storm's keys and class names, checked before anything runs; the agents a
scenario makes."""
from __future__ import annotations

from pathlib import Path

import pytest

from clusteremu.base.errors import InputError
from clusteremu.scenarios.loader import load_scenario

from clusteremu.agents.storm.model import MODEL

STEADY = "storm-steady-multi-user"


def _problem(overrides: list[str]) -> str:
    with pytest.raises(InputError) as err:
        load_scenario(STEADY, overrides)
    return str(err.value)


def test_unknown_config_keys_and_bad_values_are_refused_with_their_path():
    assert "config.nimbus.monitor.freq.sec: not a Storm key" in _problem(['config={"nimbus.monitor.freq.sec" = 5}'])
    assert "config.nimbus.monitor.freq.secs" in _problem(['config={"nimbus.monitor.freq.secs" = "often"}'])


def test_strategies_are_storm_class_names_of_the_selected_generation():
    assert "strategy.priority" in _problem(['strategy.priority="NoSuchPriorityStrategy"'])
    assert "strategy.scheduling" in _problem(['strategy.scheduling="ConstraintSolverStrategy"'])
    # FIFO priority exists in 2.x only: naming the 1.x eviction strategy makes it unknown
    text = _problem(['strategy.priority="FIFOSchedulingPriorityStrategy"',
                     'strategy.eviction="DefaultEvictionStrategy"'])
    assert "strategy.priority" in text and "1.x" in text
    ok = load_scenario(STEADY, ['strategy.priority="org.apache.storm.scheduler.resource.strategies.priority.'
                                'FIFOSchedulingPriorityStrategy"'])
    chosen = MODEL.config(ok.data)["resource.aware.scheduler.priority.strategy"]
    assert chosen.endswith("FIFOSchedulingPriorityStrategy")


def test_topologies_are_checked_like_a_decide_input(tmp_path):
    assert "workload.topologies[0].components[1].parallelism: must be at least 0" in \
        _problem(["workload.topologies.0.components.1.parallelism=-1"])
    assert "workload.topologies[0].components[1].inputs[0]: 'nowhere' is not a component" in \
        _problem(['workload.topologies.0.components.1.inputs=["nowhere"]'])
    assert "workload.topologies[0].kill_at_s: must be after submit_at_s" in \
        _problem(["workload.topologies.0.kill_at_s=5.0"])
    src = (Path(__file__).parents[3] / "scenarios/library/storm" / f"{STEADY}.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(src.replace('"topology.priority" = 10', '"topology.priority" = "high"'))
    with pytest.raises(InputError) as err:
        load_scenario(str(bad))
    assert "workload.topologies[0].topology.priority: expected a number, got 'high'" in str(err.value)
    assert str(err.value).count("topology.priority") == 1  # once per entry, not per copy


def test_the_agents_of_a_scenario():
    data = load_scenario("storm-gpu-racks").data
    specs = {s.name: s for s in MODEL.agents(data)}
    assert [n for n in specs if n.startswith("nimbus-")] == ["nimbus-1"]
    sups = [s for n, s in specs.items() if n.startswith("supervisor-")]
    assert len(sups) == 10
    gpu = specs["supervisor-1"].params
    assert gpu["generic"] == {"gpu.count": 2.0} and gpu["rack"] == "/rack-gpu"
    assert specs["supervisor-3"].params["generic"] == {} and specs["supervisor-3"].params["cpu"] == 400.0
    assert specs["supervisor-3"].params["ports"] == [6700, 6701, 6702, 6703]
    users = specs["user-vision"].params["topologies"]
    assert [u["name"] for u in users] == ["vision-1", "vision-2", "vision-3"]
    assert [u["submit_at"] for u in users] == [30.0, 90.0, 150.0]
    assert [u["kill_at"] for u in users] == [690.0, 750.0, 810.0]
    assert specs["zookeeper"].params["leader_paths"] == ["/storm/leader-lock"]
    conf = specs["nimbus-1"].params["config"]
    assert conf["nimbus.monitor.freq.secs"] == 10 and conf["storm.zookeeper.session.timeout"] == 20000
    assert conf["supervisor.heartbeat.frequency.secs"] == 5 and conf["nimbus.supervisor.timeout.secs"] == 60


def test_a_restart_needs_its_down_time():
    assert "duration_s" in _problem(['faults=[{kind="restart", at=10.0, agents=["supervisor-1"]}]'])
