"""Storm 1.x ``User``: a user's guarantee and their topologies in four queues (pending, running, attempted,
invalid), each ordered by priority, then age, then id.

In 1.x a user's resource use is the *requested* CPU and memory of their running topologies, and the
"% of guarantee" is ``used / guarantee`` (MAX_VALUE when the guarantee is 0). The 1.x priority strategy
(:mod:`.v1_default`) and eviction strategy (:mod:`..eviction.v1_default`) both read these queues, and the 1.x
round moves topologies between them.
"""
from __future__ import annotations

from typing import Iterable, Literal

from .demand import DOUBLE_MAX, TopologyDemand, UserGuarantee, by_priority_then_uptime

__all__ = ["Queue", "V1User"]

Queue = Literal["pending", "running", "attempted", "invalid"]


class V1User:
    """One user of the 1.x scheduler (``org.apache.storm.scheduler.resource.User`` of Storm 1.2)."""

    def __init__(self, user: str, guarantee: UserGuarantee) -> None:
        self.id = user
        self.cpu_guarantee = guarantee.cpu
        self.memory_guarantee = guarantee.memory
        self.queues: dict[Queue, dict[str, TopologyDemand]] = {
            "pending": {}, "running": {}, "attempted": {}, "invalid": {}}

    def copy(self) -> "V1User":
        """The copy the 1.x round checkpoints before scheduling a topology."""
        other = V1User(self.id, UserGuarantee(self.cpu_guarantee, self.memory_guarantee))
        other.queues = {name: dict(q) for name, q in self.queues.items()}  # type: ignore[misc]
        return other

    def add(self, queue: Queue, td: TopologyDemand) -> None:
        """Put ``td`` into ``queue``."""
        self.queues[queue][td.id] = td

    def move(self, td: TopologyDemand, src: Queue, dest: Queue) -> None:
        """``moveTopology``: a no-op unless ``td`` is in ``src`` and not already in ``dest``."""
        if td.id not in self.queues[src] or td.id in self.queues[dest]:
            return
        del self.queues[src][td.id]
        self.queues[dest][td.id] = td

    def sorted_queue(self, queue: Queue) -> list[TopologyDemand]:
        """The queue in ``TreeSet`` order (priority, then older first, then id)."""
        return sorted(self.queues[queue].values(), key=by_priority_then_uptime)

    def cpu_used(self) -> float:
        """Requested CPU of the running topologies."""
        return _sum(t.cpu for t in self.sorted_queue("running"))

    def memory_used(self) -> float:
        """Requested on+off-heap memory of the running topologies."""
        return _sum(t.memory for t in self.sorted_queue("running"))

    def cpu_utilization(self) -> float:
        """CPU used / guarantee; MAX_VALUE when the guarantee is 0."""
        return DOUBLE_MAX if self.cpu_guarantee == 0.0 else self.cpu_used() / self.cpu_guarantee

    def memory_utilization(self) -> float:
        """Memory used / guarantee; MAX_VALUE when the guarantee is 0."""
        return DOUBLE_MAX if self.memory_guarantee == 0.0 else self.memory_used() / self.memory_guarantee

    def average_utilization(self) -> float:
        """``getResourcePoolAverageUtilization``: cpu/2 + memory/2 (halved first, so MAX_VALUE stays finite)."""
        return self.cpu_utilization() / 2.0 + self.memory_utilization() / 2.0

    def has_pending(self) -> bool:
        """``hasTopologyNeedSchedule``."""
        return bool(self.queues["pending"])

    def next_pending(self) -> TopologyDemand | None:
        """``getNextTopologyToSchedule``: the first pending topology not yet attempted."""
        for td in self.sorted_queue("pending"):
            if td.id not in self.queues["attempted"]:
                return td
        return None

    def lowest_priority_running(self) -> TopologyDemand | None:
        """``getRunningTopologyWithLowestPriority``: the last running topology in queue order."""
        running = self.sorted_queue("running")
        return running[-1] if running else None


def _sum(values: Iterable[float]) -> float:
    total = 0.0
    for v in values:  # left to right, as Java's loop adds
        total += v
    return total
