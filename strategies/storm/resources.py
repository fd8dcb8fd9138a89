"""Storm's normalized resources: what a supervisor offers and what an executor or a worker requests.

Mirrors ``org.apache.storm.scheduler.resource.normalization``:

* :func:`normalize_resource_map` — ``ResourceNameNormalizer``: config key names to the common resource names
  (``supervisor.cpu.capacity`` and ``topology.component.cpu.pcore.percent`` → ``cpu.pcore.percent`` ...).
* :class:`ResourceOffer` — ``NormalizedResourceOffer``: CPU (percent of a core), *total* memory MB, generic
  resources (``gpu.count`` ...). Storm's arithmetic: :meth:`~ResourceOffer.add`, :meth:`~ResourceOffer.remove`
  (clamps every resource at 0 and reports whether anything went negative), :meth:`~ResourceOffer.could_fit`,
  the percentages the node sorter ranks by (:meth:`~ResourceOffer.min_percentage_used_by`,
  :meth:`~ResourceOffer.average_percentage_used_by`, in 0..100, raising ``ValueError`` when "used" exceeds
  the total as Storm's ``IllegalArgumentException`` does) and the rare-resource negation
  (:meth:`~ResourceOffer.update_for_rare_resource_affinity`).
* :func:`sum_offers` — a new offer summing several, in order.
* :class:`ResourceRequest` — ``NormalizedResourceRequest``: CPU, on-heap MB, off-heap MB, generic; also used
  for what one worker is charged (``WorkerResources``: CPU already raised to the worker minimum).

Generic resources are a ``dict`` name → amount; a name missing from a dict counts as 0. Storm keeps them in an
array indexed by the order in which names were first seen by the JVM; the arithmetic is the same except in one
corner documented at :meth:`ResourceOffer.min_percentage_used_by`. Percentages visit memory, CPU, then generic
names sorted by name (Storm: registration order), which only matters to the last bit of a float sum.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from .config import CPU, MEMORY, OFFHEAP, ONHEAP

__all__ = ["NAME_MAPPING", "ResourceOffer", "ResourceRequest", "normalize_resource_map", "sum_offers"]

#: ``ResourceNameNormalizer``'s mapping of config keys to common resource names.
NAME_MAPPING: dict[str, str] = {
    "topology.component.cpu.pcore.percent": CPU,
    "supervisor.cpu.capacity": CPU,
    "topology.component.resources.onheap.memory.mb": ONHEAP,
    "topology.component.resources.offheap.memory.mb": OFFHEAP,
    "supervisor.memory.capacity.mb": MEMORY,
}
_BUILT_IN = frozenset((CPU, MEMORY, ONHEAP, OFFHEAP))


def normalize_resource_map(resources: Mapping[str, float] | None) -> dict[str, float]:
    """Config key names mapped to the common names; values as floats (``normalizedResourceMap``)."""
    if not resources:
        return {}
    return {NAME_MAPPING.get(k, k): float(v) for k, v in resources.items()}


def _generic_only(resources: Mapping[str, float]) -> dict[str, float]:
    return {k: float(v) for k, v in resources.items() if k not in _BUILT_IN}


class ResourceRequest:
    """What an executor requests, or what a worker is charged (``NormalizedResourceRequest``).

    ``cpu`` in percent of a core, ``on_heap``/``off_heap`` in MB, ``generic`` name → amount.
    """

    __slots__ = ("cpu", "on_heap", "off_heap", "generic")

    def __init__(self, cpu: float = 0.0, on_heap: float = 0.0, off_heap: float = 0.0,
                 generic: Mapping[str, float] | None = None) -> None:
        self.cpu = float(cpu)
        self.on_heap = float(on_heap)
        self.off_heap = float(off_heap)
        self.generic: dict[str, float] = dict(generic) if generic else {}

    @classmethod
    def from_normalized_map(cls, resources: Mapping[str, float]) -> "ResourceRequest":
        """From a map already in common names (``cpu.pcore.percent``, ``onheap.memory.mb``, ``gpu.count`` ...)."""
        return cls(resources.get(CPU, 0.0), resources.get(ONHEAP, 0.0), resources.get(OFFHEAP, 0.0),
                   _generic_only(resources))

    @property
    def memory(self) -> float:
        """On-heap + off-heap MB (``getTotalMemoryMb``)."""
        return self.on_heap + self.off_heap

    def copy(self) -> "ResourceRequest":
        return ResourceRequest(self.cpu, self.on_heap, self.off_heap, self.generic)

    def add(self, other: "ResourceRequest") -> None:
        """In place: ``this += other``."""
        self.cpu += other.cpu
        self.on_heap += other.on_heap
        self.off_heap += other.off_heap
        for name, amount in other.generic.items():
            self.generic[name] = self.generic.get(name, 0.0) + amount

    def to_normalized_map(self) -> dict[str, float]:
        """Common names to amounts (``toNormalizedMap``)."""
        out = dict(self.generic)
        out[CPU] = self.cpu
        out[ONHEAP] = self.on_heap
        out[OFFHEAP] = self.off_heap
        return out

    def are_any_over_zero(self) -> bool:
        """Any resource (memory, CPU, generic) > 0."""
        return self.on_heap + self.off_heap > 0 or self.cpu > 0 or any(v > 0 for v in self.generic.values())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ResourceRequest):
            return NotImplemented
        return (self.cpu, self.on_heap, self.off_heap) == (other.cpu, other.on_heap, other.off_heap) and \
            _same_generic(self.generic, other.generic)

    def __repr__(self) -> str:
        return f"ResourceRequest(cpu={self.cpu}, on_heap={self.on_heap}, off_heap={self.off_heap}, " \
               f"generic={self.generic})"


def _same_generic(a: Mapping[str, float], b: Mapping[str, float]) -> bool:
    return all(a.get(k, 0.0) == b.get(k, 0.0) for k in set(a) | set(b))


class ResourceOffer:
    """What a supervisor, a host, a rack or a cluster offers or has left (``NormalizedResourceOffer``).

    ``cpu`` in percent of a core, ``memory`` total MB (on- and off-heap together), ``generic`` name → amount.
    """

    __slots__ = ("cpu", "memory", "generic")

    def __init__(self, cpu: float = 0.0, memory: float = 0.0, generic: Mapping[str, float] | None = None) -> None:
        self.cpu = float(cpu)
        self.memory = float(memory)
        self.generic: dict[str, float] = dict(generic) if generic else {}

    @classmethod
    def from_normalized_map(cls, resources: Mapping[str, float]) -> "ResourceOffer":
        """From a map in common names (``cpu.pcore.percent``, ``memory.mb``, generic names)."""
        return cls(resources.get(CPU, 0.0), resources.get(MEMORY, 0.0), _generic_only(resources))

    def copy(self) -> "ResourceOffer":
        return ResourceOffer(self.cpu, self.memory, self.generic)

    def to_normalized_map(self) -> dict[str, float]:
        out = dict(self.generic)
        out[CPU] = self.cpu
        out[MEMORY] = self.memory
        return out

    def to_dict(self) -> dict:
        """``{"cpu", "memory_mb", "generic": {name: amount}}`` (the explain-recorder shape)."""
        return {"cpu": self.cpu, "memory_mb": self.memory, "generic": dict(sorted(self.generic.items()))}

    # --- arithmetic
    def add(self, other: "ResourceOffer | ResourceRequest") -> None:
        """In place: ``this += other`` (a request adds its on+off heap to memory)."""
        self.cpu += other.cpu
        self.memory += other.memory
        for name, amount in other.generic.items():
            self.generic[name] = self.generic.get(name, 0.0) + amount

    def remove(self, other: "ResourceOffer | ResourceRequest") -> bool:
        """In place: ``this -= other``, each resource clamped at 0; True when any went negative."""
        negative = False
        self.cpu -= other.cpu
        if self.cpu < 0.0:
            negative = True
            self.cpu = 0.0
        for name, amount in other.generic.items():
            value = self.generic.get(name, 0.0) - amount
            if value < 0.0:
                negative = True
                value = 0.0
            self.generic[name] = value
        self.memory -= other.memory
        if self.memory < 0.0:
            negative = True
            self.memory = 0.0
        return negative

    def could_hold_ignoring_shared_memory(self, request: ResourceRequest) -> bool:
        """CPU, every generic resource and total memory at least the request's."""
        if self.cpu < request.cpu:
            return False
        return self.could_hold_ignoring_cpu(request)

    def could_hold_ignoring_cpu(self, request: ResourceRequest) -> bool:
        """Every generic resource and total memory at least the request's."""
        generic = self.generic
        for name, amount in request.generic.items():
            if generic.get(name, 0.0) < amount:
                return False
        for name, amount in generic.items():  # negative leftovers (never from Storm's own arithmetic)
            if amount < 0.0 and name not in request.generic:
                return False
        return self.memory >= request.memory

    def could_fit(self, min_worker_cpu: float, request: ResourceRequest) -> bool:
        """``couldFit``: with a worker CPU minimum (>= 0.001) the executor might join a worker that is below
        the minimum, so only ``max(request cpu - minimum, 0)`` must be free."""
        if min_worker_cpu < 0.001:
            return self.could_hold_ignoring_shared_memory(request)
        if max(request.cpu - min_worker_cpu, 0.0) > self.cpu:
            return False
        return self.could_hold_ignoring_cpu(request)

    def are_any_over_zero(self) -> bool:
        """Any resource (memory, CPU, generic) > 0."""
        return self.memory > 0 or self.cpu > 0 or any(v > 0 for v in self.generic.values())

    def any_non_cpu_over_zero(self) -> bool:
        """Any generic resource > 0 (Storm's ``anyNonCpuOverZero`` ignores memory)."""
        return any(v > 0 for v in self.generic.values())

    # --- percentages (``this`` is the total, ``used`` the part)
    def _check_subset(self, used: "ResourceOffer") -> None:
        if used.memory > self.memory or used.cpu > self.cpu:
            raise ValueError(f"The used resources must be a subset of the total resources. Used: {used}, "
                             f"Total: {self}")
        for name, amount in used.generic.items():
            if amount > self.generic.get(name, 0.0):
                raise ValueError(f"The used resources must be a subset of the total resources. Used: {used}, "
                                 f"Total: {self}, {name}")

    def average_percentage_used_by(self, used: "ResourceOffer") -> float:
        """``calculateAveragePercentageUsedBy``: 100 × mean over resources with a non-zero total of
        used/total (memory, CPU, each generic); 100 when every total is 0."""
        self._check_subset(used)
        total = 0.0
        skipped = 0
        if self.memory != 0.0:
            total += used.memory / self.memory
        else:
            skipped += 1
        if self.cpu != 0.0:
            total += used.cpu / self.cpu
        else:
            skipped += 1
        for name in sorted(self.generic):
            amount = self.generic[name]
            if amount == 0.0:
                skipped += 1
                continue
            total += used.generic.get(name, 0.0) / amount
        divisor = 2 + len(self.generic) - skipped
        return 100.0 if divisor == 0 else (total * 100.0) / divisor

    def min_percentage_used_by(self, used: "ResourceOffer") -> float:
        """``calculateMinPercentageUsedBy``: 100 × min(1, used/total over resources with a non-zero total).

        Storm returns 0 at once when ``used`` lacks a generic resource the total has (its array is shorter);
        here a missing name counts as 0, which gives the same result unless another resource is negative
        (rare-resource negation), where Storm's value is 0 and this one is that negative ratio.
        """
        self._check_subset(used)
        low = 1.0
        if self.memory != 0.0:
            low = min(low, used.memory / self.memory)
        if self.cpu != 0.0:
            low = min(low, used.cpu / self.cpu)
        for name in sorted(self.generic):
            amount = self.generic[name]
            if amount == 0.0:
                continue
            low = min(low, used.generic.get(name, 0.0) / amount)
        return low * 100.0

    def update_for_rare_resource_affinity(self, request: ResourceRequest) -> None:
        """In place: a generic resource the request does not ask for is negated (so nodes rich in it rank
        lower); one it asks for is made positive again. CPU and memory are untouched."""
        for name, amount in self.generic.items():
            wanted = request.generic.get(name, 0.0)
            if wanted == 0.0 and amount > 0.0:
                self.generic[name] = -amount
            elif wanted > 0.0 and amount < 0.0:
                self.generic[name] = -amount

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ResourceOffer):
            return NotImplemented
        return self.cpu == other.cpu and self.memory == other.memory and _same_generic(self.generic, other.generic)

    def __repr__(self) -> str:
        return f"ResourceOffer(cpu={self.cpu}, memory={self.memory}, generic={self.generic})"


def sum_offers(offers: Iterable[ResourceOffer]) -> ResourceOffer:
    """A new offer: the sum of ``offers`` in the given order."""
    out = ResourceOffer()
    for offer in offers:
        out.add(offer)
    return out
