"""The scheduling state: slots, assignments, what workers are charged, what nodes have left, wouldFit, copies."""
from __future__ import annotations

import pytest

from clusteremu.base.errors import InputError
from clusteremu.strategies.storm.cluster import ClusterState, Supervisor, WorkerSlot
from clusteremu.strategies.storm.resources import ResourceOffer
from clusteremu.strategies.storm.topology import Component, Executor, Topology


def simple(conf=None, **kw):
    conf = dict(conf or {})
    td = Topology("t", [Component("s", 2, "spout"), Component("b", 2, "bolt", ("s",))],
                  dict({"topology.component.cpu.pcore.percent": 10,
                        "topology.component.resources.onheap.memory.mb": 100,
                        "topology.component.resources.offheap.memory.mb": 20}, **conf), **kw)
    other = Topology("o", [Component("s", 1, "spout")], {"topology.component.cpu.pcore.percent": 50})
    sups = [Supervisor("n1", "h1", 400, 4000, {"gpu.count": 2}), Supervisor("n2", "h2", 200, 2000, rack="r2"),
            Supervisor("n3", "h3", 100, 1000, ports=(1, 2))]
    return td, other, sups


def test_slot_order_is_storms_hashset_order():
    state = ClusterState([Supervisor("r000s000", "h", ports=(0, 1, 2, 3)), Supervisor("n1", "h1")])
    # WorkerSlot.hashCode() = node hash + 13 * port; buckets of a 16-bucket table: 8, 11, 6, 1 for ports 0..3
    assert [s.port for s in state.node_slot_order("r000s000")] == [3, 2, 0, 1]
    assert [s.port for s in state.node_slot_order("n1")] == [6703, 6702, 6701, 6700]
    assert WorkerSlot("n1", 6700).id == "n1:6700"


def test_assign_charge_and_available():
    td, other, sups = simple({"storm.worker.min.cpu.pcore.percent": 0})
    state = ClusterState(sups, [td, other], {"storm.worker.min.cpu.pcore.percent": 25.0})
    slot = WorkerSlot("n1", 6700)
    state.assign(slot, td.id, [Executor(1, 1)])
    assert state.worker_resources(slot).cpu == 25.0  # one executor of 10 %, charged the 25 % minimum
    assert state.available_resources("n1") == ResourceOffer(375, 4000 - 120, {"gpu.count": 2})
    state.assign_executor(slot, td, Executor(2, 2))
    state.assign_executor(slot, td, Executor(3, 3))
    assert state.worker_resources(slot).cpu == 30.0
    assert state.executors_on_slot(slot) == (Executor(1, 1), Executor(2, 2), Executor(3, 3))
    assert state.available_resources("n1").cpu == 370 and state.available_resources("n1").memory == 4000 - 360
    assert state.scheduled_resources_for_node("n1").memory == 360
    assert state.topology_scheduled_resources(td.id).cpu == 30
    state.free_executor(td, Executor(2, 2))
    assert state.executors_on_slot(slot) == (Executor(1, 1), Executor(3, 3))
    assert state.slot_of(td.id, Executor(2, 2)) is None and state.slot_of(td.id, Executor(3, 3)) == slot
    assert state.unassigned_executors(td) == [e for e in td.executors if e not in (Executor(1, 1), Executor(3, 3))]
    assert state.needs_scheduling(td) and state.assigned_num_workers(td.id) == 1
    state.unassign(td.id)
    assert not state.is_assigned(td.id) and state.available_resources("n1").cpu == 400


def test_slots_are_never_shared():
    td, other, sups = simple()
    state = ClusterState(sups, [td, other])
    slot = WorkerSlot("n2", 6700)
    state.assign(slot, other.id, list(other.executors))
    with pytest.raises(ValueError):
        state.assign(slot, td.id, [Executor(1, 1)])
    with pytest.raises(ValueError):
        state.assign_executor(slot, td, Executor(1, 1))
    assert state.slot_owner(slot) == "o" and state.is_slot_occupied(slot)
    assert state.topologies_on_node("n2") == {"o"}
    assert slot not in state.free_slots_on_node("n2") and len(state.free_slots_on_node("n2")) == 3
    with pytest.raises(ValueError):
        state.assign(WorkerSlot("n1", 6700), other.id, list(other.executors))  # already placed elsewhere


def test_would_fit_rules():
    td, other, sups = simple(worker_max_heap_mb=250)
    state = ClusterState(sups, [td, other])
    slot = WorkerSlot("n3", 1)
    assert state.would_fit(slot, Executor(1, 1), td)
    state.assign(slot, td.id, [Executor(1, 1), Executor(2, 2)])
    # a third executor would make 300 MB on-heap in the worker: above the 250 MB cap
    assert not state.would_fit(slot, Executor(3, 3), td)
    assert state.would_fit(WorkerSlot("n3", 2), Executor(3, 3), td)
    assert state.would_fit(slot, Executor(3, 3), td, max_heap=300)
    # CPU: n3 has 100 - 20 = 80 % left; an executor of 90 % does not fit
    big = Topology("big", [Component("s", 1, "spout")], {"topology.component.cpu.pcore.percent": 90})
    assert not state.would_fit(WorkerSlot("n3", 2), Executor(1, 1), big)
    assert not state.could_ever_fit("n3", Executor(1, 1), big) and state.could_ever_fit("n2", Executor(1, 1), big)


