"""One scheduling round of the Resource Aware Scheduler on the clusters of Storm's own tests, as data.

Unless said otherwise: supervisors of 100 CPU and 1000 MB with 4 slots; every topology is one spout with one
executor requesting 100 CPU and 500 + 500 MB, so each fills a supervisor; uptimes are measured at time 0.
"""
from __future__ import annotations

from typing import Any

import pytest

from clusteremu.strategies.storm.cluster import ClusterState, Supervisor
from clusteremu.strategies.storm.scheduler import RoundResult, schedule_round
from clusteremu.strategies.storm.topology import Component, Topology

NO_HEAP_CAP = 1.7976931348623157e308
POOLS = "resource.aware.scheduler.user.pools"
PRIORITY = "resource.aware.scheduler.priority.strategy"


def supervisors(n: int, cpu: float = 100.0, mem: float = 1000.0, generic: dict[str, float] | None = None,
                ) -> list[Supervisor]:
    return [Supervisor(f"r000s{i:03d}", f"host-{i:03d}-rack-000", cpu, mem, generic or {}, ports=(0, 1, 2, 3),
                       rack="rack-000") for i in range(n)]


def topology(name: str, user: str, priority: int, launch: int = -2, *, spouts: int = 1, parallelism: int = 1,
             cpu: float = 100.0, on_heap: float = 500.0, off_heap: float = 500.0,
             generic: dict[str, float] | None = None, strategy: str = "DefaultResourceAwareStrategy") -> Topology:
    conf: dict[str, Any] = {
        "topology.component.cpu.pcore.percent": cpu,
        "topology.component.resources.onheap.memory.mb": on_heap,
        "topology.component.resources.offheap.memory.mb": off_heap,
        "topology.scheduler.strategy": strategy,
    }
    if generic:
        conf["topology.component.resources.map"] = generic
    return Topology(name, [Component(f"spout-{i}", parallelism, "spout") for i in range(spouts)], conf,
                    name=name, user=user, priority=priority, launch_time=launch, worker_max_heap_mb=NO_HEAP_CAP)


class Rounds:
    """Successive rounds on one cluster: each round starts from the previous round's assignments."""

    def __init__(self, sups: list[Supervisor], conf: dict[str, Any]) -> None:
        self.sups = sups
        self.conf = conf
        self.topologies: list[Topology] = []
        self.assignments: dict = {}

    def run(self, *new: Topology, explain: bool = False) -> RoundResult:
        self.topologies.extend(new)
        state = ClusterState(self.sups, self.topologies, self.conf, self.assignments)
        result = schedule_round(state, 0, explain=explain)
        self.assignments = state.assignments()
        return result

    def scheduled(self) -> set[str]:
        state = ClusterState(self.sups, self.topologies, self.conf, self.assignments)
        return {t.id for t in self.topologies if state.is_assigned(t.id) and not state.needs_scheduling(t)}

    def unscheduled(self) -> set[str]:
        state = ClusterState(self.sups, self.topologies, self.conf, self.assignments)
        return {t.id for t in self.topologies if not state.is_assigned(t.id)}


def pools(**users: tuple[float, float]) -> dict[str, dict[str, float]]:
    return {u: {"cpu": c, "memory": m} for u, (c, m) in users.items()}


def test_full_cluster_evicts_the_last_topology_of_the_order() -> None:
    rounds = Rounds(supervisors(4), {POOLS: pools(jerry=(200, 2000), bobby=(100, 1000), derek=(200, 2000))})
    first = rounds.run(topology("topo-1", "jerry", 10), topology("topo-2", "bobby", 10),
                       topology("topo-3", "bobby", 20), topology("topo-4", "derek", 29))
    assert rounds.scheduled() == {"topo-1", "topo-2", "topo-3", "topo-4"}
    assert all(s.startswith("Running - ") for s in first.status.values())
    second = rounds.run(topology("topo-6", "jerry", 20))
    assert rounds.scheduled() == {"topo-1", "topo-2", "topo-4", "topo-6"}
    assert rounds.unscheduled() == {"topo-3"}
    assert second.order == ["topo-4", "topo-1", "topo-6", "topo-2", "topo-3"]
    assert second.evicted == {"topo-6": ["topo-3"]}
    assert second.status["topo-1"] == "Fully Scheduled"
    assert second.status["topo-6"].startswith("Running - ")
    # topo-3 comes later in the same round, finds no room and has nothing after it to evict
    assert second.status["topo-3"] == (
        "Not enough resources to schedule after evicting lower priority topologies. "
        "Additional Memory Required: 1000.0 MB (Available: 0.0 MB). "
        "Additional CPU Required: 100.0% CPU (Available: 0.0 % CPU).")
    assert [a.strategy_ran for a in second.attempts["topo-6"]] == [False, True]


