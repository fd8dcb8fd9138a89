"""``clusteremu decide`` for Storm: the answer's shape, rounds chained through ``assignments``, defaults in
the explanation, and every input error with the path of the field."""
from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from clusteremu.base.errors import InputError
from clusteremu.strategies.storm.decide import decide, parse_request

PKG = "org.apache.storm.scheduler.resource.strategies."


def supervisor(i: int, **extra: Any) -> dict[str, Any]:
    return {"id": f"r000s{i:03d}", "host": f"host-{i:03d}-rack-000", "rack": "rack-000",
            "supervisor.cpu.capacity": 100.0, "supervisor.memory.capacity.mb": 1000.0,
            "supervisor.resources.map": {}, "ports": [6700, 6701, 6702, 6703], **extra}


def topology(name: str, user: str, priority: int, launch: int = -2, parallelism: int = 1, cpu: float = 100.0,
             **extra: Any) -> dict[str, Any]:
    return {"id": f"{name}-{launch}", "name": name, "topology.submitter.user": user, "topology.priority": priority,
            "launchTimeSecs": launch, "topology.worker.max.heap.size.mb": 1.7976931348623157e308,
            "components": [{"id": "spout-0", "type": "spout", "parallelism": parallelism,
                            "topology.component.cpu.pcore.percent": cpu,
                            "topology.component.resources.onheap.memory.mb": 500.0,
                            "topology.component.resources.offheap.memory.mb": 500.0,
                            "topology.component.resources.map": {}, "inputs": []}], **extra}


def request(topologies: list[dict[str, Any]], n: int = 4, **config: Any) -> dict[str, Any]:
    return {"config": {"resource.aware.scheduler.priority.strategy": PKG + "priority.DefaultSchedulingPriorityStrategy",
                       "resource.aware.scheduler.max.topology.scheduling.attempts": 5,
                       "storm.worker.min.cpu.pcore.percent": 0.0,
                       "resource.aware.scheduler.user.pools": {"jerry": {"cpu": 200.0, "memory": 2000.0},
                                                               "bobby": {"cpu": 100.0, "memory": 1000.0},
                                                               "derek": {"cpu": 200.0, "memory": 2000.0}},
                       **config},
            "nowSecs": 0, "supervisors": [supervisor(i) for i in range(n)], "topologies": topologies}


def run(obj: dict[str, Any], explain: bool = False, strategy: str = "DefaultResourceAwareStrategy") -> dict[str, Any]:
    out = decide(parse_request(json.loads(json.dumps(obj)), "in.json"), strategy, explain=explain)
    json.dumps(out)  # the answer is plain JSON
    return out


FIRST = [topology("topo-1", "jerry", 10), topology("topo-2", "bobby", 10), topology("topo-3", "bobby", 20),
         topology("topo-4", "derek", 29)]


def test_a_round_feeds_the_next_through_assignments() -> None:
    first = run(request(FIRST))
    assert all(t["fully_scheduled"] for t in first["topologies"].values())
    assert sorted(first["assignments"]) == ["topo-1--2", "topo-2--2", "topo-3--2", "topo-4--2"]
    second_in = request(FIRST + [topology("topo-6", "jerry", 20)])
    second_in["assignments"] = first["assignments"]
    second = run(second_in)
    assert second["order"] == ["topo-4", "topo-1", "topo-6", "topo-2", "topo-3"]
    assert second["evicted"] == {"topo-6": ["topo-3"]}
    assert second["topologies"]["topo-1"]["status"] == "Fully Scheduled"
    assert second["topologies"]["topo-3"]["fully_scheduled"] is False
    assert second["topologies"]["topo-3"]["workers"] == []
    assert "topo-3--2" not in second["assignments"]
    # running topologies keep their slots from one round to the next
    for topo_id in ("topo-1--2", "topo-2--2", "topo-4--2"):
        assert second["assignments"][topo_id] == first["assignments"][topo_id]
    # a third round with nothing new changes nothing
    third_in = request(FIRST + [topology("topo-6", "jerry", 20)])
    third_in["assignments"] = second["assignments"]
    third = run(third_in)
    assert third["assignments"] == second["assignments"]
    assert third["evicted"] == {}


def test_workers_are_charged_the_minimum_worker_cpu() -> None:
    obj = request([topology("small", "jerry", 0, parallelism=2, cpu=10.0)], n=1,
                  **{"storm.worker.min.cpu.pcore.percent": 50.0})
    obj["supervisors"][0]["supervisor.memory.capacity.mb"] = 4000.0
    (worker,) = run(obj)["topologies"]["small"]["workers"]
    assert worker["cpu"] == 50.0 and (worker["onheap_mb"], worker["offheap_mb"]) == (1000.0, 1000.0)
    assert worker["executors"] == [{"component": "spout-0", "index": 0}, {"component": "spout-0", "index": 1}]


