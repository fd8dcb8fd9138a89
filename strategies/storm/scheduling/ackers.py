"""Acker binding: ackers placed together with the first executor of each new worker
(``SchedulingSearcherState``'s bound-acker bookkeeping, ``topology.ras.acker.executors.per.worker``).

* :class:`AckerBinding` — the unassigned ackers (a queue, in Storm's ``HashSet`` order), the ackers bound so far
  and per worker, and the executors that brought ackers along.

Storm's rule: when a non-acker executor is placed on a worker that has no bound ackers yet, and neither
``topology.ras.one.executor.per.worker`` nor ``...one.component.per.worker`` is set, up to
``min(floor((topology.worker.max.heap.size.mb − executor on-heap) / acker on-heap), ackers left,
topology.ras.acker.executors.per.worker)`` ackers are put on the same worker, one by one while each fits. Bound
ackers are skipped when the search reaches them at the end of the executor order; when the executor that
brought them is taken back, they are taken back too and return to the front of the queue.

Departure: Storm frees the whole worker when it takes bound ackers back (``node.free(slot)``), which also drops
executors placed on that worker *before* the one that brought the ackers (possible only when that earlier
executor could bind none); here only the ackers are taken back.
"""
from __future__ import annotations

import math
from collections import deque
from typing import Callable

from clusteremu.base.java import double_to_int

from ..cluster import ClusterState, WorkerSlot
from ..config import (
    ACKER_COMPONENT_ID,
    TOPOLOGY_RAS_ACKER_EXECUTORS_PER_WORKER,
    TOPOLOGY_RAS_ONE_COMPONENT_PER_WORKER,
    TOPOLOGY_RAS_ONE_EXECUTOR_PER_WORKER,
)
from ..topology import Executor, Topology

__all__ = ["AckerBinding"]


class AckerBinding:
    """Bound-acker state of one scheduling attempt."""

    def __init__(self, topology: Topology, unassigned_ackers: list[Executor]) -> None:
        conf = topology.conf
        self.topology = topology
        self.enabled = not (conf[TOPOLOGY_RAS_ONE_EXECUTOR_PER_WORKER] or conf[TOPOLOGY_RAS_ONE_COMPONENT_PER_WORKER])
        self.per_worker = int(conf[TOPOLOGY_RAS_ACKER_EXECUTORS_PER_WORKER])
        self.unassigned: deque[Executor] = deque(unassigned_ackers)
        self.bound: set[Executor] = set()
        self.by_slot: dict[WorkerSlot, list[Executor]] = {}
        self.execs_with_bound: set[Executor] = set()

    def count_to_bind(self, executor: Executor, slot: WorkerSlot) -> int:
        """``getNumOfAckersToBind`` (may be negative when an executor alone exceeds the heap cap)."""
        td = self.topology
        if (not self.enabled or td.component_of(executor) == ACKER_COMPONENT_ID or slot in self.by_slot
                or not self.unassigned):
            return 0
        space = td.worker_max_heap_mb - td.request(executor).on_heap
        acker_heap = td.request(self.unassigned[0]).on_heap
        if acker_heap == 0.0:
            ratio = math.nan if space == 0.0 else math.copysign(math.inf, space)
        else:
            ratio = space / acker_heap
        max_bound = double_to_int(math.floor(ratio)) if math.isfinite(ratio) else double_to_int(ratio)
        return min(max_bound, len(self.unassigned), self.per_worker)

    def bind(self, state: ClusterState, executor: Executor, slot: WorkerSlot,
             valid: Callable[[Executor, WorkerSlot], bool]) -> int:
        """``assignBoundAckersForNewWorkerSlot``: put ackers on ``slot`` after ``executor``; how many."""
        count = self.count_to_bind(executor, slot)
        placed = count
        for k in range(count):
            acker = self.unassigned[0]
            if not valid(acker, slot) or state.slot_of(self.topology.id, acker) is not None:
                placed = k
                break
            self.unassigned.popleft()
            state.assign_executor(slot, self.topology, acker)
            self.by_slot.setdefault(slot, []).append(acker)
            self.bound.add(acker)
        if placed > 0:
            self.execs_with_bound.add(executor)
        return placed

    def unbind(self, state: ClusterState, executor: Executor, slot: WorkerSlot | None) -> None:
        """Take back the ackers ``executor`` brought to ``slot`` (after the executor itself was taken back)."""
        if executor not in self.execs_with_bound:
            return
        self.execs_with_bound.discard(executor)
        if slot is None or slot not in self.by_slot:
            return
        for acker in reversed(self.by_slot.pop(slot)):
            self.bound.discard(acker)
            self.unassigned.appendleft(acker)
            state.free_executor(self.topology, acker)
