"""The executor order (ExecSorterByConnectionCount) and ackers last."""
from __future__ import annotations

from clusteremu.strategies.storm.sorting import (
    component_connection_counts,
    isolate_ackers_to_end,
    sort_executors,
    sort_executors_by_connection_count,
    sort_executors_by_proximity,
    storm_unassigned_order,
    unassigned_ackers,
)
from clusteremu.strategies.storm.topology import Component, Executor, Topology

from ..clusters import gen_executors


def chain(ackers: int = 0) -> Topology:
    comps = [Component("spout", 1, "spout"), Component("bolt-1", 2, "bolt", ("spout",)),
             Component("bolt-2", 2, "bolt", ("bolt-1",)), Component("bolt-3", 2, "bolt", ("bolt-2",)),
             Component("__acker", ackers, "bolt")]
    return Topology("t", comps, {"topology.acker.executors": ackers},
                    executors=gen_executors(comps, ("__acker", "__system")))


def starts(execs):
    return [e.start_task for e in execs]


def test_chain_order_of_the_upstream_tests():
    td = chain(ackers=2)
    assert component_connection_counts(td) == {"spout": 2, "bolt-1": 6, "bolt-2": 8, "bolt-3": 4}
    unassigned = storm_unassigned_order(td, td.executors)
    ordered = sort_executors_by_connection_count(td, unassigned)
    # bolt-2 (tasks 5, 6) first, then one of each neighbour (bolt-1 before bolt-3 by id), repeated; the
    # system executors (ackers 7, 8) follow
    assert starts(ordered[:7]) == [6, 2, 4, 5, 1, 3, 0]
    ackers = unassigned_ackers(td, unassigned)
    assert starts(ackers) == [8, 7]
    assert starts(isolate_ackers_to_end(ordered, ackers)) == [6, 2, 4, 5, 1, 3, 0, 8, 7]


def test_only_unassigned_executors_are_ordered():
    td = chain()
    ordered = sort_executors_by_connection_count(td, [Executor(t, t) for t in (0, 3, 5)])
    assert starts(ordered) == [5, 3, 0]


def test_ties_break_by_component_id_as_java_compares_strings():
    # equal counts: "B" < "a" in String.compareTo (upper case first)
    comps = [Component("a", 1, "spout"), Component("B", 1, "bolt", ("a",))]
    td = Topology("t", comps)
    assert [td.component_of(e) for e in sort_executors_by_connection_count(td, td.executors)] == ["B", "a"]


def test_components_without_neighbours_come_last_in_id_order():
    comps = [Component("z", 2, "spout"), Component("lonely", 2, "spout"), Component("b", 1, "bolt", ("z",))]
    td = Topology("t", comps)
    order = [td.component_of(e) for e in sort_executors_by_connection_count(td, td.executors)]
    # z: 1*2 = 2, b: 2*1 = 2 → "b" first (id), then its neighbour z; z's second; lonely (0) last
    assert order == ["b", "z", "z", "lonely", "lonely"]


def test_proximity_order_of_the_upstream_shuffle_test():
    # testDefaultResourceAwareStrategyInFavorOfShuffle: a shuffle chain, one acker (task 7)
    td = chain(ackers=1)
    unassigned = storm_unassigned_order(td, td.executors)
    assert starts(sort_executors_by_proximity(td, unassigned)) == [0, 2, 6, 4, 1, 5, 3, 7]


def test_proximity_takes_children_in_proportion_and_non_shuffle_children_first():
    # s(1) → a(3, shuffle) and s → f(2, fields): the fields child first, one executor; then 3 // 1 of a
    comps = [Component("s", 1, "spout"), Component("a", 3, "bolt", ("s",)),
             Component("f", 2, "bolt", ("s",), groupings={"s": "fields"})]
    td = Topology("t", comps, executors=gen_executors(comps))
    order = [td.component_of(e) for e in sort_executors_by_proximity(td, td.executors)]
    assert order == ["s", "f", "a", "a", "a", "f"]
    assert [td.component_of(e) for e in sort_executors(td, td.executors)] != order  # connection count by default
    td2 = Topology("t", comps, {"topology.ras.order.executors.by.proximity.needs": True},
                   executors=gen_executors(comps))
    assert [td2.component_of(e) for e in sort_executors(td2, td2.executors)] == order
