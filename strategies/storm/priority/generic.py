"""Storm 2.x ``GenericResourceAwareSchedulingPriorityStrategy``: the simulated order of
:mod:`.simulated` with generic resources (GPUs and the like) in the score.

Each generic resource type the cluster offers adds ``(assigned + next - guarantee) / remaining`` to the max;
a type whose remaining capacity is <= 0 makes the score MAX_VALUE. Requests for types the cluster does not
offer are ignored. So a user whose generic request exceeds the (usually zero) generic guarantee sorts late
and cannot evict topologies ordered before it.

Storm subtracts the picks from the cluster's own cached map of generic totals (shared by every copy of that
``Cluster``); nothing else reads it during the round and nimbus builds a new ``Cluster`` for every round, so
here the simulation works on its own copy.
"""
from __future__ import annotations

from .demand import DOUBLE_MAX, PriorityInput, TopologyDemand, UserGuarantee
from .simulated import Available, DefaultSchedulingPriorityStrategy, SimulatedUser

__all__ = ["GenericResourceAwareSchedulingPriorityStrategy", "GrasSimulatedUser"]


class GrasSimulatedUser(SimulatedUser):
    """``GrasSimulatedUser``: also tracks generic resources; guarantees only for the types the cluster offers."""

    def __init__(self, user: str, guarantee: UserGuarantee, topologies: list[TopologyDemand],
                 offered: list[str]) -> None:
        super().__init__(user, guarantee, topologies)
        self.guaranteed_generic = {r: guarantee.generic.get(r, 0.0) for r in offered}
        self.assigned_generic: dict[str, float] = {}

    def sim_schedule_next_highest(self) -> TopologyDemand:
        td = super().sim_schedule_next_highest()
        for resource, amount in td.generic.items():
            self.assigned_generic[resource] = self.assigned_generic.get(resource, 0.0) + amount
        return td

    def score_of(self, available: Available, td: TopologyDemand | None) -> float:
        ret = super().score_of(available, td)
        if ret == DOUBLE_MAX:
            return ret
        assert td is not None
        for resource, avail in available.generic.items():
            if avail <= 0:
                return DOUBLE_MAX
            would_be = self.assigned_generic.get(resource, 0.0) + td.generic.get(resource, 0.0)
            ret = max(ret, (would_be - self.guaranteed_generic.get(resource, 0.0)) / avail)
        return ret


class GenericResourceAwareSchedulingPriorityStrategy(DefaultSchedulingPriorityStrategy):
    """``org.apache.storm.scheduler.resource.strategies.priority.GenericResourceAwareSchedulingPriorityStrategy``."""

    def simulated_user(self, user: str, inp: PriorityInput) -> SimulatedUser:
        return GrasSimulatedUser(user, inp.guarantee(user), inp.owned_by(user), list(inp.total_generic))

    def available(self, inp: PriorityInput) -> Available:
        return Available(inp.total_cpu, inp.total_memory, dict(inp.total_generic))

    def consume(self, available: Available, td: TopologyDemand) -> None:
        super().consume(available, td)
        for resource, amount in td.generic.items():
            if resource in available.generic:  # Storm warns and ignores types the cluster does not offer
                available.generic[resource] -= amount
