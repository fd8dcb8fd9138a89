"""The rules every strategy applies: packing, the heap cap, worker restrictions, the worker CPU minimum,
all-or-nothing results, early results, the state-search bound, node re-sorting, and the strategy names."""
from __future__ import annotations

import pytest

from clusteremu.strategies.storm.cluster import Supervisor
from clusteremu.strategies.storm.scheduling import (
    PACKAGE,
    STRATEGIES,
    DefaultResourceAwareStrategy,
    DefaultResourceAwareStrategyOld,
    GenericResourceAwareStrategy,
    GenericResourceAwareStrategyOld,
    RoundRobinResourceAwareStrategy,
    SchedulingStatus,
    strategy_class,
)
from clusteremu.strategies.storm.sorting import NodeSortType, SortRecorder
from clusteremu.strategies.storm.topology import Component, Topology

from ..clusters import cluster_conf, gen_supervisors, make_state

ALL = ["DefaultResourceAwareStrategy", "GenericResourceAwareStrategy", "DefaultResourceAwareStrategyOld",
       "GenericResourceAwareStrategyOld", "RoundRobinResourceAwareStrategy"]
SEARCHING = ALL[:4]  # the backtracking ones


def topo(conf, spouts=1, bolts=0, topology_id="t", **kw) -> Topology:
    comps = [Component("spout", spouts, "spout")]
    if bolts:
        comps.append(Component("bolt", bolts, "bolt", ("spout",)))
    return Topology(topology_id, comps, conf, user="u", **kw)


def worker_sizes(state, td) -> list[int]:
    return sorted(len(e) for e in state.slot_to_executors(td.id).values())


@pytest.mark.parametrize("strategy", SEARCHING)
def test_executors_are_packed_into_one_worker_while_they_fit(strategy):
    conf = cluster_conf(10, 100, 0)
    td = topo(conf, spouts=3, bolts=4)
    state = make_state(gen_supervisors(3, 4, 400, 4000), [td], conf)
    assert STRATEGIES[strategy]().schedule(state, td).is_success()
    assert worker_sizes(state, td) == [7]


@pytest.mark.parametrize("strategy", SEARCHING)
def test_worker_heap_cap_counts_on_heap_only(strategy):
    # cap 300 MB: two executors of 128 MB on-heap per worker; the 500 MB off-heap does not count
    conf = cluster_conf(10, 128, 500, **{"topology.worker.max.heap.size.mb": 300})
    td = topo(conf, spouts=2, bolts=3)
    state = make_state(gen_supervisors(2, 4, 400, 100000), [td], conf)
    assert STRATEGIES[strategy]().schedule(state, td).is_success()
    assert worker_sizes(state, td) == [1, 2, 2]


@pytest.mark.parametrize("strategy", ALL)
def test_one_executor_per_worker(strategy):
    conf = cluster_conf(10, 100, 0, **{"topology.ras.one.executor.per.worker": True})
    td = topo(conf, spouts=2, bolts=3)
    state = make_state(gen_supervisors(2, 4, 400, 4000), [td], conf)
    assert STRATEGIES[strategy]().schedule(state, td).is_success()
    assert worker_sizes(state, td) == [1] * 5


@pytest.mark.parametrize("strategy", ALL)
def test_one_component_per_worker(strategy):
    conf = cluster_conf(10, 100, 0, **{"topology.ras.one.component.per.worker": True})
    td = topo(conf, spouts=2, bolts=3)
    state = make_state(gen_supervisors(2, 4, 400, 4000), [td], conf)
    assert STRATEGIES[strategy]().schedule(state, td).is_success()
    for execs in state.slot_to_executors(td.id).values():
        assert len({td.component_of(e) for e in execs}) == 1


def test_one_executor_per_worker_fails_when_slots_run_out():
    conf = cluster_conf(10, 100, 0, **{"topology.ras.one.executor.per.worker": True})
    td = topo(conf, spouts=2, bolts=3)
    state = make_state(gen_supervisors(1, 4, 400, 4000), [td], conf)
    attempt = state.copy()
    result = DefaultResourceAwareStrategy().schedule(attempt, td)
    assert result.status is SchedulingStatus.FAIL_NOT_ENOUGH_RESOURCES
    assert result.error_message.startswith("Cannot schedule by DefaultResourceAwareStrategy (")
    assert not state.is_assigned(td.id)  # the caller's state is untouched: all-or-nothing through copies


def test_each_worker_is_charged_at_least_the_minimum_cpu():
    conf = cluster_conf(10, 100, 0, **{"topology.ras.one.executor.per.worker": True,
                                      "storm.worker.min.cpu.pcore.percent": 50.0})
    td = topo(conf, spouts=1, bolts=2)
    state = make_state(gen_supervisors(1, 4, 400, 4000), [td], conf)
    assert DefaultResourceAwareStrategy().schedule(state, td).is_success()
    assert state.available_resources("r000s000").cpu == 400 - 3 * 50
    assert state.available_resources("r000s000").memory == 4000 - 300


