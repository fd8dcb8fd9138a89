"""``RoundRobinResourceAwareStrategy``: spread executors over nodes in turn, without backtracking.

* :class:`RoundRobinResourceAwareStrategy` — the nodes are sorted once, for no executor (``COMMON`` order), and
  only nodes that run nothing or only this topology are kept, at most ``topology.isolated.machines`` of them
  when that is set. The node cursor restarts at the top when the executor's component is the *same* as the
  previous executor's (Storm's ``isExecCompDifferentFromPrior`` tests equality) or when the list is used up;
  otherwise it continues after the node used last. On a node the first slot (free when the strategy started)
  where the executor fits takes it (with its bound ackers, as in :mod:`.ackers`). The first executor that fits
  on none of the remaining nodes fails the topology (no backtracking).
"""
from __future__ import annotations

from typing import Iterable

from ..cluster import ClusterState
from ..config import TOPOLOGY_ISOLATED_MACHINES
from ..sorting.node_sorter import NodeSorter, NodeSortType
from ..topology import Executor, Topology
from .ackers import AckerBinding
from .base import BaseResourceAwareStrategy, FreeSlotsAtStart, _Search
from .result import SchedulingResult

__all__ = ["RoundRobinResourceAwareStrategy"]


class RoundRobinResourceAwareStrategy(BaseResourceAwareStrategy):
    """Storm's ``RoundRobinResourceAwareStrategy``."""

    sort_nodes_for_each_executor = False
    node_sort_type = NodeSortType.COMMON

    def _truncated_nodes(self, state: ClusterState, topology: Topology, sorted_nodes: Iterable[str]) -> list[str]:
        """``getTruncatedNodeList``: nodes free of other topologies, at most ``topology.isolated.machines``."""
        limit = topology.conf[TOPOLOGY_ISOLATED_MACHINES]
        out: list[str] = []
        for node_id in sorted_nodes:  # the whole lazy order is walked now, before anything is placed
            if limit is not None and len(out) >= limit:
                continue
            running = state.topologies_on_node(node_id)
            if not running or running == {topology.id}:
                out.append(node_id)
        return out

    def _schedule_executors_on_nodes(
        self,
        state: ClusterState,
        topology: Topology,
        ordered: list[Executor],
        ackers: AckerBinding,
        sorter: NodeSorter,
        sorted_nodes: Iterable[str] | None,
        free_at_start: FreeSlotsAtStart,
        limit: int,
    ) -> SchedulingResult:
        assert sorted_nodes is not None
        nodes = self._truncated_nodes(state, topology, sorted_nodes)
        n = len(ordered)
        search = _Search(n)
        comp = [topology.component_of(ex) for ex in ordered]
        cursor: int | None = None  # index of the next node; None = no iterator yet
        valid = lambda e, s: self._valid(state, topology, e, s)  # noqa: E731
        while True:
            if search.states > limit:
                return self._result(search, False)
            i = search.exec_index
            ex = ordered[i]
            if ex in ackers.bound:  # placed already, with the executor that brought it
                if search.all_scheduled():
                    return self._result(search, True)
                search.exec_index += 1
                continue
            same_as_prior = i == 0 or comp[i] == comp[i - 1]
            if cursor is None or same_as_prior or cursor >= len(nodes):
                cursor = 0
            placed = False
            while cursor < len(nodes):
                node_id = nodes[cursor]
                cursor += 1
                if not state.could_ever_fit(node_id, ex, topology):
                    continue
                for slot in free_at_start.get(node_id):
                    if not valid(ex, slot):
                        continue
                    search.states += 1
                    state.assign_executor(slot, topology, ex)
                    ackers.bind(state, ex, slot, valid)
                    if search.all_scheduled():
                        return self._result(search, True)
                    search.exec_index += 1
                    placed = True
                    break
                if placed:
                    break
            if not placed:
                break
        return self._result(search, search.all_scheduled())
