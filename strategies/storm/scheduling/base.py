"""The shared scheduling search of Storm's resource-aware strategies (``BaseResourceAwareStrategy``).

* :class:`BaseResourceAwareStrategy` — ``schedule(state, topology) -> SchedulingResult`` exactly like
  ``IStrategy.schedule(Cluster, TopologyDetails)``: it assigns executors into ``state`` as it goes and
  returns whether *all* unassigned executors of the topology found a slot. Like Storm, it leaves a partial
  placement in ``state`` on failure: the caller (the scheduling round) runs it on a copy and keeps the copy
  only on success — all-or-nothing.

The search, as Storm does it:

1. Early results: nothing unassigned → success ``"Fully Scheduled by <Strategy>"``; no supervisors →
   ``FAIL_NOT_ENOUGH_RESOURCES``; no spout → ``FAIL_INVALID_TOPOLOGY``; as many unassigned executors as the
   state-search limit (``min(resource.aware.scheduler.constraint.max.state.search,
   topology.ras.constraint.max.state.search)``) → ``FAIL_OTHER``.
2. Executors in connection-count order (or by proximity when ``topology.ras.order.executors.by.proximity.needs``
   is set), unassigned ackers last.
3. Depth-first with backtracking. For executor *i*: the node order is re-computed (for this executor) when
   there is none yet, after a backtrack, or — with ``sort_nodes_for_each_executor`` — when the executor's
   component is the *same* as the previous executor's (Storm's ``isExecCompDifferentFromPrior`` tests
   equality); otherwise the previous order is iterated again from its start. Nodes that could never hold the
   executor are skipped; on each other node the slots that were free when the strategy started are tried in
   ``HashSet`` order, a cursor remembering how many were tried for this executor; the first slot where
   ``RasNode.wouldFit`` holds takes it (executors are packed into the topology's existing worker as long as it
   fits: its slot stays offered). When nothing fits, executor *i − 1* is taken back and resumes after its
   last slot; executor 0 failing ends the search.
4. Every placement counts one searched state; more than the limit ends the search with a failure.

Messages are Storm's: ``"Fully Scheduled by X (N states traversed in T ms, backtracked B times)"`` and
``"Cannot schedule by X (N states traversed in T ms, backtracked B times, I of M executors scheduled)"``, with
``T`` always 0 (pure code reads no clock; the per-topology time budget is not modelled).

Quirks kept: Storm's slot cursor (``progressIdx``) is only reset when nodes are re-sorted, so after a reused
order it is not reset; a topology with exactly one unassigned executor that fits nowhere is reported as
scheduled (``areAllExecsScheduled`` compares the index, not the placement) — the round then finds it still
unassigned. Ackers are bound to new workers as Storm does (:mod:`.ackers`); those left over are placed last
like any executor. Workers the topology already had before the strategy started are not offered (Storm offers
only the slots that were free then).
"""
from __future__ import annotations

from typing import ClassVar, Iterable

from ..cluster import ClusterState, WorkerSlot
from ..config import RESOURCE_AWARE_SCHEDULER_MAX_STATE_SEARCH, TOPOLOGY_RAS_CONSTRAINT_MAX_STATE_SEARCH
from ..sorting.exec_sorter import (
    isolate_ackers_to_end,
    sort_executors,
    storm_unassigned_order,
    unassigned_ackers,
)
from ..sorting.node_sorter import NodeSorter, NodeSortType
from ..sorting.recorder import SortRecorder
from ..topology import Executor, Topology
from .ackers import AckerBinding
from .result import SchedulingResult, SchedulingStatus

__all__ = ["BaseResourceAwareStrategy", "FreeSlotsAtStart", "max_state_search"]


def max_state_search(state: ClusterState, topology: Topology) -> int:
    """The state-search bound: ``min(resource.aware.scheduler.constraint.max.state.search`` (daemon),
    ``topology.ras.constraint.max.state.search`` (topology))."""
    return min(int(state.conf[RESOURCE_AWARE_SCHEDULER_MAX_STATE_SEARCH]),
               int(topology.conf[TOPOLOGY_RAS_CONSTRAINT_MAX_STATE_SEARCH]))


class FreeSlotsAtStart:
    """``RasNode.getSlotsAvailableToScheduleOn()``: per node, the slots that were free when the strategy started,
    in slot order; computed on first use (only the topology being scheduled changes the state meanwhile, and it
    never frees a worker it had before)."""

    def __init__(self, state: ClusterState, topology: Topology) -> None:
        self._state = state
        self._topology_id = topology.id
        self._own_at_start = set(state.used_slots_by_topology(topology.id))
        self._cache: dict[str, list[WorkerSlot]] = {}

    def get(self, node_id: str) -> list[WorkerSlot]:
        slots = self._cache.get(node_id)
        if slots is None:
            state = self._state
            if node_id not in state.supervisors:
                slots = []
            else:
                own, me = self._own_at_start, self._topology_id
                slots = []
                for slot in state.node_slot_order(node_id):
                    owner = state.slot_owner(slot)
                    if owner is None or (owner == me and slot not in own):
                        slots.append(slot)
            self._cache[node_id] = slots
        return slots


class _Search:
    """Counters of one scheduling attempt (``SchedulingSearcherState``'s metrics)."""

    __slots__ = ("states", "backtracks", "exec_index", "size")

    def __init__(self, size: int) -> None:
        self.states = 0
        self.backtracks = 0
        self.exec_index = 0
        self.size = size

    def all_scheduled(self) -> bool:
        return self.exec_index == self.size - 1


