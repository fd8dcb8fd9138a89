"""Storm 1.x ``DefaultEvictionStrategy``: which one running topology to evict so that ``td`` may fit.

Called when ``td``'s strategy found too few resources. Needs (``cpuNeeded``, ``memoryNeeded``) are ``td``'s
requests as fractions of its submitter's guarantee; a submitter without a CPU or memory guarantee evicts
nothing. The "most over" user is the first (``HashMap`` order) user with running topologies whose average
utilization exceeds 1 by the most — a user at or below their guarantee is never a victim here.

1. The submitter still has room under guarantee for ``td``: evict the most-over user's lowest-priority
   running topology.
2. Otherwise evict it only if that user is further over guarantee than the submitter would be with ``td``
   (``overVictim > (cpuNeeded + memoryNeeded) / 2 + overSubmitter``).
3. Otherwise evict one of the submitter's own running topologies of lower priority (larger number) than
   ``td`` — the first such in queue order, i.e. the most important of them.

Nothing found: ``td`` cannot be scheduled. The 1.x round frees the victim's slots, moves it back to pending
(it is tried again later in the same round) and retries ``td``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping, Sequence

from ..priority.demand import TopologyDemand
from ..priority.v1_user import V1User

__all__ = ["DefaultEvictionStrategy", "V1Eviction"]

Rule = Literal["submitter-has-room", "victim-more-over", "own-lower-priority"]


@dataclass(frozen=True)
class V1Eviction:
    """The topology to evict, its user and the rule that chose it."""

    topology: TopologyDemand
    user: str
    rule: Rule


class DefaultEvictionStrategy:
    """``org.apache.storm.scheduler.resource.strategies.eviction.DefaultEvictionStrategy`` (Storm 1.x)."""

    def make_space_for(self, td: TopologyDemand, users: Sequence[V1User]) -> V1Eviction | None:
        """``makeSpaceForTopo``: the eviction to make, or None. ``users`` in ``HashMap`` order of their ids."""
        by_id: Mapping[str, V1User] = {u.id: u for u in users}
        submitter = by_id[td.submitter]
        if submitter.cpu_guarantee == 0.0 or submitter.memory_guarantee == 0.0:
            return None
        cpu_needed = td.cpu / submitter.cpu_guarantee
        memory_needed = td.memory / submitter.memory_guarantee
        victim = self._most_over_guarantee(users)
        if (1.0 - submitter.cpu_utilization()) >= cpu_needed and \
                (1.0 - submitter.memory_utilization()) >= memory_needed:
            if victim is not None:
                return self._lowest(victim, "submitter-has-room")
        elif victim is not None:
            if (victim.average_utilization() - 1.0) > \
                    ((cpu_needed + memory_needed) / 2) + (submitter.average_utilization() - 1.0):
                return self._lowest(victim, "victim-more-over")
        for topo in submitter.sorted_queue("running"):
            if topo.priority > td.priority:
                return V1Eviction(topo, submitter.id, "own-lower-priority")
        return None

    @staticmethod
    def _lowest(victim: V1User, rule: Rule) -> V1Eviction:
        topo = victim.lowest_priority_running()
        assert topo is not None  # the victim was chosen for having running topologies
        return V1Eviction(topo, victim.id, rule)

    @staticmethod
    def _most_over_guarantee(users: Sequence[V1User]) -> V1User | None:
        most = 0.0
        found: V1User | None = None
        for user in users:
            over = user.average_utilization() - 1.0
            if over > most and user.queues["running"]:
                most, found = over, user
        return found
