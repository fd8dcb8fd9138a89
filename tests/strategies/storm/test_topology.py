"""Topologies: Storm's task numbering, per-executor requests, the Java orders of executors, the component graph."""
from __future__ import annotations

import pytest

from clusteremu.base.errors import InputError
from clusteremu.strategies.storm.topology import Component, Executor, Topology, is_system_component, storm_executors


def test_storm_task_numbering():
    comps = [Component("spout", 2, "spout"), Component("bolt", 3, "bolt", ("spout",), tasks=5),
             Component("__acker", 1, "bolt", tasks=1), Component("idle", 0, "bolt")]
    pairs = storm_executors(comps)
    # components by id ("__acker" < "bolt" < "idle" < "spout"), tasks from 1; 5 tasks on 3 executors: 2, 2, 1
    assert pairs == [("__acker", Executor(1, 1)), ("bolt", Executor(2, 3)), ("bolt", Executor(4, 5)),
                     ("bolt", Executor(6, 6)), ("spout", Executor(7, 7)), ("spout", Executor(8, 8))]


def test_requests_from_topology_conf_and_component_overrides():
    conf = {"topology.component.cpu.pcore.percent": 20, "topology.component.resources.onheap.memory.mb": 256,
            "topology.component.resources.map": {"gpu.count": 1, "cpu.pcore.percent": 30},
            "topology.acker.resources.onheap.memory.mb": 64}
    td = Topology("t", [Component("s", 1, "spout"),
                        Component("b", 1, "bolt", ("s",),
                                  resources={"topology.component.resources.onheap.memory.mb": 512, "gpu.count": 0}),
                        Component("__acker", 1, "bolt")], conf)
    s, b, acker = (td.component_request(c) for c in ("s", "b", "__acker"))
    # the resources map wins over the cpu key (put-if-missing), the component over both
    assert (s.cpu, s.on_heap, s.off_heap, s.generic) == (30.0, 256.0, 0.0, {"gpu.count": 1.0})
    assert (b.cpu, b.on_heap, b.generic) == (30.0, 512.0, {"gpu.count": 0.0})
    assert (acker.cpu, acker.on_heap) == (30.0, 64.0)
    assert td.total_requested_cpu() == 90.0
    assert td.total_requested_memory() == 256 + 512 + 64
    assert td.total_requested_generic() == {"gpu.count": 2.0}


def test_a_components_nested_resources_map_is_read_as_storms_component_json_conf():
    # A component declared as Storm's own tests declare them (setCPULoad, setMemoryLoad, addResource("gpu.count")):
    # its JSON conf holds the three flat keys and topology.component.resources.map with the generic amounts.
    conf = {"topology.component.cpu.pcore.percent": 10, "topology.component.resources.onheap.memory.mb": 128}
    declared = {"topology.component.cpu.pcore.percent": 50.0, "topology.component.resources.onheap.memory.mb": 250.0,
                "topology.component.resources.offheap.memory.mb": 0.0,
                "topology.component.resources.map": {"gpu.count": 1.0}}
    td = Topology("t", [Component("spout", 1, "spout", resources=declared),
                        Component("bolt", 2, "bolt", ("spout",), resources={
                            # an entry of the map with a config name overwrites the flat key (parseResources)
                            "topology.component.cpu.pcore.percent": 50.0,
                            "topology.component.resources.map": {"topology.component.cpu.pcore.percent": 70.0,
                                                                 "onheap.memory.mb": 300.0, "fpga.count": 2}})],
                  conf)
    spout, bolt = td.component_request("spout"), td.component_request("bolt")
    assert (spout.cpu, spout.on_heap, spout.off_heap, spout.generic) == (50.0, 250.0, 0.0, {"gpu.count": 1.0})
    assert (bolt.cpu, bolt.on_heap, bolt.generic) == (70.0, 300.0, {"fpga.count": 2.0})
    assert td.total_requested_generic() == {"gpu.count": 1.0, "fpga.count": 4.0}


@pytest.mark.parametrize(("resources", "where"), [
    ({"topology.component.resources.map": {"gpu.count": "one"}},
     "resources.topology.component.resources.map.gpu.count"),
    ({"topology.component.resources.map": 3}, "resources.topology.component.resources.map"),
    ({"topology.component.cpu.pcore.percent": True}, "resources.topology.component.cpu.pcore.percent"),
])
def test_a_bad_resource_amount_names_its_path(resources, where):
    with pytest.raises(InputError) as err:
        Topology("t", [Component("spout", 1, "spout", resources=resources)]).component_request("spout")
    assert f"component spout.{where}" in err.value.where


def test_defaults_and_overrides_of_identity():
    td = Topology("t-1", [Component("s", 1, "spout")], {"topology.priority": 5, "topology.name": "t"},
                  user="alice", launch_time=100, worker_max_heap_mb=1024.0)
    assert (td.name, td.user, td.priority, td.launch_time, td.worker_max_heap_mb) == ("t", "alice", 5, 100, 1024.0)
    plain = Topology("p", [Component("s", 1, "spout")])
    assert (plain.name, plain.user, plain.priority, plain.worker_max_heap_mb) == ("p", None, 29, 768.0)
    assert plain.up_time(130) == 130


def test_executor_order_follows_java_hash_buckets():
    # five executors (1,1)..(5,5): hash 14t, table of 8 buckets → buckets 6, 4, 2, 0, 6
    td = Topology("t", [Component("s", 2, "spout"), Component("b", 3, "bolt", ("s",))])
    assert [e.start_task for e in td.executors] == [4, 3, 2, 1, 5]
    assert td.component_executors("b") == (Executor(3, 3), Executor(2, 2), Executor(1, 1))  # "b" < "s": tasks 1-3
    assert [e.start_task for e in td.component_executors("s")] == [4, 5]
    assert td.executor_label(Executor(5, 5)) == {"component": "s", "index": 1}
    assert Executor(3, 4).java_hash() == 3 + 13 * 4


def test_graph():
    td = Topology("t", [Component("s", 1, "spout"), Component("a", 1, "bolt", ("s",)),
                        Component("b", 1, "bolt", ("s", "a")), Component("__system", 0, "bolt")])
    assert td.children("s") == {"a", "b"} and td.parents("b") == {"s", "a"}
    assert td.neighbors("a") == {"s", "b"}
    assert td.has_spouts()
    assert [c.id for c in td.user_components()] == ["s", "a", "b"]
    assert is_system_component("__acker") and not is_system_component("_x")
    assert not Topology("x", [Component("__s", 1, "spout")]).has_spouts()


@pytest.mark.parametrize(("comps", "executors"), [
    ([Component("s", 1, "spout"), Component("s", 1, "bolt")], None),
    ([Component("b", 1, "bolt", ("nope",))], None),
    ([Component("s", 1, "spout")], [("zz", Executor(1, 1))]),
    ([Component("s", 1, "spout")], [("s", Executor(1, 1)), ("s", Executor(1, 1))]),
])
def test_bad_topologies(comps, executors):
    with pytest.raises(InputError):
        Topology("t", comps, executors=executors)


def test_bad_component_resources():
    with pytest.raises(InputError):
        Topology("t", [Component("s", 1, "spout", resources={"gpu.count": "two"})])
    with pytest.raises(InputError):
        Component("s", -1)
    with pytest.raises(InputError):
        Topology("t", [Component("s", 1, "spout")], {"topology.priority": "high"})