def test_minimum_cpu_blocks_a_third_worker():
    # 3 one-executor workers of 10 % cpu each would need 3 × 50 % charged; only 120 % on the node
    conf = cluster_conf(10, 100, 0, **{"topology.ras.one.executor.per.worker": True,
                                      "storm.worker.min.cpu.pcore.percent": 50.0})
    td = topo(conf, spouts=1, bolts=2)
    state = make_state(gen_supervisors(1, 4, 120, 4000), [td], conf)
    result = DefaultResourceAwareStrategy().schedule(state.copy(), td)
    assert result.is_failure()


def test_failure_message_counts_states_and_backtracks():
    # one slot, 100 % cpu: two executors of 50 % fit, the third does not; the search backs off to nothing
    conf = cluster_conf(50, 100, 0)
    td = topo(conf, spouts=1, bolts=2)
    state = make_state([Supervisor("n", "h", 100, 10000, ports=(1,))], [td], conf)
    result = DefaultResourceAwareStrategy().schedule(state, td)
    assert result.status is SchedulingStatus.FAIL_NOT_ENOUGH_RESOURCES
    assert result.error_message == ("Cannot schedule by DefaultResourceAwareStrategy (2 states traversed in 0 ms, "
                                    "backtracked 2 times, 0 of 3 executors scheduled)")
    assert not state.is_assigned(td.id)


def test_backtracking_finds_the_placement_first_fit_misses():
    # two nodes of 100 % cpu and one slot each; executors of 50, 30, 70, 50 % in that order (b50 has the most
    # connections, then its neighbours a30 and c70 by id). First fit gives 50+30 | 70 and the last 50 fits
    # nowhere; the search backs off until it finds 50+50 | 30+70.
    conf = cluster_conf(10, 10, 0)
    td = Topology("t", [Component("a30", 1, "spout", resources={"cpu.pcore.percent": 30}),
                        Component("b50", 2, "bolt", ("a30",), resources={"cpu.pcore.percent": 50}),
                        Component("c70", 1, "bolt", ("b50",), resources={"cpu.pcore.percent": 70})], conf)
    state = make_state([Supervisor("a", "h1", 100, 1000, ports=(1,)), Supervisor("b", "h2", 100, 1000, ports=(1,))],
                       [td], conf)
    result = DefaultResourceAwareStrategy().schedule(state, td)
    assert result.is_success()
    assert "backtracked 0 times" not in result.message
    groups = {frozenset(td.component_of(e) for e in execs) for execs in state.slot_to_executors(td.id).values()}
    assert groups == {frozenset({"b50"}), frozenset({"a30", "c70"})}
    assert worker_sizes(state, td) == [2, 2]


@pytest.mark.parametrize("strategy", ALL)
def test_early_results(strategy):
    conf = cluster_conf()
    cls = STRATEGIES[strategy]
    td = topo(conf, spouts=1, bolts=1)
    state = make_state(gen_supervisors(1, 4, 400, 4000), [td], conf)
    assert cls().schedule(state, td).is_success()
    again = cls().schedule(state, td)  # nothing left to place
    assert again.is_success() and again.message == f"Fully Scheduled by {strategy}"
    no_spout = Topology("b", [Component("bolt", 1, "bolt")], conf)
    result = cls().schedule(make_state(gen_supervisors(1, 4, 400, 4000), [no_spout], conf), no_spout)
    assert (result.status, result.error_message) == (SchedulingStatus.FAIL_INVALID_TOPOLOGY, "Cannot find a Spout!")
    result = cls().schedule(make_state([], [td], conf), td)
    assert (result.status, result.error_message) == (SchedulingStatus.FAIL_NOT_ENOUGH_RESOURCES,
                                                     "No available nodes to schedule tasks on!")
    big = topo(dict(conf, **{"topology.ras.constraint.max.state.search": 5}), spouts=5)
    result = cls().schedule(make_state(gen_supervisors(1, 4, 400, 4000), [big], conf), big)
    assert (result.status, result.error_message) == (
        SchedulingStatus.FAIL_OTHER, "Unassignerd Executor count (5) is greater than searchable state count 5")


def test_state_search_bound_takes_the_smaller_of_daemon_and_topology():
    conf = cluster_conf(**{"resource.aware.scheduler.constraint.max.state.search": 4})
    td = topo(conf, spouts=4)
    result = DefaultResourceAwareStrategy().schedule(make_state(gen_supervisors(1, 4, 400, 4000), [td], conf), td)
    assert result.status is SchedulingStatus.FAIL_OTHER