def test_topology_strategy_wins_over_the_default() -> None:
    own = topology("own", "jerry", 0,
                   **{"topology.scheduler.strategy": PKG + "scheduling.GenericResourceAwareStrategy"})
    out = run(request([own, topology("plain", "jerry", 1)]), explain=True, strategy="DefaultResourceAwareStrategyOld")
    assert out["topologies"]["own"]["explain"]["strategy"] == PKG + "scheduling.GenericResourceAwareStrategy"
    assert out["topologies"]["plain"]["explain"]["strategy"] == PKG + "scheduling.DefaultResourceAwareStrategyOld"
    assert out["topologies"]["plain"]["status"].startswith(
        "Running - Fully Scheduled by DefaultResourceAwareStrategyOld")


def test_explain_lists_priority_picks_sorts_and_defaults() -> None:
    obj = request([{"id": "t-0", "name": "t", "topology.submitter.user": "nobody", "launchTimeSecs": 0,
                    "components": [{"id": "s", "type": "spout", "parallelism": 1}]}], n=1)
    del obj["config"]
    del obj["supervisors"][0]["ports"]
    out = run(obj, explain=True)
    explain = out["explain"]
    assert explain["generation"] == "2.x"
    # no pool: max(10 CPU / 100, 128 MB / 1000) with Storm's default requests
    assert explain["priority"] == [{"topology": "t", "user": "nobody", "score": 0.128, "scores": {"nobody": 0.128}}]
    defaults = {d["path"]: d["value"] for d in explain["defaults"]}
    assert defaults["config.resource.aware.scheduler.max.topology.scheduling.attempts"] == 5
    assert defaults["topologies[0].topology.priority"] == 29
    assert defaults["topologies[0].topology.worker.max.heap.size.mb"] == 768.0
    assert defaults["topologies[0].components[0].topology.component.cpu.pcore.percent"] == 10.0
    assert defaults["topologies[0].components[0].topology.component.resources.onheap.memory.mb"] == 128.0
    assert defaults["supervisors[0].ports"] == [6700, 6701, 6702, 6703]
    sorts = out["topologies"]["t"]["explain"]["sorts"]
    assert sorts[0]["attempt"] == 1 and sorts[0]["nodes"]["host-000-rack-000"][0]["id"] == "r000s000"
    assert "explain" not in run(obj)


def test_storm_test_values_are_valid() -> None:
    # nowSecs 0, launch times before it, no heap cap (Double.MAX_VALUE)
    obj = request([topology("t", "jerry", 0, launch=-250)], n=1)
    assert run(obj)["topologies"]["t"]["fully_scheduled"]


def test_storm_1x_round_is_selected_by_the_eviction_strategy_key() -> None:
    obj = request(FIRST, **{"resource.aware.scheduler.eviction.strategy": PKG + "eviction.DefaultEvictionStrategy"})
    first = run(obj, explain=True)
    assert first["explain"]["generation"] == "1.x"
    assert first["explain"]["eviction_strategy"] == PKG + "eviction.DefaultEvictionStrategy"
    second_in = copy.deepcopy(obj)
    second_in["topologies"].append(topology("topo-6", "jerry", 20))
    second_in["assignments"] = first["assignments"]
    second = run(second_in)
    assert second["evicted"] == {"topo-6": ["topo-3"]}
    assert second["order"] == ["topo-6", "topo-3"]


# ------------------------------------------------------------------------------------------ input errors

def broken(mutate) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    obj = request([topology("t", "jerry", 0), topology("u", "bobby", 1)], n=2)
    obj["assignments"] = {"t--2": [{"component": "spout-0", "index": 0, "supervisor": "r000s000", "port": 6700}]}
    mutate(obj)
    return obj


def _set(path: list[Any], value: Any):  # type: ignore[no-untyped-def]
    def mutate(obj: dict[str, Any]) -> None:
        target = obj
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


def _del(path: list[Any]):  # type: ignore[no-untyped-def]
    def mutate(obj: dict[str, Any]) -> None:
        target = obj
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return mutate


