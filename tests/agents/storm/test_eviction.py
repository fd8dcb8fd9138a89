"""An over-subscribed cluster: eviction by priority (Storm 2.x and 1.x rules), and the evicted topologies' return;
GPU topologies on a heterogeneous cluster."""
from __future__ import annotations

import pytest

from clusteremu.emulator.testing import assert_never


@pytest.mark.parametrize("name", ["storm-eviction-2x", "storm-eviction-1x"])
def test_the_guaranteed_users_topology_evicts_best_effort_ones_which_return_after_its_kill(storm_run, name):
    tr = storm_run(name)
    evicted = [e for e in tr.select("topology_evicted") if not e.rolled_back]
    assert evicted and all(e.user == "batch" and e.by_user == "prod" and e.priority > e.by_priority
                           for e in evicted)
    submitted = tr.first("topology_submitted", where=lambda e: e.user == "prod")
    placed = tr.first("assignment_changed", where=lambda e: e.topology == submitted.topology)
    assert placed.t - submitted.t <= 10.5 and placed.assigned_after == placed.executors
    victims = {e.topology for e in evicted}
    assert {e.topology for e in tr.select("assignment_changed", within=(placed.t, placed.t))
            if e.reason == "evicted"} == victims
    removed = tr.first("topology_removed")
    assert removed.topology == submitted.topology and removed.t == pytest.approx(630.0, abs=0.1)
    states = {e.topology_status for e in tr.select("topology_round", within=(600.5, removed.t - 0.01))
              if e.topology == submitted.topology}
    assert states == {"killed"}  # killed at 600 s, it keeps its workers until its removal
    for r in tr.select("topology_round", within=(placed.t, removed.t - 0.01)):
        assert r.fully_scheduled == (r.topology not in victims)
    back = {e.topology: e.t for e in tr.select("assignment_changed", within=(removed.t, None))}
    assert set(back) == victims and all(t - removed.t <= 10.5 for t in back.values())
    assert tr.last("scheduling_round").topologies_fully_scheduled == 4
    for r in tr.select("scheduling_round"):
        assert r.cpu_used <= r.cpu_total and r.memory_used_mb <= r.memory_total_mb


def test_the_two_generations_order_differently(storm_run):
    two = storm_run("storm-eviction-2x").first("scheduling_round", within=(180, None))
    one = storm_run("storm-eviction-1x").first("scheduling_round", within=(180, None))
    assert two.generation == "2.x" and one.generation == "1.x"
    assert two.order[0] == one.order[0] and two.order[0].startswith("payments")
    assert len(two.order) == 5  # 2.x orders every topology; 1.x picks only those left to schedule
    assert len(one.order) < len(two.order)


def test_gpu_executors_go_to_gpu_nodes_and_cpu_only_topologies_stay_off_them(storm_run):
    tr = storm_run("storm-gpu-racks")
    gpu_nodes = {"supervisor-1", "supervisor-2"}
    for e in tr.select("assignment_changed"):
        nodes = {w["supervisor"] for w in e.workers}
        assert (nodes <= gpu_nodes) if e.user == "vision" else not (nodes & gpu_nodes)
    r = tr.first("scheduling_round", within=(200, None))
    assert r.generic_total == {"gpu.count": 4.0} and r.generic_used == {"gpu.count": 4.0}
    third = tr.first("topology_submitted", where=lambda e: e.topology_name == "vision-3")
    removed = tr.first("topology_removed", where=lambda e: e.topology_name == "vision-1")
    placed = tr.first("assignment_changed", where=lambda e: e.topology == third.topology)
    assert placed.t >= removed.t and placed.t - removed.t <= 10.5
    waiting = [e for e in tr.select("topology_round", within=(third.t, removed.t - 0.01))
               if e.topology == third.topology]
    assert waiting and not any(e.fully_scheduled for e in waiting)
    assert_never(tr, "topology_evicted", where=lambda e: not e.rolled_back)