def test_user_without_guarantee_loses_two_topologies_at_once() -> None:
    rounds = Rounds(supervisors(4), {POOLS: pools(jerry=(200, 2000), derek=(100, 1000))})
    rounds.run(topology("topo-2", "bobby", 10), topology("topo-3", "bobby", 20),
               topology("topo-4", "derek", 29), topology("topo-5", "derek", 29))
    result = rounds.run(topology("topo-1", "jerry", 10, spouts=2))
    assert rounds.scheduled() == {"topo-1", "topo-4", "topo-5"}
    assert result.evicted == {"topo-1": ["topo-3", "topo-2"]}


def test_fifo_evicts_the_longest_running_over_guarantee_topology() -> None:
    rounds = Rounds(supervisors(4), {POOLS: pools(jerry=(200, 2000)), PRIORITY: "FIFOSchedulingPriorityStrategy"})
    rounds.run(topology("topo-1-jerry", "jerry", 20, -250), topology("topo-2-bobby", "bobby", 10, -200),
               topology("topo-3-bobby", "bobby", 20, -300), topology("topo-4-derek", "derek", 29, -201))
    second = rounds.run(topology("topo-5-derek", "derek", 29, -15))
    assert second.evicted == {"topo-5-derek": ["topo-3-bobby"]}
    assert rounds.unscheduled() == {"topo-3-bobby"}
    # jerry is within guarantee: her older topo-1 stays; derek's topo-4 goes
    third = rounds.run(topology("topo-6-bobby", "bobby", 29, -10))
    assert third.evicted == {"topo-6-bobby": ["topo-4-derek"]}
    assert rounds.scheduled() == {"topo-1-jerry", "topo-2-bobby", "topo-5-derek", "topo-6-bobby"}


def gras_rounds(priority: str) -> tuple[Rounds, RoundResult]:
    # 4 supervisors with 50 of generic.resource.1 each; two attempts allowed (one round of evictions)
    rounds = Rounds(supervisors(4, generic={"generic.resource.1": 50.0}),
                    {POOLS: pools(rui=(200, 2000), ethan=(200, 2000)), PRIORITY: priority,
                     "resource.aware.scheduler.max.topology.scheduling.attempts": 2})
    gras = "GenericResourceAwareStrategy"
    rounds.run(*[topology(f"ethan-topo-{i}", "ethan", p, cpu=60, on_heap=200, off_heap=300, strategy=gras)
                 for i, p in ((1, 10), (2, 20), (3, 28), (4, 29))])
    result = rounds.run(topology("rui-topo-1", "rui", 10, parallelism=5, cpu=10, on_heap=10, off_heap=10,
                                 generic={"generic.resource.1": 40.0}, strategy=gras))
    return rounds, result


def test_rolled_back_evictions_are_still_listed() -> None:
    # Default priority ignores generic resources: rui goes first, every ethan topology is evicted for it, rui
    # still does not fit (one 40-unit executor per supervisor, five executors) and the evictions are undone
    rounds, result = gras_rounds("DefaultSchedulingPriorityStrategy")
    assert result.order[0] == "rui-topo-1"
    assert set(result.evicted["rui-topo-1"]) == {f"ethan-topo-{i}" for i in range(1, 5)}
    assert rounds.scheduled() == {f"ethan-topo-{i}" for i in range(1, 5)}
    assert rounds.unscheduled() == {"rui-topo-1"}
    attempts = result.attempts["rui-topo-1"]
    # attempt 2: the sum check passes again (the evicted resources are free), the strategy fails again and
    # nothing is left to evict
    assert [(a.strategy_ran, len(a.evicted)) for a in attempts] == [(True, 4), (True, 0)]
    assert attempts[0].result.startswith("Status: FAIL_NOT_ENOUGH_RESOURCES")
    status = result.status["rui-topo-1"]
    assert status.startswith("Not enough resources to schedule after evicting lower priority topologies. ")
    assert "Additional Topology Required Resources: " in status
    # the ethan topologies were tried after rui in the same round and kept their places
    assert all(result.status[f"ethan-topo-{i}"] == "Fully Scheduled" for i in range(1, 5))