ERRORS = [
    (lambda obj: obj.clear() or obj.update({"x": 1}), "in.json: nowSecs: missing"),
    (_set(["nowSecs"], 1.5), "in.json: nowSecs: expected an integer"),
    (_set(["nowSecs"], True), "in.json: nowSecs: expected an integer"),
    (_set(["config"], []), "in.json: config: expected an object, got a list"),
    (_set(["config", "resource.aware.scheduler.max.topology.scheduling.attempts"], "many"),
     "in.json: config.resource.aware.scheduler.max.topology.scheduling.attempts: expected a number, got 'many'"),
    (_set(["config", "resource.aware.scheduler.max.topology.scheduling.attempts"], 0),
     "in.json: config.resource.aware.scheduler.max.topology.scheduling.attempts: must be >= 1"),
    (_set(["config", "resource.aware.scheduler.priority.strategy"], "Nope"),
     "in.json: config.resource.aware.scheduler.priority.strategy: unknown Storm 2.x priority strategy 'Nope'"),
    (_set(["config", "resource.aware.scheduler.eviction.strategy"], "Nope"),
     "in.json: config.resource.aware.scheduler.eviction.strategy: unknown Storm 1.x eviction strategy 'Nope'"),
    (_set(["config", "resource.aware.scheduler.user.pools"], {"jerry": {"cpu": "lots"}}),
     "in.json: config.resource.aware.scheduler.user.pools.jerry.cpu: expected a number"),
    (_del(["supervisors"]), "in.json: supervisors: missing"),
    (_set(["supervisors"], {}), "in.json: supervisors: expected a list, got an object"),
    (_set(["supervisors", 0], "r000s000"), "in.json: supervisors[0]: expected an object, got a string"),
    (_del(["supervisors", 1, "id"]), "in.json: supervisors[1].id: missing"),
    (_set(["supervisors", 1, "id"], "r000s000"), "in.json: supervisors[1].id: supervisor 'r000s000' listed twice"),
    (_set(["supervisors", 0, "host"], 7), "in.json: supervisors[0].host: expected a string, got a number"),
    (_set(["supervisors", 0, "rack"], 7), "in.json: supervisors[0].rack: expected a string"),
    (_set(["supervisors", 0, "supervisor.cpu.capacity"], None),
     "in.json: supervisors[0].supervisor.cpu.capacity: must not be null"),
    (_set(["supervisors", 0, "supervisor.memory.capacity.mb"], -1),
     "in.json: supervisors[0].supervisor.memory.capacity.mb: must be >= 0"),
    (_set(["supervisors", 0, "supervisor.resources.map"], {"gpu.count": "x"}),
     "in.json: supervisors[0].supervisor.resources.map.gpu.count: expected a number"),
    (_set(["supervisors", 0, "ports"], [6700, "6701"]), "in.json: supervisors[0].ports[1]: expected an integer"),
    (_set(["supervisors", 0, "ports"], [6700, 6700]), "in.json: supervisors[0].ports: a port is listed twice"),
    (_del(["topologies"]), "in.json: topologies: missing"),
    (_del(["topologies", 0, "name"]), "in.json: topologies[0].name: missing"),
    (_set(["topologies", 1, "name"], "t"), "in.json: topologies[1].name: topology name 't' listed twice"),
    (_set(["topologies", 1, "id"], "t--2"), "in.json: topologies[1].id: topology id 't--2' listed twice"),
    (_del(["topologies", 0, "topology.submitter.user"]), "in.json: topologies[0].topology.submitter.user: missing"),
    (_set(["topologies", 0, "topology.submitter.user"], ""),
     "in.json: topologies[0].topology.submitter.user: expected a non-empty string"),
    (_del(["topologies", 0, "launchTimeSecs"]), "in.json: topologies[0].launchTimeSecs: missing"),
    (_set(["topologies", 0, "topology.priority"], "high"),
     "in.json: topologies[0].topology.priority: expected a number"),
    (_set(["topologies", 0, "topology.worker.max.heap.size.mb"], [1]),
     "in.json: topologies[0].topology.worker.max.heap.size.mb: expected a number"),
    (_set(["topologies", 0, "topology.scheduler.strategy"], 3),
     "in.json: topologies[0].topology.scheduler.strategy: expected a string"),
    (_del(["topologies", 0, "components"]), "in.json: topologies[0].components: missing"),
    (_set(["topologies", 0, "components", 0, "parallelism"], "2"),
     "in.json: topologies[0].components[0].parallelism: expected an integer"),
    (_set(["topologies", 0, "components", 0, "parallelism"], -1),
     "in.json: topologies[0].components[0].parallelism: must be >= 0"),
    (_del(["topologies", 0, "components", 0, "parallelism"]),
     "in.json: topologies[0].components[0].parallelism: missing"),
    (_set(["topologies", 0, "components", 0, "type"], "sink"),
     "in.json: topologies[0].components[0].type: expected \"spout\" or \"bolt\""),
    (_set(["topologies", 0, "components", 0, "inputs"], ["nowhere"]),
     "in.json: topologies[0].components[0].inputs[0]: 'nowhere' is not a component of t"),
    (_set(["topologies", 0, "components", 0, "topology.component.cpu.pcore.percent"], "x"),
     "in.json: topologies[0].components[0].topology.component.cpu.pcore.percent: expected a number"),
    (_set(["topologies", 0, "components", 0, "topology.component.resources.map"], {"gpu.count": -1}),
     "in.json: topologies[0].components[0].topology.component.resources.map: must be >= 0"),
    (_set(["topologies", 0, "components", 0, "cpu"], 1),
     "in.json: topologies[0].components[0].cpu: unknown component field"),
    (lambda obj: obj["topologies"][0]["components"].append(dict(obj["topologies"][0]["components"][0])),
     "in.json: topologies[0].components[1].id: component 'spout-0' listed twice"),
    (_set(["assignments"], []), "in.json: assignments: expected an object, got a list"),
    (_set(["assignments", "ghost"], []), "in.json: assignments.ghost: not the id of a topology"),
    (_set(["assignments", "t--2", 0, "component"], "bolt-9"),
     "in.json: assignments.t--2[0].component: 'bolt-9' is not a component of t"),
    (_set(["assignments", "t--2", 0, "index"], 1), "in.json: assignments.t--2[0].index: expected 0..0"),
    (_set(["assignments", "t--2", 0, "supervisor"], "elsewhere"),
     "in.json: assignments.t--2[0].supervisor: 'elsewhere' is not a supervisor"),
    (_set(["assignments", "t--2", 0, "port"], 9999), "in.json: assignments.t--2[0].port: 9999 is not a port"),
    (_del(["assignments", "t--2", 0, "port"]), "in.json: assignments.t--2[0].port: missing"),
    (lambda obj: obj["assignments"]["t--2"].append(dict(obj["assignments"]["t--2"][0])),
     "in.json: assignments.t--2[1]: executor spout-0[0] is assigned twice"),
    (_set(["assignments", "u--2"], [{"component": "spout-0", "index": 0, "supervisor": "r000s000", "port": 6700}]),
     "in.json: assignments.u--2[0]: slot r000s000:6700 is already used by topology t--2"),
]


