"""Placements of Storm's own strategy tests (TestDefaultResourceAwareStrategy, TestGenericResourceAwareStrategy,
TestNodeSorterHostProximity, TestRoundRobinNodeSorterHostIsolation), restated as data and run through the
strategies directly (a scheduling round without eviction is: run the strategy on a copy, keep it on success)."""
from __future__ import annotations

import pytest

from clusteremu.strategies.storm.cluster import ClusterState
from clusteremu.strategies.storm.scheduling import STRATEGIES, SchedulingResult
from clusteremu.strategies.storm.topology import Component, Executor, Topology

from ..clusters import (
    CURRENT_TIME,
    DOUBLE_MAX,
    cluster_conf,
    gen_executors,
    gen_supervisors,
    gen_supervisors_with_racks,
    gen_topology,
    make_state,
    rack_of_supervisor_id,
)


def run(state: ClusterState, td: Topology, strategy: str) -> SchedulingResult:
    """One topology's scheduling without eviction: the strategy on a copy, kept only on success."""
    attempt = state.copy()
    result = STRATEGIES[strategy]().schedule(attempt, td)
    if result.is_success():
        state.update_from(attempt)
    return result


def workers(state: ClusterState, td: Topology) -> set[frozenset[int]]:
    """The topology's workers as sets of start task ids."""
    return {frozenset(e.start_task for e in execs) for execs in state.slot_to_executors(td.id).values()}


def racks_used(state: ClusterState, *tds: Topology) -> set[str]:
    return {state.host_to_rack(state.supervisors[s.node_id].host)
            for td in tds for s in state.used_slots_by_topology(td.id)}


def chain_topology(conf, gpu: bool = False) -> Topology:
    """spout(1) → bolt-1(2) → bolt-2(2) → bolt-3(2), as in the upstream acker tests with no ackers.
    Java's HashMap puts the bolts in the order bolt-1, bolt-3, bolt-2: tasks 1-2, 3-4, 5-6."""
    comps = [Component("spout", 1, "spout"),
             Component("bolt-1", 2, "bolt", ("spout",)),
             Component("bolt-2", 2, "bolt", ("bolt-1",), resources={"gpu.count": 1.0} if gpu else {}),
             Component("bolt-3", 2, "bolt", ("bolt-2",), resources={"gpu.count": 2.0} if gpu else {})]
    return Topology("testTopology-id", comps, conf, name="testTopology", user="user", launch_time=CURRENT_TIME,
                    executors=gen_executors(comps), num_workers=0)


@pytest.mark.parametrize("strategy", ["DefaultResourceAwareStrategy", "DefaultResourceAwareStrategyOld"])
def test_default_strategy_packs_the_chain_into_two_workers(strategy):
    # testDefaultResourceAwareStrategyWithoutSettingAckerExecutors, 0 ackers per worker
    conf = cluster_conf(50, 450, 0, **{"topology.worker.max.heap.size.mb": 2000, "topology.priority": 0})
    td = chain_topology(conf)
    assert [td.component_of(Executor(t, t)) for t in (1, 3, 5)] == ["bolt-1", "bolt-3", "bolt-2"]
    state = make_state(gen_supervisors(4, 4, 200, 2000), [td], conf)
    result = run(state, td, strategy)
    assert result.is_success()
    assert result.message == f"Fully Scheduled by {strategy} (7 states traversed in 0 ms, backtracked 0 times)"
    assert workers(state, td) == {frozenset({6, 2, 4, 5}), frozenset({0, 3, 1})}


@pytest.mark.parametrize("strategy", ["GenericResourceAwareStrategy", "GenericResourceAwareStrategyOld"])
def test_generic_strategy_spreads_the_gpu_bolts(strategy):
    # testGenericResourceAwareStrategyWithoutSettingAckerExecutors, 0 ackers per worker: 2 GPUs per supervisor,
    # bolt-3 (tasks 3, 4) needs 2 GPUs each, bolt-2 (tasks 5, 6) one each
    conf = cluster_conf(50, 500, 0, generic={}, strategy=strategy,
                        **{"topology.worker.max.heap.size.mb": 2000, "topology.priority": 0})
    td = chain_topology(conf, gpu=True)
    state = make_state(gen_supervisors(4, 4, 200, 2000, generic={"gpu.count": 2.0}), [td], conf)
    assert run(state, td, strategy).is_success()
    assert workers(state, td) == {frozenset({3}), frozenset({6, 2, 5, 1}), frozenset({0, 4})}


