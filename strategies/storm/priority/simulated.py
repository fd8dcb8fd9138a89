"""Storm 2.x ``DefaultSchedulingPriorityStrategy``: the scheduling order by a simulated allocation.

Starting from the cluster's total *capacity*, repeatedly pick the user whose next topology (by priority,
then age, then id) has the lowest score ``max((assigned + next - guarantee) / remaining capacity)`` over
CPU and memory, "schedule" it on paper (the user's assigned grows, the remaining capacity shrinks) and
append it to the order. Users are re-sorted before every pick by a stable sort, so ties keep the previous
order, which starts as the ``HashMap`` order of user ids. Every topology is in the result, running or not.

:class:`SimulatedUser` and the loop are written with the hooks the two subclasses of Storm override:
:mod:`.generic` (generic resources in the score) and :mod:`.fifo` (age instead of score when over guarantee).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from clusteremu.base.java import double_compare_key

from clusteremu.base.java import java_list_sort
from .demand import (
    DOUBLE_MAX,
    PriorityInput,
    PriorityOrder,
    PriorityPick,
    TopologyDemand,
    UserGuarantee,
    by_priority_then_uptime,
)

__all__ = ["Available", "DefaultSchedulingPriorityStrategy", "SimulatedUser", "java_double_compare"]


def java_double_compare(a: float, b: float) -> int:
    """``Double.compare(a, b)``."""
    ka, kb = double_compare_key(a), double_compare_key(b)
    return -1 if ka < kb else (1 if ka > kb else 0)


@dataclass
class Available:
    """The capacity not yet taken by the simulation (it starts at the cluster's total capacity)."""

    cpu: float
    memory: float
    generic: dict[str, float] = field(default_factory=dict)


class SimulatedUser:
    """Storm's ``SimulatedUser``: one user's remaining topologies and what the simulation gave them so far."""

    #: whether ``score`` is a pure function of the user's state and the capacity left (then the comparator is a
    #: consistent order and the sort can compute each score once; FIFO's score re-sorts as a side effect)
    pure_score = True

    def __init__(self, user: str, guarantee: UserGuarantee, topologies: list[TopologyDemand]) -> None:
        self.id = user
        self.guaranteed_cpu = guarantee.cpu
        self.guaranteed_memory = guarantee.memory
        self.tds: list[TopologyDemand] = sorted(topologies, key=by_priority_then_uptime)
        self.assigned_cpu = 0.0
        self.assigned_memory = 0.0

    def next_highest(self) -> TopologyDemand | None:
        """The topology this user would schedule next (``getNextHighest``)."""
        return self.tds[0] if self.tds else None

    def sim_schedule_next_highest(self) -> TopologyDemand:
        """Take the next topology and count it as assigned (``simScheduleNextHighest``)."""
        td = self.tds.pop(0)
        self.assigned_cpu += td.cpu
        self.assigned_memory += td.memory
        return td

    def score_of(self, available: Available, td: TopologyDemand | None) -> float:
        """``getScore(cpu, mem, td)``: negative while under guarantee; MAX_VALUE with nothing to schedule or no
        capacity left."""
        if td is None or available.cpu <= 0 or available.memory <= 0:
            return DOUBLE_MAX
        cpu_score = (self.assigned_cpu + td.cpu - self.guaranteed_cpu) / available.cpu
        mem_score = (self.assigned_memory + td.memory - self.guaranteed_memory) / available.memory
        return max(cpu_score, mem_score)

    def score(self, available: Available) -> float:
        """The score the comparator sorts by (subclasses override it, possibly with side effects)."""
        return self.score_of(available, self.next_highest())


class DefaultSchedulingPriorityStrategy:
    """``org.apache.storm.scheduler.resource.strategies.priority.DefaultSchedulingPriorityStrategy`` (2.x)."""

    def simulated_user(self, user: str, inp: PriorityInput) -> SimulatedUser:
        """``getSimulatedUserFor``: the user's simulation state (subclasses return their own kind)."""
        return SimulatedUser(user, inp.guarantee(user), inp.owned_by(user))

    def available(self, inp: PriorityInput) -> Available:
        """The capacity the simulation starts from."""
        return Available(inp.total_cpu, inp.total_memory)

    def consume(self, available: Available, td: TopologyDemand) -> None:
        """Take a picked topology's request off the remaining capacity."""
        available.cpu -= td.cpu
        available.memory -= td.memory

    def ordered(self, inp: PriorityInput) -> PriorityOrder:
        """``getOrderedTopologies``: every topology of every user, in scheduling order, with the picks."""
        available = self.available(inp)
        users = [self.simulated_user(u, inp) for u in inp.users()]
        order: list[str] = []
        picks: list[PriorityPick] = []
        while users:
            seen: dict[str, float] = {}
            if len(users) < 2:
                pass  # Java's sort compares nothing
            elif all(u.pure_score for u in users):
                # A consistent comparator: any stable sort gives the stable order Java's TimSort gives, and every
                # element takes part in at least one of its comparisons (so every score is "seen").
                seen = {u.id: u.score(available) for u in users}
                users.sort(key=lambda u: double_compare_key(seen[u.id]))
            else:
                def compare(a: SimulatedUser, b: SimulatedUser) -> int:
                    # every comparison recomputes both scores, as Storm's comparator does (FIFO's side effects)
                    sa, sb = a.score(available), b.score(available)
                    seen[a.id], seen[b.id] = sa, sb
                    return java_double_compare(sa, sb)

                java_list_sort(users, compare)
            first = users[0]
            if first.next_highest() is None:
                users.pop(0)
                continue
            score = first.score(available)  # Storm logs this score before the pick; FIFO's call re-sorts
            td = first.sim_schedule_next_highest()
            self.consume(available, td)
            order.append(td.id)
            scores = {u.id: seen.get(u.id, score) for u in users}
            scores[first.id] = score
            picks.append(PriorityPick(td.id, first.id, score, scores))
        return PriorityOrder(tuple(order), tuple(picks))