def test_generic_priority_puts_the_generic_hungry_topology_last_so_it_evicts_nothing() -> None:
    rounds, result = gras_rounds("GenericResourceAwareSchedulingPriorityStrategy")
    assert result.order[-1] == "rui-topo-1"
    assert result.evicted == {}
    assert rounds.unscheduled() == {"rui-topo-1"}


def fragmented_cluster(attempts: int) -> tuple[ClusterState, dict[str, Topology]]:
    # Three supervisors of 100 CPU, one user; order k1, k2, h, c, b, a by priority. s0: k1 (60) + a (40);
    # s1: k2 (40) + b (60); s2: c (60). h has two executors of 50 CPU.
    small = dict(on_heap=10.0, off_heap=0.0)
    topos = {"k1": topology("k1", "u", 0, cpu=60, **small), "k2": topology("k2", "u", 0, cpu=40, **small),
             "h": topology("h", "u", 1, cpu=50, parallelism=2, **small),
             "c": topology("c", "u", 2, cpu=60, **small), "b": topology("b", "u", 3, cpu=60, **small),
             "a": topology("a", "u", 4, cpu=40, **small)}
    where = {"k1": ("r000s000", 0), "a": ("r000s000", 1), "k2": ("r000s001", 0), "b": ("r000s001", 1),
             "c": ("r000s002", 0)}
    assignments = {t: {topos[t].executors[0]: slot} for t, slot in where.items()}
    state = ClusterState(supervisors(3), topos.values(),
                         {"resource.aware.scheduler.max.topology.scheduling.attempts": attempts}, assignments)
    return state, topos


def test_several_attempts_evict_again_when_the_freed_space_is_fragmented() -> None:
    state, topos = fragmented_cluster(5)
    result = schedule_round(state, 0)
    assert result.order == ["k1", "k2", "h", "c", "b", "a"]
    # attempt 1: 40 CPU free < 100 needed, the strategy is skipped; a and b (100) are evicted.
    # attempt 2: 40 + 60 + 40 free: one executor fits on s1, the other nowhere; c is evicted (not enough by
    # itself, but nothing else is left). attempt 3 places h.
    assert [(a.strategy_ran, a.evicted) for a in result.attempts["h"]] == [
        (False, ["a", "b"]), (True, ["c"]), (True, [])]
    assert result.evicted == {"h": ["a", "b", "c"]}
    assert result.status["h"].startswith("Running - Fully Scheduled by DefaultResourceAwareStrategy")
    assert not state.needs_scheduling(topos["h"])
    # h packed both executors into one worker on s2. The evicted topologies come later in the same order and
    # are tried again: c fits into s1's 60 free, b then finds 40 and nothing after it holding slots, a fits in s0.
    assert set(state.used_slots_by_topology("h")) == {state.slot_of("h", topos["h"].executors[0])}
    assert result.status["c"].startswith("Running - ") and result.status["a"].startswith("Running - ")
    assert result.status["b"].startswith("Not enough resources to schedule after evicting lower priority")
    assert not state.is_assigned("b")


def test_running_out_of_attempts_rolls_back_and_says_so() -> None:
    state, topos = fragmented_cluster(2)
    before = state.assignments()
    result = schedule_round(state, 0)
    assert result.evicted == {"h": ["a", "b", "c"]}
    assert result.status["h"] == (
        "Failed to make enough resources for h by evicting lower priority topologies within 2 attempts. "
        "Additional Memory Required: 10.0 MB (Available: 2980.0 MB). "
        "Additional CPU Required: 40.0% CPU (Available: 200.0 % CPU).")
    # a, b and c were never really evicted: they keep their slots and their status
    assert state.assignments() == before
    assert result.status["a"] == result.status["b"] == result.status["c"] == "Fully Scheduled"


def test_one_executor_that_fits_nowhere_is_reported_running_as_in_storm() -> None:
    # Storm's search ends with areAllExecsScheduled() == (index 0 == size 1 - 1): a one-executor topology that
    # passes the sum check but fits on no supervisor is "Running - Fully Scheduled" without a slot.
    state = ClusterState(supervisors(2, cpu=60.0), [topology("t", "u", 0, cpu=100.0, on_heap=10, off_heap=0)], {})
    result = schedule_round(state, 0)
    assert result.status["t"].startswith("Running - Fully Scheduled by DefaultResourceAwareStrategy")
    assert not state.is_assigned("t")


