"""The order in which a strategy places executors (``ExecSorterByConnectionCount``, ``ExecSorterByProximity``).

* :func:`sort_executors_by_connection_count` — Storm's default executor order:

  1. Components (non-system) sorted by their connection count — Σ over neighbours (parents ∪ children) of
     ``neighbour executors × own executors`` — descending, ties by id (``String.compareTo``).
  2. For each component in that order: take one of its unassigned executors, then one of each neighbour
     (neighbours sorted by ``neighbour executors × own executors`` ascending, ties by id); repeat while any
     was taken. An executor already taken is not taken again.
  3. Executors not placed that way (system executors such as ackers) follow, in the order given.

  "Executors of a component" and "unassigned executors" iterate in Storm's hash orders
  (:meth:`~..topology.Topology.component_executors`), which decides *which* executor of a component comes
  first.
* :func:`storm_unassigned_order` — the order of Storm's ``HashSet`` of unassigned executors.
* :func:`unassigned_ackers` — the acker executors still to place, in Storm's ``HashSet`` order.
* :func:`isolate_ackers_to_end` — ``BaseResourceAwareStrategy.isolateAckersToEnd``: unassigned ackers moved
  to the end, in the order of Storm's ``HashSet`` of acker executors.
* :func:`sort_executors_by_proximity` — ``ExecSorterByProximity`` (``topology.ras.order.executors.by.proximity.
  needs``): components in topological order (Storm's loop: repeatedly the first component, in its ``HashMap``
  order, with no unvisited parent); for each, as many times as it has executors left, take one of its executors
  and then, depth first, executors of its children — ``max(1, child left // own left)`` of them through a
  shuffle (or local-or-shuffle) grouping, one otherwise. Children are visited as Storm's (inconsistent)
  ``TreeSet`` comparator leaves them: non-shuffle children first, in reverse of their ``HashSet`` order, then
  shuffle children by id.
* :func:`sort_executors` — the one of the two that the topology's conf selects.
"""
from __future__ import annotations

from collections import deque
from typing import Iterable, Sequence

from clusteremu.base.java import java_order, string_compare_key

from clusteremu.base.java import capacity_after_puts, capacity_copy_collection, hash_order
from ..config import ACKER_COMPONENT_ID, TOPOLOGY_RAS_ORDER_EXECUTORS_BY_PROXIMITY_NEEDS
from ..topology import Executor, Topology

__all__ = [
    "component_connection_counts",
    "isolate_ackers_to_end",
    "sort_executors",
    "sort_executors_by_connection_count",
    "sort_executors_by_proximity",
    "storm_unassigned_order",
    "unassigned_ackers",
]


def component_connection_counts(topology: Topology) -> dict[str, int]:
    """Connection count per user component: Σ over neighbours of ``neighbour executors × own executors``."""
    comps = {c.id for c in topology.user_components()}
    size = {c: len(topology.component_executors(c)) for c in comps}
    return {c: sum(size[n] * size[c] for n in topology.neighbors(c) if n in comps) for c in comps}


def sort_executors_by_connection_count(topology: Topology, unassigned: Sequence[Executor]) -> list[Executor]:
    """``ExecSorterByConnectionCount.sortExecutors``; ``unassigned`` in Storm's iteration order."""
    pending = set(unassigned)
    comps = [c.id for c in topology.user_components()]
    comp_set = set(comps)
    size = {c: len(topology.component_executors(c)) for c in comps}
    counts = component_connection_counts(topology)
    queues: dict[str, deque[Executor]] = {
        c: deque(ex for ex in topology.component_executors(c) if ex in pending) for c in comps}
    ordered: dict[Executor, None] = {}  # LinkedHashSet
    for comp in sorted(comps, key=lambda c: (-counts[c], string_compare_key(c))):
        neighbours = sorted((n for n in topology.neighbors(comp) if n in comp_set),
                            key=lambda n: (size[n] * size[comp], string_compare_key(n)))
        own = queues[comp]
        while True:
            took = False
            if own:
                ordered.setdefault(own.popleft(), None)
                took = True
            for n in neighbours:
                q = queues[n]
                if q:
                    ordered.setdefault(q.popleft(), None)
                    took = True
            if not took:
                break
    for ex in unassigned:
        ordered.setdefault(ex, None)
    return list(ordered)


_SHUFFLE = frozenset(("shuffle", "local_or_shuffle"))


def _storm_component_order(topology: Topology) -> list[str]:
    """Keys of ``getUserTopolgyComponents()``: a ``HashMap`` filled with spouts, then bolts, each in the
    ``HashMap`` order of the topology's spout and bolt maps."""
    comps = topology.user_components()
    spouts = java_order(c.id for c in comps if c.kind == "spout")
    bolts = java_order(c.id for c in comps if c.kind == "bolt")
    return java_order(spouts + bolts)


