"""What the priority strategies read: each topology's total request and identity, each user's guarantee,
the cluster's total capacity — and what they answer: the order and, for ``--explain``, each pick.

The scheduling round builds these from the data model, so the strategies depend on nothing else and can be
tested with plain numbers. Topologies come in the iteration order of Storm's ``Topologies`` map (a
``HashMap`` by topology id); users are derived from them in that order, as ``ResourceAwareScheduler.getUsers``
does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from clusteremu.base.java import java_order

__all__ = [
    "DOUBLE_MAX",
    "PriorityInput",
    "PriorityOrder",
    "PriorityPick",
    "TopologyDemand",
    "UserGuarantee",
    "by_priority_then_uptime",
]

#: ``Double.MAX_VALUE``: the score of a user with nothing left to schedule or no capacity left.
DOUBLE_MAX = 1.7976931348623157e308


@dataclass(frozen=True)
class TopologyDemand:
    """One topology as the priority and eviction strategies see it.

    ``cpu``/``memory`` are ``getTotalRequestedCpu()`` and on-heap + off-heap of all its executors;
    ``generic`` the summed generic requests; ``uptime`` is now - launch time, in seconds.
    """

    id: str
    name: str
    submitter: str
    priority: int
    uptime: int
    cpu: float
    memory: float
    generic: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class UserGuarantee:
    """A user's resource pool (``resource.aware.scheduler.user.pools``); a user without one has zeros."""

    cpu: float = 0.0
    memory: float = 0.0
    generic: Mapping[str, float] = field(default_factory=dict)

    @staticmethod
    def from_pool(pool: Mapping[str, float] | None) -> "UserGuarantee":
        """``User(id, pool)``: keys ``cpu`` and ``memory``; every other key is a generic guarantee."""
        if not pool:
            return UserGuarantee()
        return UserGuarantee(
            cpu=float(pool.get("cpu", 0.0)),
            memory=float(pool.get("memory", 0.0)),
            generic={k: float(v) for k, v in pool.items() if k not in ("cpu", "memory")},
        )


@dataclass(frozen=True)
class PriorityInput:
    """Everything a priority strategy reads. ``topologies`` in ``Topologies`` iteration order;
    ``total_*`` are the cluster's total capacity (every supervisor, used or not)."""

    topologies: tuple[TopologyDemand, ...]
    pools: Mapping[str, Mapping[str, float]]
    total_cpu: float
    total_memory: float
    total_generic: Mapping[str, float] = field(default_factory=dict)

    def users(self) -> list[str]:
        """Submitters in the iteration order of the ``HashMap`` ``getUsers`` fills (empty submitters skipped,
        as Storm skips them with an error)."""
        return java_order(dict.fromkeys(t.submitter for t in self.topologies if t.submitter))

    def guarantee(self, user: str) -> UserGuarantee:
        """The user's guarantee (zeros when the pools do not name the user)."""
        return UserGuarantee.from_pool(self.pools.get(user))

    def owned_by(self, user: str) -> list[TopologyDemand]:
        """``Topologies.getTopologiesOwnedBy(user)``, in iteration order."""
        return [t for t in self.topologies if t.submitter == user]


@dataclass(frozen=True)
class PriorityPick:
    """One step of the order: the topology picked, its user and score, and every user's score at that moment
    (users in the order they were sorted into, the picked one first)."""

    topology: str
    user: str
    score: float
    scores: Mapping[str, float]


@dataclass(frozen=True)
class PriorityOrder:
    """The ordered topology ids and the picks that produced them."""

    order: tuple[str, ...]
    picks: tuple[PriorityPick, ...]


def by_priority_then_uptime(t: TopologyDemand) -> tuple[int, int, bytes]:
    """Sort key of Storm's ``TopologyByPriorityAndSubmissionTimeComparator`` / ``PQsortByPriorityAndSubmittionTime``:
    priority ascending (0 first), then uptime descending (older first), then id (``String.compareTo``)."""
    return (t.priority, -t.uptime, t.id.encode("utf-16-be"))
