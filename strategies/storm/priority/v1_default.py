"""Storm 1.x ``DefaultSchedulingPriorityStrategy``: the next topology comes from the user with the lowest
"% of guarantee used".

Among users with pending topologies, in the ``HashMap`` order of user ids, the one with the lowest average of
``cpuUsed / cpuGuarantee`` and ``memUsed / memGuarantee`` wins (strictly lower replaces); a user within 1e-4
of the best replaces it when their guarantee is a larger share of the cluster (average of the CPU and memory
shares). That user's first pending topology not yet attempted is scheduled next. Unlike 2.x the order is
not computed up front: the 1.x round asks again after every topology, because scheduling and eviction change
who is running.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

from .demand import TopologyDemand
from .v1_user import V1User

__all__ = ["DefaultSchedulingPriorityStrategy", "V1Pick"]

_TIE = 0.0001


@dataclass(frozen=True)
class V1Pick:
    """The topology picked (None: nothing left), its user, and every user-with-pending's average
    utilization at that moment."""

    topology: TopologyDemand | None
    user: str | None
    scores: Mapping[str, float]


class DefaultSchedulingPriorityStrategy:
    """``org.apache.storm.scheduler.resource.strategies.priority.DefaultSchedulingPriorityStrategy`` of Storm 1.x."""

    def next_user(self, users: Sequence[V1User], total_cpu: float, total_memory: float) -> V1User | None:
        """``getNextUser``: ``users`` in the ``HashMap`` iteration order of their ids."""
        least = float("inf")
        ret: V1User | None = None
        for user in users:
            if not user.has_pending():
                continue
            util = user.average_utilization()
            if least > util:
                ret, least = user, util
            elif ret is not None and abs(least - util) < _TIE:
                if _share(user, total_cpu, total_memory) > _share(ret, total_cpu, total_memory):
                    ret, least = user, util
        return ret

    def next_topology(self, users: Sequence[V1User], total_cpu: float, total_memory: float) -> V1Pick:
        """``getNextTopologyToSchedule`` with the utilizations it compared (for ``--explain``)."""
        scores = {u.id: u.average_utilization() for u in users if u.has_pending()}
        user = self.next_user(users, total_cpu, total_memory)
        if user is None:
            return V1Pick(None, None, scores)
        return V1Pick(user.next_pending(), user.id, scores)


def _share(user: V1User, total_cpu: float, total_memory: float) -> float:
    """The user's guarantee as a share of the cluster: mean of the CPU and memory shares."""
    return (_java_divide(user.cpu_guarantee, total_cpu) + _java_divide(user.memory_guarantee, total_memory)) / 2.0


def _java_divide(a: float, b: float) -> float:
    # Java double division by zero gives +-Infinity or NaN (and NaN never compares greater) instead of raising
    if b != 0.0:
        return a / b
    if a == 0.0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)