class BaseResourceAwareStrategy:
    """Storm's resource-aware scheduling search; subclasses choose the node sort type and whether nodes are
    re-sorted per executor. Stateless: one instance may schedule any number of topologies."""

    #: Re-sort nodes for executors (``true`` for the 2.x strategies and ``GenericResourceAwareStrategyOld``).
    sort_nodes_for_each_executor: ClassVar[bool] = True
    #: How each level of racks, hosts and nodes is ordered.
    node_sort_type: ClassVar[NodeSortType] = NodeSortType.COMMON

    @classmethod
    def simple_name(cls) -> str:
        """``getClass().getSimpleName()`` (the name in status messages)."""
        return cls.__name__

    def schedule(self, state: ClusterState, topology: Topology,
                 recorder: SortRecorder | None = None) -> SchedulingResult:
        """Place every unassigned executor of ``topology`` into ``state`` or report why not.

        ``recorder`` (optional) receives every node sorting made (see :mod:`..sorting.recorder`).
        """
        unassigned = state.unassigned_executors(topology)
        limit = max_state_search(state, topology)
        early = self._check_feasibility(state, topology, unassigned, limit)
        if early is not None:
            return early
        unassigned = storm_unassigned_order(topology, unassigned)
        ordered = sort_executors(topology, unassigned)
        ackers = unassigned_ackers(topology, unassigned)
        ordered = isolate_ackers_to_end(ordered, ackers)
        sorter = NodeSorter(state, topology, self.node_sort_type, recorder)
        sorted_nodes: Iterable[str] | None = None
        if not self.sort_nodes_for_each_executor:
            sorter.prepare(None)
            sorted_nodes = sorter.sort_all_nodes()
        free_at_start = FreeSlotsAtStart(state, topology)
        return self._schedule_executors_on_nodes(state, topology, ordered, AckerBinding(topology, ackers), sorter,
                                                 sorted_nodes, free_at_start, limit)

    # --- steps
    def _check_feasibility(self, state: ClusterState, topology: Topology, unassigned: list[Executor],
                           limit: int) -> SchedulingResult | None:
        """``checkSchedulingFeasibility``."""
        if not unassigned:
            return SchedulingResult.success(f"Fully Scheduled by {self.simple_name()}")
        if not state.supervisors:
            return SchedulingResult.failure(SchedulingStatus.FAIL_NOT_ENOUGH_RESOURCES,
                                            "No available nodes to schedule tasks on!")
        if not topology.has_spouts():
            return SchedulingResult.failure(SchedulingStatus.FAIL_INVALID_TOPOLOGY, "Cannot find a Spout!")
        if len(unassigned) >= limit:
            return SchedulingResult.failure(
                SchedulingStatus.FAIL_OTHER,
                f"Unassignerd Executor count ({len(unassigned)}) is greater than searchable state count {limit}")
        return None

    def _valid(self, state: ClusterState, topology: Topology, executor: Executor, slot: WorkerSlot) -> bool:
        """``isExecAssignmentToWorkerValid``: ``RasNode.wouldFit``."""
        return state.node_would_fit(slot, executor, topology)

    def _result(self, search: _Search, success: bool) -> SchedulingResult:
        """``SchedulingSearcherState.createSchedulingResult``."""
        name = self.simple_name()
        if success:
            return SchedulingResult.success(
                f"Fully Scheduled by {name} ({search.states} states traversed in 0 ms, "
                f"backtracked {search.backtracks} times)")
        return SchedulingResult.failure(
            SchedulingStatus.FAIL_NOT_ENOUGH_RESOURCES,
            f"Cannot schedule by {name} ({search.states} states traversed in 0 ms, backtracked "
            f"{search.backtracks} times, {search.exec_index} of {search.size} executors scheduled)")

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
        """``scheduleExecutorsOnNodes``: the backtracking search (module docstring, step 3)."""
        n = len(ordered)
        search = _Search(n)
        comp = [topology.component_of(ex) for ex in ordered]
        progress_idx = -1
        progress_for = [-1] * n
        slot_for: list[WorkerSlot | None] = [None] * n
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
            # isExecCompDifferentFromPrior() is true when the component is the SAME as the prior one
            same_as_prior = i == 0 or comp[i] == comp[i - 1]
            if sorted_nodes is None or (self.sort_nodes_for_each_executor and same_as_prior):
                progress_idx = -1
                sorter.prepare(ex)
                sorted_nodes = sorter.sort_all_nodes()
            placed = False
            for node_id in sorted_nodes:
                if not state.could_ever_fit(node_id, ex, topology):
                    continue
                for slot in free_at_start.get(node_id):
                    progress_idx += 1
                    if progress_idx <= progress_for[i]:
                        continue
                    progress_for[i] += 1
                    if not valid(ex, slot):
                        continue
                    search.states += 1
                    state.assign_executor(slot, topology, ex)
                    ackers.bind(state, ex, slot, valid)
                    if search.all_scheduled():
                        return self._result(search, True)
                    slot_for[i] = slot
                    search.exec_index += 1
                    placed = True
                    break
                if placed:
                    break
            if placed:
                continue
            sorted_nodes = None
            if i == 0:
                break
            # backtrack over bound ackers to the executor placed before; it resumes after the slots it tried
            j = i - 1
            while j >= 0 and ordered[j] in ackers.bound:
                j -= 1
            if j < 0:
                raise RuntimeError(f"Internal Error: Topology {topology.name} exec index became negative")
            search.exec_index = j
            search.backtracks += 1
            state.free_executor(topology, ordered[j])
            ackers.unbind(state, ordered[j], slot_for[j])
            progress_for[i] = -1
        return self._result(search, search.all_scheduled())