def six_racks(racks, names=None):
    sups = {}
    for k, (cpu, mem) in enumerate(racks):
        sups.update(gen_supervisors(10, 4, cpu, mem, start=10 * k, rack=(names or "rack-{}").format(k)))
    return sups


def test_old_default_strategy_keeps_topologies_on_one_rack():
    # TestDefaultResourceAwareStrategy.testMultipleRacks: DEFAULT_RAS puts topo-1 on rack-0; topo-2, half placed
    # by hand on rack-1, is completed on rack-1
    sups = six_racks([(400, 8000), (200, 4000), (0, 8000), (10, 20000), (610, 1000)])
    sups.update(gen_supervisors(10, 4, 0.0, 0.0, start=50, rack="rack-5", generic={"gpu.count": 0.0}))
    conf = cluster_conf(100, 500, 500, strategy="DefaultResourceAwareStrategyOld",
                        **{"topology.worker.max.heap.size.mb": DOUBLE_MAX})
    t1 = gen_topology("topo-1", conf, 8, 0, 2, 0, CURRENT_TIME - 2, 10, "user")
    t2 = gen_topology("topo-2", conf, 8, 0, 2, 0, CURRENT_TIME - 2, 10, "user")
    state = make_state(sups, [t1, t2], conf)
    assert STRATEGIES["DefaultResourceAwareStrategyOld"]().schedule(state, t1).is_success()
    assert racks_used(state, t1) == {"rack-0"}
    assert not state.unassigned_executors(t1)
    rack1 = sorted(i for i in sups if sups[i].rack == "rack-1")
    for k, ex in enumerate(t2.executors[: len(t2.executors) // 2]):
        node = rack1[k % len(rack1)]
        state.assign(state.free_slots_on_node(node)[0], t2.id, [ex])
    assert STRATEGIES["DefaultResourceAwareStrategyOld"]().schedule(state, t2).is_success()
    assert racks_used(state, t2) == {"rack-1"}
    assert not state.unassigned_executors(t2)


def test_new_default_strategy_starts_on_the_cpu_rich_rack():
    # the same cluster under the 2.x order: rack-4 (610 % cpu, 1000 MB per node) ranks first, so the first
    # executors (100 % cpu, 1000 MB each) land there, one per node, and the rest spill to the next rack
    sups = six_racks([(400, 8000), (200, 4000), (0, 8000), (10, 20000), (610, 1000)])
    conf = cluster_conf(100, 500, 500, **{"topology.worker.max.heap.size.mb": DOUBLE_MAX})
    t1 = gen_topology("topo-1", conf, 8, 0, 2, 0, CURRENT_TIME - 2, 10, "user")
    state = make_state(sups, [t1], conf)
    assert STRATEGIES["DefaultResourceAwareStrategy"]().schedule(state, t1).is_success()
    per_rack: dict[str, int] = {}
    for slot, execs in state.slot_to_executors(t1.id).items():
        rack = state.supervisors[slot.node_id].rack
        per_rack[rack] = per_rack.get(rack, 0) + len(execs)
    assert per_rack["rack-4"] == 10 and sum(per_rack.values()) == 16
    assert set(per_rack) == {"rack-4", "rack-0"}


def test_old_default_strategy_with_favored_and_unfavored_hosts():
    # testMultipleRacksWithFavoritism, with favoured hosts that exist: rack-1's hosts hold two executors each
    sups = six_racks([(400, 8000), (200, 4000), (0, 8000), (10, 20000), (610, 1000)])
    conf = cluster_conf(100, 500, 500, strategy="DefaultResourceAwareStrategyOld",
                        **{"topology.worker.max.heap.size.mb": DOUBLE_MAX})
    favored = ["host-011-rack-000", "host-012-rack-000", "host-013-rack-000"]
    unfavored = ["host-001-rack-000", "host-002-rack-000", "host-003-rack-000"]
    t1 = gen_topology("topo-1", dict(conf, **{"topology.scheduler.favored.nodes": favored,
                                             "topology.scheduler.unfavored.nodes": unfavored}),
                      8, 0, 2, 0, CURRENT_TIME - 2, 10, "user")
    state = make_state(sups, [t1], conf)
    assert STRATEGIES["DefaultResourceAwareStrategyOld"]().schedule(state, t1).is_success()
    hosts = [state.supervisors[s.node_id].host for s, execs in state.slot_to_executors(t1.id).items()
             for _ in execs]
    assert sorted(h for h in hosts if h in favored) == sorted(favored * 2)
    assert not set(hosts) & set(unfavored)
    assert all(h in favored or state.host_to_rack(h) == "rack-0" for h in hosts)


def test_gpu_topology_does_not_push_the_plain_one_onto_the_gpu_rack():
    # testAntiAffinityWithMultipleTopologies: the plain topology stays on the rack without GPUs, and the GPU
    # topology still fits (40 GPUs on rack-001, one per supervisor)
    sups = gen_supervisors_with_racks(1, 40, 66, 0, 0, 4700, 226200)
    sups.update(gen_supervisors_with_racks(1, 40, 66, 1, 0, 4700, 226200, {"my.gpu": 1.0}))
    conf = cluster_conf(88, 775, 25, strategy="GenericResourceAwareStrategy")
    simple = gen_topology("topology-simple", conf, 1, 5, 100, 300, 0, 0, "user", 8192)
    gpu_bolt = Component("gpu-bolt", 40, "bolt", ("spout-0",), resources={"my.gpu": 1.0})
    gpu = gen_topology("topology-gpu", conf, 1, 5, 100, 300, 0, 0, "user", 8192, extra=[gpu_bolt])
    state = make_state(sups, [simple, gpu], conf)
    assert run(state, simple, "GenericResourceAwareStrategy").is_success()
    assert {rack_of_supervisor_id(s.node_id) for s in state.used_slots_by_topology(simple.id)} == {"r000"}
    assert run(state, gpu, "GenericResourceAwareStrategy").is_success()
    gpu_nodes = {state.slot_of(gpu.id, e).node_id for e in gpu.component_executors("gpu-bolt")}
    assert len(gpu_nodes) == 40 and all(n.startswith("r001") for n in gpu_nodes)


def spill_cluster(comp_per_super: int, ports: int = 6):
    cpu, mem = 100.0 * comp_per_super, (775 + 25) * comp_per_super
    sups = gen_supervisors_with_racks(3, 10, ports, 0, 0, cpu, mem)
    for sup_id, sup in list(sups.items()):  # racks named by the supervisor id (the tests' DNS mapping)
        sups[sup_id] = type(sup)(sup.id, sup.host, sup.cpu, sup.memory_mb, sup.generic, sup.ports,
                                 rack_of_supervisor_id(sup.id))
    return sups, mem


def test_fill_up_a_rack_and_spill_over_to_the_next_only():
    # testFillUpRackAndSpilloverToNextRack: 1100 executors, a rack holds 880
    sups, mem = spill_cluster((100 + 5 * 200) * 4 // 5 // 10)
    conf = cluster_conf(100, 775, 25, strategy="GenericResourceAwareStrategy", generic={})
    td = gen_topology("topology1", conf, 1, 5, 100, 200, 0, 0, "user", mem)
    state = make_state(sups, [td], conf)
    assert run(state, td, "GenericResourceAwareStrategy").is_success()
    assert len(racks_used(state, td)) == 2


def test_prefer_the_rack_that_already_runs_the_topology():
    # testPreferRackWithTopoExecutors: topology1 fits on one rack; topology2 then takes another (empty) rack;
    # after some of topology1's workers are freed, it is completed on its own rack
    sups, mem = spill_cluster((100 + 5 * 200 + 10) // 10)
    conf = cluster_conf(100, 775, 25, strategy="GenericResourceAwareStrategy", generic={})
    t1 = gen_topology("topology1", conf, 1, 5, 100, 200, 0, 0, "user", mem)
    t2 = gen_topology("topology2", conf, 1, 5, 10, 20, 0, 0, "user", mem)
    state = make_state(sups, [t1, t2], conf)
    assert run(state, t1, "GenericResourceAwareStrategy").is_success()
    assert len(racks_used(state, t1)) == 1
    assert run(state, t2, "GenericResourceAwareStrategy").is_success()
    assert len(racks_used(state, t1, t2)) == 2 and len(racks_used(state, t2)) == 1
    state.unassign(t2.id)
    assert racks_used(state, t2) == set()
    slots = state.used_slots_by_topology(t1.id)
    state.free_slots(slots[4::5])  # every fifth worker
    assert state.needs_scheduling(t1)
    assert run(state, t1, "GenericResourceAwareStrategy").is_success()
    assert len(racks_used(state, t1)) == 1


def test_round_robin_isolated_machines():
    # TestRoundRobinNodeSorterHostIsolation.testTopologyIsolation: 15 and 13 machines, never shared
    sups, mem = spill_cluster((100 + 200 + 100) // 10)
    conf = cluster_conf(100, 775, 25, strategy="RoundRobinResourceAwareStrategy", generic={})
    t1 = gen_topology("topology1", dict(conf, **{"topology.isolated.machines": 15}), 1, 1, 100, 200, 0, 0,
                      "user", mem)
    t2 = gen_topology("topology2", dict(conf, **{"topology.isolated.machines": 13}), 1, 1, 100, 200, 0, 0,
                      "user", mem)
    state = make_state(sups, [t1, t2], conf)
    assert run(state, t1, "RoundRobinResourceAwareStrategy").is_success()
    assert len(racks_used(state, t1)) == 2
    assert run(state, t2, "RoundRobinResourceAwareStrategy").is_success()
    assert len(racks_used(state, t1, t2)) == 3
    nodes1 = [s.node_id for s in state.used_slots_by_topology(t1.id)]
    nodes2 = [s.node_id for s in state.used_slots_by_topology(t2.id)]
    assert len(nodes1) == 15 and len(nodes2) == 13
    assert not set(nodes1) & set(nodes2)
    assert len(racks_used(state, t2)) == 2
    state.unassign(t2.id)
    assert len(racks_used(state, t1)) == 2
    state.free_slots(state.used_slots_by_topology(t1.id)[4::5])
    assert state.needs_scheduling(t1)
    assert run(state, t1, "RoundRobinResourceAwareStrategy").is_success()
    assert len(racks_used(state, t1)) == 2


def test_round_robin_distributes_over_all_racks():
    # TestRoundRobinNodeSorterHostProximity.testDistributeOverRacks / testDistributeAcrossRacks
    sups, mem = spill_cluster((100 + 5 * 200) * 4 // 5 // 10)
    conf = cluster_conf(100, 775, 25, strategy="RoundRobinResourceAwareStrategy", generic={})
    td = gen_topology("topology1", conf, 1, 5, 100, 200, 0, 0, "user", mem)
    state = make_state(sups, [td], conf)
    assert run(state, td, "RoundRobinResourceAwareStrategy").is_success()
    assert len(racks_used(state, td)) == 3

    sups, mem = spill_cluster((100 + 5 * 200 + 10) // 10)
    t1 = gen_topology("topology1", conf, 1, 5, 100, 200, 0, 0, "user", mem)
    t2 = gen_topology("topology2", conf, 1, 5, 10, 20, 0, 0, "user", mem)
    state = make_state(sups, [t1, t2], conf)
    assert run(state, t1, "RoundRobinResourceAwareStrategy").is_success()
    assert len(racks_used(state, t1)) == 3
    # every node now runs topology1, so round robin finds no node for topology2
    assert run(state, t2, "RoundRobinResourceAwareStrategy").is_failure()
    assert racks_used(state, t2) == set()
    state.free_slots(state.used_slots_by_topology(t1.id)[4::5])
    assert state.needs_scheduling(t1)
    assert run(state, t1, "RoundRobinResourceAwareStrategy").is_success()
    assert len(racks_used(state, t1)) == 3
