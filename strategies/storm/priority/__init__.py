"""Storm's scheduling priority strategies: in which order the Resource Aware Scheduler tries topologies.

* 2.x (``getOrderedTopologies``, the whole order up front, by a simulated allocation):
  :class:`DefaultSchedulingPriorityStrategy`, :class:`GenericResourceAwareSchedulingPriorityStrategy`,
  :class:`FIFOSchedulingPriorityStrategy`.
* 1.x (``getNextTopologyToSchedule``, one topology at a time by "% of guarantee used"):
  :class:`DefaultSchedulingPriorityStrategyV1` (Storm's class name: ``DefaultSchedulingPriorityStrategy``)
  over :class:`V1User` queues.
"""
from __future__ import annotations

from .demand import (
    DOUBLE_MAX,
    PriorityInput,
    PriorityOrder,
    PriorityPick,
    TopologyDemand,
    UserGuarantee,
    by_priority_then_uptime,
)
from .fifo import FIFOSchedulingPriorityStrategy
from .generic import GenericResourceAwareSchedulingPriorityStrategy
from .simulated import DefaultSchedulingPriorityStrategy
from .v1_default import DefaultSchedulingPriorityStrategy as DefaultSchedulingPriorityStrategyV1
from .v1_default import V1Pick
from .v1_user import V1User

__all__ = [
    "DOUBLE_MAX",
    "DefaultSchedulingPriorityStrategy",
    "DefaultSchedulingPriorityStrategyV1",
    "FIFOSchedulingPriorityStrategy",
    "GenericResourceAwareSchedulingPriorityStrategy",
    "PriorityInput",
    "PriorityOrder",
    "PriorityPick",
    "TopologyDemand",
    "UserGuarantee",
    "V1Pick",
    "V1User",
    "by_priority_then_uptime",
]