def test_would_fit_with_worker_minimum_counts_only_the_growth():
    td = Topology("t", [Component("s", 3, "spout")], {"topology.component.cpu.pcore.percent": 10})
    state = ClusterState([Supervisor("n", "h", 60, 4000, ports=(1, 2))], [td],
                         {"storm.worker.min.cpu.pcore.percent": 50.0})
    state.assign(WorkerSlot("n", 1), td.id, [Executor(1, 1)])
    assert state.available_resources("n").cpu == 10.0
    # joining the worker adds 0 (20 % is still under the 50 % minimum); a new worker would add 50 %
    assert state.would_fit(WorkerSlot("n", 1), Executor(2, 2), td)
    assert not state.would_fit(WorkerSlot("n", 2), Executor(2, 2), td)


def test_node_rules_one_executor_and_one_component_per_worker():
    td, other, sups = simple({"topology.ras.one.executor.per.worker": True})
    state = ClusterState(sups, [td])
    slot = WorkerSlot("n1", 6700)
    state.assign(slot, td.id, [Executor(3, 3)])
    assert not state.node_would_fit(slot, Executor(1, 1), td)
    assert state.node_would_fit(WorkerSlot("n1", 6701), Executor(1, 1), td)
    td2, _, _ = simple({"topology.ras.one.component.per.worker": True})
    state2 = ClusterState(sups, [td2])
    state2.assign(slot, td2.id, [Executor(3, 3)])  # component "s" (tasks 3-4)
    assert state2.node_would_fit(slot, Executor(4, 4), td2)
    assert not state2.node_would_fit(slot, Executor(1, 1), td2)


def test_copies_are_independent_and_update_from_takes_a_copy_back():
    td, other, sups = simple()
    state = ClusterState(sups, [td, other])
    state.assign(WorkerSlot("n1", 6700), td.id, [Executor(1, 1)])
    copy = state.copy()
    copy.assign_executor(WorkerSlot("n1", 6700), td, Executor(2, 2))
    copy.assign(WorkerSlot("n2", 6700), other.id, list(other.executors))
    copy.set_status(td.id, "Running")
    assert state.executors_on_slot(WorkerSlot("n1", 6700)) == (Executor(1, 1),)
    assert not state.is_assigned(other.id) and state.get_status(td.id) is None
    assert state.available_resources("n1").cpu == 390
    state.update_from(copy)
    assert state.assignment(other.id) == {Executor(1, 1): WorkerSlot("n2", 6700)}
    assert state.available_resources("n1").cpu == 380 and state.get_status(td.id) == "Running"
    state.set_status_if_absent(td.id, "other")
    assert state.status[td.id] == "Running"


def test_racks_blacklist_and_totals():
    td, other, sups = simple()
    state = ClusterState(sups, [td], host_to_rack={"h3": "r3"}, blacklisted_hosts={"h2"})
    assert state.network_topography() == {"/default-rack": ["h1"], "r2": ["h2"], "r3": ["h3"]}
    assert state.is_blacklisted("n2") and not state.is_alive("n2") and state.is_alive("n1")
    assert state.free_slots_on_node("n2") == []
    assert state.cluster_total_cpu() == 700 and state.cluster_total_memory() == 7000
    assert state.cluster_total_generic() == {"gpu.count": 2.0}
    assert state.non_blacklisted_available_resources() == ResourceOffer(500, 5000, {"gpu.count": 2})
    assert state.non_blacklisted_available_resources(["n3"]) == ResourceOffer(400, 4000, {"gpu.count": 2})
    assert set(state.node_ids()) == {"n1", "n2", "n3"}


def test_initial_assignments_and_dead_nodes():
    td, other, sups = simple()
    state = ClusterState(sups, [td, other], assignments={
        td.id: {Executor(1, 1): WorkerSlot("n1", 6700), Executor(2, 2): WorkerSlot("n1", 6700),
                Executor(3, 3): WorkerSlot("gone", 6700)}})
    assert state.slot_to_executors(td.id)[WorkerSlot("n1", 6700)] == [Executor(1, 1), Executor(2, 2)]
    assert not state.is_alive("gone") and state.available_resources("gone") == ResourceOffer()
    assert state.assignments() == {td.id: state.assignment(td.id)}
    assert set(state.used_slots()) == {WorkerSlot("n1", 6700), WorkerSlot("gone", 6700)}


def test_bad_input():
    with pytest.raises(InputError):
        ClusterState([Supervisor("a", "h"), Supervisor("a", "h2")])
    with pytest.raises(InputError):
        Supervisor("a", "h", ports=(1, 1))
    with pytest.raises(InputError):
        ClusterState([], [], {"storm.worker.min.cpu.pcore.percent": "much"})