def test_unknown_topology_strategy_is_reported_as_storm_does() -> None:
    state = ClusterState(supervisors(1), [topology("t", "u", 0, strategy="com.example.MyStrategy")], {})
    result = schedule_round(state, 0)
    assert result.status["t"] == ("Unsuccessful in scheduling - failed to create instance of topology strategy "
                                  "com.example.MyStrategy. Please check logs for details")


def test_backtype_storm_names_are_rewritten() -> None:
    name = "backtype.storm.scheduler.resource.strategies.scheduling.DefaultResourceAwareStrategy"
    state = ClusterState(supervisors(1), [topology("t", "u", 0, strategy=name)], {})
    result = schedule_round(state, 0)
    assert result.status["t"].startswith("Running - ")
    assert result.strategies["t"] == \
        "org.apache.storm.scheduler.resource.strategies.scheduling.DefaultResourceAwareStrategy"


def test_topology_without_spouts_is_invalid() -> None:
    td = Topology("t", [Component("bolt-0", 1, "bolt")], {}, name="t", user="u")
    result = schedule_round(ClusterState(supervisors(1), [td], {}), 0)
    assert result.status["t"].startswith("Status: FAIL_INVALID_TOPOLOGY error message: ")


def test_explain_records_the_node_sorts_of_each_attempt() -> None:
    rounds = Rounds(supervisors(2), {})
    result = rounds.run(topology("t", "u", 0), explain=True)
    (attempt,) = result.attempts["t"]
    assert attempt.sorts and attempt.sorts[0]["racks"][0]["id"] == "rack-000"
    quiet = Rounds(supervisors(2), {}).run(topology("t", "u", 0))
    assert quiet.attempts["t"][0].sorts == []


# ----------------------------------------------------------------------------------------------- Storm 1.x

V1 = {"resource.aware.scheduler.eviction.strategy":
      "org.apache.storm.scheduler.resource.strategies.eviction.DefaultEvictionStrategy"}


@pytest.mark.parametrize("generation, evicted_of_jerry", [("2.x", "topo-2"), ("1.x", "topo-1")])
def test_own_lower_priority_topology_is_evicted(generation: str, evicted_of_jerry: str) -> None:
    conf: dict[str, Any] = {POOLS: pools(jerry=(200, 2000), bobby=(100, 1000), derek=(100, 1000))}
    if generation == "1.x":
        conf.update(V1)
    rounds = Rounds(supervisors(4), conf)
    rounds.run(topology("topo-1", "jerry", 20), topology("topo-2", "jerry", 20),
               topology("topo-5", "bobby", 10), topology("topo-6", "derek", 29))
    assert rounds.scheduled() == {"topo-1", "topo-2", "topo-5", "topo-6"}
    # a low-priority topology of jerry into a full cluster: nothing to evict
    result = rounds.run(topology("topo-3", "jerry", 29))
    assert rounds.unscheduled() == {"topo-3"}
    assert result.generation == generation
    # a high-priority one: one of jerry's own priority-20 topologies makes room
    result = rounds.run(topology("topo-4", "jerry", 10))
    assert rounds.scheduled() == {"topo-4", "topo-5", "topo-6"} | ({"topo-1", "topo-2"} - {evicted_of_jerry})
    assert result.evicted["topo-4"] == [evicted_of_jerry]


def test_v1_round_never_evicts_from_users_within_guarantee_and_retries_the_evicted() -> None:
    rounds = Rounds(supervisors(4), {POOLS: pools(jerry=(200, 2000), bobby=(100, 1000), derek=(200, 2000)), **V1})
    rounds.run(topology("topo-1", "jerry", 10), topology("topo-2", "bobby", 10),
               topology("topo-3", "bobby", 20), topology("topo-4", "derek", 29))
    result = rounds.run(topology("topo-6", "jerry", 20))
    assert rounds.unscheduled() == {"topo-3"}
    assert result.evicted == {"topo-6": ["topo-3"]}
    # topo-3 went back to pending and was picked again later in the round
    assert result.order == ["topo-6", "topo-3"]
    assert result.status["topo-3"].startswith("Not enough resources to schedule - ")
    assert result.status["topo-1"] == "Fully Scheduled"
    assert result.picks[0]["scores"]["jerry"] == 0.5