def _storm_children_order(topology: Topology, component_id: str, comp_order: Sequence[str]) -> list[str]:
    """``Component.getChildren()``: a ``HashSet`` filled as the components (spouts, then bolts) were linked."""
    comps = topology.components
    spouts = [c for c in comp_order if comps[c].kind == "spout"]
    bolts = [c for c in comp_order if comps[c].kind == "bolt"]
    linked = [c for c in java_order(spouts) + java_order(bolts) if component_id in comps[c].inputs]
    return java_order(linked)


def sort_executors_by_proximity(topology: Topology, unassigned: Sequence[Executor]) -> list[Executor]:
    """``ExecSorterByProximity.sortExecutors``; ``unassigned`` in Storm's iteration order."""
    pending = set(unassigned)
    order = _storm_component_order(topology)
    comps = topology.components
    queues: dict[str, deque[Executor]] = {
        c: deque(ex for ex in topology.component_executors(c) if ex in pending) for c in order}
    children = {c: [k for k in _storm_children_order(topology, c, order) if k in queues] for c in order}

    def shuffle(parent: str, child: str) -> bool:
        return comps[child].grouping_from(parent) in _SHUFFLE

    def sorted_children(comp: str) -> list[str]:
        kids = children[comp]
        plain = [k for k in kids if not shuffle(comp, k)]
        shuffled = sorted((k for k in kids if shuffle(comp, k)), key=string_compare_key)
        return plain[::-1] + shuffled

    # topologicalSortComponents
    in_degree = {c: 0 for c in order}
    for c in order:
        for k in children[c]:
            in_degree[k] += 1
    visited: dict[str, None] = {}
    for _ in range(len(order)):
        for c in order:
            if in_degree[c] == 0 and c not in visited:
                visited[c] = None
                for k in children[c]:
                    in_degree[k] -= 1
                break
    topo_order = list(visited) + [c for c in order if c not in visited]  # cycles: appended

    def take(comp: str) -> list[Executor]:
        q = queues[comp]
        left = len(q)
        if left == 0:
            return []
        out = [q.popleft()]
        for kid in sorted_children(comp):
            kid_left = len(queues[kid])
            if kid_left == 0:
                continue
            count = max(1, kid_left // left) if shuffle(comp, kid) else 1
            for _ in range(count):
                out.extend(take(kid))
        return out

    ordered: dict[Executor, None] = {}
    for comp in topo_order:
        for _ in range(len(queues[comp])):
            for ex in take(comp):
                ordered.setdefault(ex, None)
    for ex in unassigned:
        ordered.setdefault(ex, None)
    return list(ordered)


def sort_executors(topology: Topology, unassigned: Sequence[Executor]) -> list[Executor]:
    """By proximity when ``topology.ras.order.executors.by.proximity.needs`` is set, else by connection count."""
    if topology.conf.get(TOPOLOGY_RAS_ORDER_EXECUTORS_BY_PROXIMITY_NEEDS):
        return sort_executors_by_proximity(topology, unassigned)
    return sort_executors_by_connection_count(topology, unassigned)


def storm_unassigned_order(topology: Topology, unassigned: Sequence[Executor]) -> list[Executor]:
    """The iteration order of the strategy's ``HashSet`` of unassigned executors: Storm copies the topology's
    executors into a ``HashSet`` (``getUnassignedExecutors``), removes the assigned ones, and copies the rest into
    another; ``unassigned`` is taken in :attr:`Topology.executors` order."""
    first = capacity_copy_collection(len(topology.executors))
    order = hash_order(list(unassigned), [e.java_hash() for e in unassigned], first)
    return hash_order(order, [e.java_hash() for e in order], capacity_copy_collection(len(order)))


def unassigned_ackers(topology: Topology, unassigned: Iterable[Executor]) -> list[Executor]:
    """Unassigned acker executors in the order of Storm's ``HashSet`` of the acker component's executors."""
    if ACKER_COMPONENT_ID not in topology.components:
        return []
    pending = set(unassigned)
    ackers = list(topology.component_executors(ACKER_COMPONENT_ID))
    order = hash_order(ackers, [a.java_hash() for a in ackers], capacity_after_puts(len(ackers)))
    return [a for a in order if a in pending]


def isolate_ackers_to_end(ordered: list[Executor], ackers: Sequence[Executor]) -> list[Executor]:
    """``isolateAckersToEnd``: ``ordered`` without ``ackers``, then ``ackers``."""
    drop = set(ackers)
    return [ex for ex in ordered if ex not in drop] + list(ackers)
