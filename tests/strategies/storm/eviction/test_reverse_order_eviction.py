"""Storm 2.x eviction bookkeeping: the cluster-wide sum check and the walk from the end of the order."""
from __future__ import annotations

from clusteremu.strategies.storm.eviction import SchedulingResources, select_evictions
from clusteremu.strategies.storm.resources import ResourceOffer, ResourceRequest


def req(cpu: float, on: float, off: float = 0.0, **generic: float) -> ResourceRequest:
    return ResourceRequest(cpu, on, off, {k.replace("_", "."): v for k, v in generic.items()})


def test_sum_check_counts_what_is_already_scheduled() -> None:
    # 50 CPU free, the topology needs 100 and already has 60 placed: 50 + 60 >= 100
    res = SchedulingResources(ResourceOffer(50.0, 1000.0), req(100, 500), req(60, 300), 300.0)
    assert res.can_schedule()
    res = SchedulingResources(ResourceOffer(30.0, 1000.0), req(100, 500), req(60, 300), 300.0)
    assert not res.can_schedule()


def test_generic_shortage_fails_the_sum_check() -> None:
    res = SchedulingResources(ResourceOffer(400.0, 4000.0, {"gpu.count": 1.0}), req(10, 10, gpu_count=2.0),
                              req(0, 0), 0.0)
    assert not res.can_schedule()


def test_message_lists_memory_and_cpu_in_java_formatting() -> None:
    res = SchedulingResources(ResourceOffer(0.0, 0.0), req(100, 500, 500), req(0, 0), 0.0)
    res.set_remaining(req(0, 0), 0.0)
    assert res.remaining_message() == (
        "Additional Memory Required: 1000.0 MB (Available: 0.0 MB). "
        "Additional CPU Required: 100.0% CPU (Available: 0.0 % CPU).")


def test_message_lists_generic_resources() -> None:
    res = SchedulingResources(ResourceOffer(400.0, 4000.0, {"gpu.count": 1.0}), req(10, 10, gpu_count=2.0),
                              req(0, 0), 0.0)
    res.set_remaining(req(0, 0), 0.0)
    msg = res.remaining_message()
    assert msg.startswith("Additional Memory Required: 10.0 MB (Available: 4000.0 MB). "
                          "Additional CPU Required: 10.0% CPU (Available: 400.0 % CPU).")
    assert " Additional Topology Required Resources: Normalized resources: {" in msg
    assert "gpu.count=2.0" in msg and "Cluster Available Resources:" in msg and msg.endswith(".  ")


def test_walk_from_the_end_stops_once_enough_is_evicted() -> None:
    order = ["a", "b", "c", "d", "e"]
    placed = {"a": req(100, 1000), "c": req(100, 1000), "d": req(100, 1000), "e": req(100, 1000)}
    res = SchedulingResources(ResourceOffer(0.0, 0.0), req(200, 2000), req(0, 0), 0.0)
    assert not res.can_schedule()
    res.set_remaining(req(0, 0), 0.0)
    evicted = select_evictions(order, "b", placed.__contains__, lambda t: (placed[t], placed[t].memory), res)
    assert evicted == ["e", "d"]  # two are enough; c stays
    assert res.can_schedule()


def test_walk_never_reaches_the_topology_itself_or_anything_before_it() -> None:
    order = ["a", "b", "c"]
    placed = {"a": req(100, 1000), "b": req(100, 1000)}
    res = SchedulingResources(ResourceOffer(0.0, 0.0), req(100, 1000), req(0, 0), 0.0)
    res.set_remaining(req(0, 0), 0.0)
    assert select_evictions(order, "c", placed.__contains__, lambda t: (placed[t], 1000.0), res) == []
    assert select_evictions(order, "b", placed.__contains__, lambda t: (placed[t], 1000.0), res) == []


def test_walk_evicts_everything_after_when_the_need_cannot_be_met() -> None:
    # the remaining generic need is never covered: every later topology is evicted, none enough
    order = ["x", "y", "z"]
    placed = {"y": req(10, 10), "z": req(10, 10)}
    res = SchedulingResources(ResourceOffer(400.0, 4000.0, {"g": 1.0}), req(10, 10, g=2.0), req(0, 0), 0.0)
    res.set_remaining(req(0, 0), 0.0)
    assert select_evictions(order, "x", placed.__contains__, lambda t: (placed[t], 10.0), res) == ["z", "y"]
    assert not res.can_schedule()