def test_v1_rolls_back_evictions_when_the_topology_still_fails() -> None:
    # jerry (guarantee 200/2000, nothing running) submits a 3-supervisor topology into a full cluster where only
    # bobby (no guarantee) is over: bobby's two topologies are evicted one by one, then no victim is left
    rounds = Rounds(supervisors(3), {POOLS: pools(jerry=(200, 2000), derek=(100, 1000)), **V1})
    rounds.run(topology("b1", "bobby", 10), topology("b2", "bobby", 20), topology("d1", "derek", 0))
    result = rounds.run(topology("big", "jerry", 0, spouts=3))
    assert result.evicted == {"big": ["b2", "b1"]}
    assert rounds.scheduled() == {"b1", "b2", "d1"}
    assert result.status["big"].startswith("Not enough resources to schedule - ")
    assert result.status["b1"] == result.status["b2"] == "Fully Scheduled"


def test_v1_has_only_its_own_priority_and_scheduling_classes() -> None:
    state = ClusterState(supervisors(1), [topology("t", "u", 0, strategy="GenericResourceAwareStrategy")],
                         {**V1})
    result = schedule_round(state, 0)
    assert result.status["t"].startswith("Unsuccessful in scheduling - failed to create instance")
    with pytest.raises(KeyError, match="FIFOSchedulingPriorityStrategy"):
        schedule_round(ClusterState(supervisors(1), [], {**V1, PRIORITY: "FIFOSchedulingPriorityStrategy"}), 0)


@pytest.mark.parametrize("generation", ["2.x", "1.x"])
def test_over_guarantee_users(generation: str) -> None:
    # jerry 70/700, bobby 100/1000, derek 25/250: everyone but bobby is over guarantee with one topology
    conf: dict[str, Any] = {POOLS: pools(jerry=(70, 700), bobby=(100, 1000), derek=(25, 250))}
    if generation == "1.x":
        conf.update(V1)
    rounds = Rounds(supervisors(4), conf)
    rounds.run(topology("topo-1", "jerry", 20), topology("topo-3", "bobby", 10), topology("topo-4", "bobby", 10),
               topology("topo-5", "derek", 29))
    # derek's more important topology replaces his own topo-5 in both generations
    result = rounds.run(topology("topo-6", "derek", 10))
    assert rounds.scheduled() == {"topo-1", "topo-3", "topo-4", "topo-6"}
    assert result.evicted == {"topo-6": ["topo-5"]}
    result = rounds.run(topology("topo-2", "jerry", 20))
    if generation == "2.x":
        # 2.x: jerry's second topology scores behind derek's topo-6 and can evict nothing
        assert rounds.scheduled() == {"topo-1", "topo-3", "topo-4", "topo-6"}
        assert result.evicted == {}
    else:
        # 1.x: derek (4x his guarantee) is further over than jerry would be (2.86x): topo-6 goes, and neither of
        # derek's topologies finds room again
        assert rounds.scheduled() == {"topo-1", "topo-2", "topo-3", "topo-4"}
        assert result.evicted == {"topo-2": ["topo-6"]}
        assert result.status["topo-5"].startswith("Not enough resources to schedule - ")


@pytest.mark.parametrize("generation", ["2.x", "1.x"])
def test_evictions_follow_users_and_priorities_over_rounds(generation: str) -> None:
    conf: dict[str, Any] = {POOLS: pools(jerry=(300, 3000), derek=(100, 1000))}
    if generation == "1.x":
        conf.update(V1)
    rounds = Rounds(supervisors(4), conf)
    rounds.run(topology("topo-2", "bobby", 10), topology("topo-3", "bobby", 20), topology("topo-4", "derek", 29),
               topology("topo-5", "derek", 29, launch=-15))
    rounds.run(topology("topo-1", "jerry", 10))
    assert rounds.unscheduled() == {"topo-3"}  # bobby has no guarantee; topo-3 is his least important
    rounds.run(topology("topo-6", "jerry", 10))
    assert rounds.unscheduled() == {"topo-2", "topo-3"}
    rounds.run(topology("topo-7", "jerry", 10))
    # derek is over guarantee, jerry not: of derek's equal-priority topologies the younger topo-4 goes
    assert rounds.unscheduled() == {"topo-2", "topo-3", "topo-4"}
    assert rounds.scheduled() == {"topo-1", "topo-5", "topo-6", "topo-7"}