@pytest.mark.parametrize("mutate, message", ERRORS)
def test_input_errors_name_the_field(mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as err:
        parse_request(broken(mutate), "in.json")
    assert str(err.value).startswith(message)


def test_the_input_must_be_an_object() -> None:
    with pytest.raises(InputError, match="^in.json: expected an object, got a list$"):
        parse_request([], "in.json")


def test_unknown_default_strategy_is_an_input_error_but_a_topologys_own_is_storms_status() -> None:
    req = parse_request(request([topology("t", "jerry", 0)], n=1), "in.json")
    with pytest.raises(InputError, match="^default strategy: unknown Storm 2.x scheduling strategy 'Nope'"):
        decide(req, "Nope")
    own = topology("t", "jerry", 0, **{"topology.scheduler.strategy": "com.example.Mine"})
    out = run(request([own], n=1))
    assert out["topologies"]["t"]["status"].startswith("Unsuccessful in scheduling - failed to create instance of "
                                                       "topology strategy com.example.Mine")


def test_an_empty_cluster_schedules_nothing_and_says_why() -> None:
    obj = request([topology("t", "jerry", 0)], n=0)
    out = run(obj, explain=True)
    assert out["order"] == ["t"]
    assert out["topologies"]["t"]["fully_scheduled"] is False
    assert out["topologies"]["t"]["status"].startswith("Not enough resources to schedule after evicting")
    assert out["explain"]["priority"][0]["score"] == 1.7976931348623157e308  # no capacity: MAX_VALUE
    assert out["assignments"] == {}


def test_a_components_nested_resources_map_is_taken_as_storm_takes_it() -> None:
    # A GPU request in the nested topology.component.resources.map (as Storm's addResource writes it), on a
    # cluster where one supervisor of four has a GPU: the executor goes there, with GenericResourceAwareStrategy
    # (which considers generic resources); the map's entry with a config name wins over the flat CPU key.
    topo = topology("vision", "jerry", 10, cpu=20.0)
    topo["components"][0]["topology.component.resources.map"] = {"gpu.count": 1.0,
                                                                 "topology.component.cpu.pcore.percent": 30.0}
    obj = request([topo])
    obj["supervisors"][2]["supervisor.resources.map"] = {"gpu.count": 1.0}
    out = run(obj, strategy="GenericResourceAwareStrategy")
    (worker,) = out["topologies"]["vision"]["workers"]
    assert worker["supervisor"] == "r000s002" and worker["cpu"] == 30.0
    assert out["topologies"]["vision"]["fully_scheduled"] is True
    two = copy.deepcopy(obj)
    two["topologies"][0]["components"][0]["parallelism"] = 2  # two GPUs asked, one offered: it cannot fit
    assert run(two, strategy="GenericResourceAwareStrategy")["topologies"]["vision"]["fully_scheduled"] is False
