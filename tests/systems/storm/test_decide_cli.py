"""``clusteremu decide`` for Storm: the system found from the strategy or from the input, one RAS round in JSON
and in a table, ``--explain``, and a round's answer fed into the next."""
from __future__ import annotations

import json

from clusteremu.cli import main

CLUSTER = {
    "config": {"resource.aware.scheduler.priority.strategy":
               "org.apache.storm.scheduler.resource.strategies.priority.DefaultSchedulingPriorityStrategy",
               "resource.aware.scheduler.max.topology.scheduling.attempts": 5,
               "storm.worker.min.cpu.pcore.percent": 0.0,
               "resource.aware.scheduler.user.pools": {"alice": {"cpu": 200.0, "memory": 2000.0}}},
    "nowSecs": 1450418597,
    "supervisors": [{"id": f"r000s00{i}", "host": f"host-00{i}-rack-000", "rack": "rack-000",
                     "supervisor.cpu.capacity": 100.0, "supervisor.memory.capacity.mb": 1024.0,
                     "supervisor.resources.map": {}, "ports": [6700, 6701]} for i in range(2)],
    "topologies": [{"id": "topo-1-1450418595", "name": "topo-1", "topology.submitter.user": "alice",
                    "topology.priority": 10, "launchTimeSecs": 1450418595, "topology.worker.max.heap.size.mb": 768.0,
                    "components": [{"id": "spout-0", "type": "spout", "parallelism": 2,
                                    "topology.component.cpu.pcore.percent": 50.0,
                                    "topology.component.resources.onheap.memory.mb": 128.0,
                                    "topology.component.resources.offheap.memory.mb": 0.0,
                                    "topology.component.resources.map": {}, "inputs": []}]}],
}


def decide(tmp_path, capsys, obj, *flags):
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(obj))
    code = main(["decide", str(path), *flags])
    return code, capsys.readouterr()


def test_the_input_alone_selects_storm_and_storms_default_strategy(tmp_path, capsys):
    code, out = decide(tmp_path, capsys, CLUSTER, "--format", "json")
    assert code == 0
    answer = json.loads(out.out)
    topo = answer["topologies"]["topo-1"]
    assert answer["order"] == ["topo-1"] and topo["fully_scheduled"]
    assert topo["status"].startswith("Running - Fully Scheduled by DefaultResourceAwareStrategy")
    assert sum(len(w["executors"]) for w in topo["workers"]) == 2
    assert sum(w["cpu"] for w in topo["workers"]) == 100.0  # two executors of 50 % each, first fit in one worker


def test_a_named_strategy_and_the_explanation(tmp_path, capsys):
    code, out = decide(tmp_path, capsys, CLUSTER, "--strategy",
                       "org.apache.storm.scheduler.resource.strategies.scheduling.GenericResourceAwareStrategy",
                       "--explain", "--format", "json")
    assert code == 0
    answer = json.loads(out.out)
    assert "GenericResourceAwareStrategy" in answer["topologies"]["topo-1"]["status"]
    sorts = answer["topologies"]["topo-1"]["explain"]["sorts"]
    assert sorts and {"racks", "hosts", "nodes"} <= set(sorts[0])
    assert answer["explain"]["priority"]


def test_one_rounds_assignments_feed_the_next_round(tmp_path, capsys):
    _, out = decide(tmp_path, capsys, CLUSTER, "--format", "json")
    first = json.loads(out.out)
    again = dict(CLUSTER, assignments=first["assignments"])
    _, out = decide(tmp_path, capsys, again, "--format", "json")
    assert json.loads(out.out)["assignments"] == first["assignments"]


def test_the_table_names_the_topology_and_its_status(tmp_path, capsys):
    code, out = decide(tmp_path, capsys, CLUSTER)
    assert code == 0 and "topo-1" in out.out and "Fully Scheduled" in out.out


def test_bad_input_names_the_field_and_an_unknown_strategy_is_refused(tmp_path, capsys):
    broken = json.loads(json.dumps(CLUSTER))
    broken["topologies"][0]["components"][0]["parallelism"] = "two"
    code, out = decide(tmp_path, capsys, broken)
    assert code == 2 and "cluster.json" in out.err and "parallelism" in out.err
    code, out = decide(tmp_path, capsys, CLUSTER, "--system", "storm", "--strategy", "NoSuchStrategy")
    assert code == 2 and "NoSuchStrategy" in out.err
