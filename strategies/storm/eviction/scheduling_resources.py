"""Storm 2.x ``ResourceAwareScheduler.TopologySchedulingResources``: the cluster-wide sum check that may skip
a topology's strategy, and what a topology still needs while topologies are evicted for it.

* available: the cluster's free resources (non-blacklisted supervisors), tracked as an offer (CPU, memory,
  generic) and, separately, as plain memory MB;
* required: the topology's whole request; scheduled: what its already-placed executors request (and the
  memory its workers are charged).

``can_schedule()`` = available + scheduled covers required in every resource, and — once an attempt has
failed — nothing of "remaining" is left over zero, where remaining = required − scheduled − evicted so far
(each resource clamped at 0, as ``NormalizedResourceOffer.remove`` does, except the plain memory figure).
Shared memory is not modelled (no topology here declares any), so both memory figures agree.
"""
from __future__ import annotations

from typing import Iterable

from clusteremu.base.java import java_order

from clusteremu.base.java import double_to_string as java_double_to_string
from ..config import CPU
from ..resources import ResourceOffer, ResourceRequest

__all__ = ["SchedulingResources"]


class SchedulingResources:
    """One topology's resource bookkeeping through the attempts of one scheduling round."""

    def __init__(self, cluster_available: ResourceOffer, required: ResourceRequest, scheduled: ResourceRequest,
                 scheduled_memory: float, known_generic: Iterable[str] = ()) -> None:
        """``cluster_available``: free resources now; ``required``: the whole topology's request;
        ``scheduled``: the requests of its placed executors; ``scheduled_memory``: memory its workers are
        charged; ``known_generic``: generic resource names Storm would print in messages."""
        self.cluster_available = cluster_available.copy()
        self.cluster_available_memory = cluster_available.memory
        self.required = required
        self.required_memory = required.memory
        self.scheduled = scheduled
        self.scheduled_memory = scheduled_memory
        self.remaining_set = False
        self.remaining = ResourceOffer()
        self.remaining_memory = 0.0
        self._known_generic = sorted(set(known_generic) | set(required.generic))

    def can_schedule(self) -> bool:
        """``canSchedule``: the sum check, plus the remaining need once :meth:`set_remaining` was called."""
        return self._can_schedule_available() and self._can_schedule_remaining()

    def _can_schedule_available(self) -> bool:
        available = self.cluster_available.copy()
        available.add(self.scheduled)
        if available.remove(self.required):
            return False
        return self.cluster_available_memory + self.scheduled_memory >= self.required_memory

    def _can_schedule_remaining(self) -> bool:
        if not self.remaining_set:
            return True
        return not (self.remaining.are_any_over_zero() or self.remaining_memory > 0)

    def set_remaining(self, scheduled: ResourceRequest, scheduled_memory: float) -> None:
        """``setRemainingRequiredResources`` after a failed attempt: remaining = required − scheduled."""
        self.remaining_set = True
        self.scheduled = scheduled
        self.scheduled_memory = scheduled_memory
        self.remaining = ResourceOffer()
        self.remaining.add(self.required)
        self.remaining.remove(scheduled)
        self.remaining_memory = self.required_memory - scheduled_memory

    def adjust_for_evicted(self, evicted: ResourceRequest, evicted_memory: float) -> None:
        """``adjustResourcesForEvictedTopology``: the evicted topology's requests become available and
        count against the remaining need (its charged worker memory for the plain memory figure)."""
        self.cluster_available.add(evicted)
        self.cluster_available_memory += evicted_memory
        self.remaining.remove(evicted)
        self.remaining_memory -= evicted_memory

    def reset_remaining(self) -> None:
        """``resetRemaining`` at the start of every attempt: only the sum check applies to it."""
        self.remaining_set = False
        self.remaining_memory = 0.0

    def remaining_message(self) -> str:
        """``getRemainingRequiredResourcesMessage``, word for word (Java number formatting)."""
        out: list[str] = []
        available = self.cluster_available.copy()
        available.remove(self.scheduled)
        if self.remaining_memory > 0:
            out.append(f"Additional Memory Required: {_d(self.remaining_memory)} MB ")
            out.append(f"(Available: {_d(available.memory)} MB). ")
        if self.remaining.cpu > 0:
            out.append(f"Additional CPU Required: {_d(self.remaining.cpu)}% CPU ")
            out.append(f"(Available: {_d(available.cpu)} % CPU).")
        if self.remaining.any_non_cpu_over_zero():
            out.append(" Additional Topology Required Resources: ")
            out.append(self._normalized(self.remaining))
            out.append(" Cluster Available Resources: ")
            out.append(self._normalized(available))
            out.append(".  ")
        return "".join(out)

    def _normalized(self, offer: ResourceOffer) -> str:
        # NormalizedResources.toString: every registered generic name plus CPU, in HashMap order
        values = {name: offer.generic.get(name, 0.0) for name in self._known_generic}
        values[CPU] = offer.cpu
        body = ", ".join(f"{k}={_d(values[k])}" for k in java_order(values))
        return "Normalized resources: {" + body + "}"


def _d(value: float) -> str:
    return java_double_to_string(value)
