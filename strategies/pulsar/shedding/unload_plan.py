"""The shedders' result: Guava's ``ArrayListMultimap<String broker, String bundle>``, in Java order.

``ModularLoadManagerImpl.doLoadShedding`` walks the result with ``asMap().forEach``: brokers in the
iteration order of the ``HashMap`` backing the multimap (created for 12 expected keys, i.e. capacity 16),
each broker's bundles in insertion order. :meth:`UnloadPlan.entries` returns exactly that sequence.

Several Pulsar shedders keep the multimap in a field and ``clear()`` it on each call; a cleared
``HashMap`` keeps its table length, so the same :class:`UnloadPlan` object should be reused by such a
shedder to keep iterating as Java does after a cycle that named many brokers.
"""
from __future__ import annotations

from clusteremu.base.java import JavaHashMapOrder

__all__ = ["UnloadPlan"]

# Maps.newHashMapWithExpectedSize(12) -> new HashMap<>(ceil(12 / 0.75)) -> table of 16.
_GUAVA_EXPECTED_KEYS_CAPACITY = 16


class UnloadPlan:
    """Broker → bundles to unload, iterated like Pulsar's ``ArrayListMultimap``."""

    def __init__(self) -> None:
        self._keys = JavaHashMapOrder("hashmap", _GUAVA_EXPECTED_KEYS_CAPACITY)
        self._values: dict[str, list[str]] = {}
        self._size = 0

    def put(self, broker: str, bundle: str) -> None:
        """``put(broker, bundle)``: append ``bundle`` to ``broker``'s list (duplicates allowed, as in Guava)."""
        self._keys.put(broker)
        self._values.setdefault(broker, []).append(bundle)
        self._size += 1

    def clear(self) -> None:
        """``clear()``; the backing table keeps its length."""
        self._keys.clear()
        self._values.clear()
        self._size = 0

    def size(self) -> int:
        """Number of (broker, bundle) entries."""
        return self._size

    def is_empty(self) -> bool:
        """Whether no entry was put since the last :meth:`clear`."""
        return self._size == 0

    def entries(self) -> list[tuple[str, str]]:
        """All entries in Java's ``asMap().forEach`` order."""
        return [(broker, bundle) for broker in self._keys.keys() for bundle in self._values[broker]]