def test_state_search_limit_stops_a_long_search_and_leaves_a_partial_placement():
    # 6 executors of 100 MB on nodes with 250 MB: 2 per node, 2 nodes → the 5th never fits; with a bound of 7
    # states the search stops while backtracking and the strategy's own state keeps what was placed
    conf = cluster_conf(10, 100, 0, **{"topology.ras.constraint.max.state.search": 7})
    td = topo(conf, spouts=2, bolts=4)
    state = make_state(gen_supervisors(2, 4, 400, 250), [td], conf)
    result = DefaultResourceAwareStrategy().schedule(state, td)
    assert result.is_failure()
    assert "8 states traversed" in result.error_message
    assert state.is_assigned(td.id)


def test_one_executor_that_fits_nowhere_is_reported_scheduled():
    # Storm's areAllExecsScheduled compares the index with the last one: with a single executor a failure
    # looks like success (the scheduling round then sees the topology still unassigned)
    conf = cluster_conf(500, 100, 0)
    td = topo(conf, spouts=1)
    state = make_state(gen_supervisors(1, 4, 400, 4000), [td], conf)
    result = DefaultResourceAwareStrategy().schedule(state, td)
    assert result.is_success()
    assert not state.is_assigned(td.id)


def test_nodes_are_resorted_only_when_the_component_repeats():
    conf = cluster_conf(10, 100, 0)
    td = Topology("t", [Component("spout", 2, "spout"), Component("bolt", 4, "bolt", ("spout",))], conf)
    state = make_state(gen_supervisors(2, 4, 400, 4000), [td], conf)
    rec = SortRecorder()
    assert DefaultResourceAwareStrategy().schedule(state, td, rec).is_success()
    # order: bolt (8 connections) then spout, alternating while both have executors: b s b s b b
    comps = [s["executor"]["component"] for s in rec.sorts]
    assert comps == ["bolt", "bolt"]  # the first executor, then the second bolt of "b b"
    old = SortRecorder()
    state2 = make_state(gen_supervisors(2, 4, 400, 4000), [td], conf)
    assert DefaultResourceAwareStrategyOld().schedule(state2, td, old).is_success()
    assert [s["executor"] for s in old.sorts] == [None]


def test_round_robin_spreads_one_executor_per_node_in_turn():
    conf = cluster_conf(10, 100, 0)
    td = Topology("t", [Component("spout", 3, "spout"), Component("bolt", 3, "bolt", ("spout",))], conf)
    state = make_state(gen_supervisors(6, 4, 400, 4000), [td], conf)
    assert RoundRobinResourceAwareStrategy().schedule(state, td).is_success()
    nodes = [state.slot_of(td.id, e).node_id for e in td.executors]
    assert len(set(nodes)) == 6


def test_round_robin_skips_nodes_running_other_topologies():
    conf = cluster_conf(10, 100, 0)
    other = topo(conf, spouts=1, topology_id="other")
    td = topo(conf, spouts=2, bolts=2)
    state = make_state(gen_supervisors(3, 4, 400, 4000), [other, td], conf)
    state.assign(state.free_slots_on_node("r000s001")[0], other.id, list(other.executors))
    assert RoundRobinResourceAwareStrategy().schedule(state, td).is_success()
    used = {s.node_id for s in state.used_slots_by_topology(td.id)}
    assert used == {"r000s000", "r000s002"}


def test_strategy_names():
    classes = {DefaultResourceAwareStrategy, GenericResourceAwareStrategy, DefaultResourceAwareStrategyOld,
               GenericResourceAwareStrategyOld, RoundRobinResourceAwareStrategy}
    for cls in classes:
        assert STRATEGIES[cls.__name__] is cls
        assert STRATEGIES[f"{PACKAGE}.{cls.__name__}"] is cls
        assert strategy_class(f"backtype.storm.scheduler.resource.strategies.scheduling.{cls.__name__}") is cls
    assert strategy_class("org.apache.storm.scheduler.resource.strategies.scheduling.ConstraintSolverStrategy") is None
    assert (DefaultResourceAwareStrategy.node_sort_type, DefaultResourceAwareStrategy.sort_nodes_for_each_executor) \
        == (NodeSortType.COMMON, True)
    assert (DefaultResourceAwareStrategyOld.node_sort_type,
            DefaultResourceAwareStrategyOld.sort_nodes_for_each_executor) == (NodeSortType.DEFAULT_RAS, False)
    assert (GenericResourceAwareStrategyOld.node_sort_type,
            GenericResourceAwareStrategyOld.sort_nodes_for_each_executor) == (NodeSortType.GENERIC_RAS, True)
    assert RoundRobinResourceAwareStrategy.sort_nodes_for_each_executor is False