def storm_topology(name: str, user: str, priority: int, spouts: int, bolts: int, spout_par: int, bolt_par: int,
                   launch: int = -2, cpu: float = 100.0, on_heap: float = 500.0, off_heap: float = 500.0) -> Topology:
    """Storm's test topology: ``spouts`` spouts, ``bolts`` bolts each reading from a spout in turn."""
    comps = [Component(f"spout-{i}", spout_par, "spout") for i in range(spouts)]
    comps += [Component(f"bolt-{i}", bolt_par, "bolt", (f"spout-{i % spouts}",)) for i in range(bolts)]
    conf = {"topology.component.cpu.pcore.percent": cpu, "topology.component.resources.onheap.memory.mb": on_heap,
            "topology.component.resources.offheap.memory.mb": off_heap}
    return Topology(name, comps, conf, name=name, user=user, priority=priority, launch_time=launch,
                    worker_max_heap_mb=NO_HEAP_CAP)


def test_users_without_guarantee_get_what_is_left() -> None:
    rounds = Rounds(supervisors(4), {POOLS: pools(jerry=(200, 2000))})
    rounds.run(*[topology(n, u, p) for n, u, p in (("topo-1", "jerry", 10), ("topo-2", "jerry", 20),
                                                  ("topo-3", "jerry", 20), ("topo-4", "bobby", 10),
                                                  ("topo-5", "bobby", 20))])
    assert rounds.scheduled() == {"topo-1", "topo-2", "topo-3", "topo-4"}
    assert rounds.unscheduled() == {"topo-5"}


def test_scheduling_goes_on_after_a_topology_fails() -> None:
    rounds = Rounds(supervisors(8), {})
    result = rounds.run(storm_topology("topo-1", "jerry", 10, 8, 0, 2, 0),
                        storm_topology("topo-2", "jerry", 20, 2, 0, 2, 0),
                        storm_topology("topo-3", "jerry", 20, 1, 2, 1, 1))
    assert rounds.unscheduled() == {"topo-1"}
    assert {t: len(a) for t, a in rounds.assignments.items()} == {"topo-2": 4, "topo-3": 3}
    # topo-1 (16 executors of 100 CPU, 8 supervisors of 100) goes first, fails the sum check, finds nothing
    # placed yet to evict, and leaves the cluster to the others
    assert result.order[0] == "topo-1"
    assert result.status["topo-1"].startswith("Not enough resources to schedule after evicting")


def test_worker_minimum_cpu_leaves_no_room_for_a_third_topology() -> None:
    conf = {"storm.worker.min.cpu.pcore.percent": 40.0}
    state = ClusterState(supervisors(1, mem=60000.0),
                         [storm_topology(f"topo-{i}", "jerry", 20, 2, 0, 1, 1, cpu=10.0) for i in (1, 2, 3)], conf)
    result = schedule_round(state, 0)
    assert [state.is_assigned(f"topo-{i}") for i in (1, 2, 3)] == [True, True, False]
    for topo_id in ("topo-1", "topo-2"):
        (slot,) = state.used_slots_by_topology(topo_id)
        charged = state.worker_resources(slot)
        assert charged is not None and charged.cpu == 40.0  # two executors of 10, raised to the minimum
    assert result.status["topo-3"].startswith("Not enough resources to schedule after evicting")


def test_a_lost_supervisor_costs_the_over_guarantee_user_its_least_important_topology() -> None:
    conf = {POOLS: pools(jerry=(50, 500), bobby=(200, 2000), derek=(100, 1000))}
    sups = supervisors(6)
    topos = [topology("topo-1", "jerry", 21), topology("topo-2", "jerry", 20), topology("topo-3", "bobby", 10),
             topology("topo-4", "bobby", 10), topology("topo-5", "derek", 29), topology("topo-6", "derek", 10)]
    state = ClusterState(sups, topos, conf)
    schedule_round(state, 0)
    assert all(not state.needs_scheduling(t) for t in topos)
    lost = sups[0].id
    kept = {t: {ex: slot for ex, slot in a.items() if slot.node_id != lost} for t, a in state.assignments().items()}
    state = ClusterState(sups[1:], topos, conf, kept)
    result = schedule_round(state, 0)
    assert {t.id for t in topos if not state.is_assigned(t.id)} == {"topo-1"}
    assert all(not state.needs_scheduling(t) for t in topos if t.id != "topo-1")
    assert result.order[-1] == "topo-1"
