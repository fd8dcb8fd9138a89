"""The candidate ``HashSet`` that ``selectBroker`` edits in place, ordered as Java iterates it, fast.

:class:`CandidateSet` answers exactly what :class:`~clusteremu.base.java.JavaHashMapOrder` (``"hashmap"``,
default capacity) answers for the same puts, removes and clears, in fewer Python steps: a placement over
1,000 brokers puts, filters and lists the whole set several times, and replaying bucket lists key by key was
a large part of each unload at that size.

Why the order can be computed rather than replayed: a ``HashMap``'s resize splits every bucket into its
"lo" and "hi" halves keeping their relative order, and a put appends to its bucket; so the iteration order
is always the present keys sorted by their bucket in the current table, ties in the order they were (last)
put. The set keeps each key's hash spread and put sequence and sorts on demand; the table length follows
Java's rule (16 at the first put, doubled when the size passes three quarters of it, never shrunk — not
even by ``clear``).
"""
from __future__ import annotations

import functools
from typing import Iterable

from clusteremu.base.java import hash_spread, string_hash_code

__all__ = ["CandidateSet"]

_DEFAULT_CAPACITY = 16
_MAX_CAPACITY = 1 << 30


@functools.lru_cache(maxsize=1 << 16)
def _spread(key: str) -> int:
    # broker names recur on every placement: hash each once
    return hash_spread(string_hash_code(key))


class CandidateSet:
    """A Java ``HashSet<String>`` built with the default constructor, reduced to its iteration order."""

    __slots__ = ("_capacity", "_entries", "_seq", "_order")

    def __init__(self) -> None:
        self._capacity = 0  # no table before the first put, as in Java
        self._entries: dict[str, tuple[int, int]] = {}  # key -> (hash spread, put sequence)
        self._seq = 0
        self._order: list[str] | None = None

    @property
    def capacity(self) -> int:
        """The table length Java would have (0 before the first put)."""
        return self._capacity

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def put(self, key: str) -> None:
        """``set.add(key)``: a present key keeps its position."""
        entries = self._entries
        if key in entries:
            return
        if self._capacity == 0:
            self._capacity = _DEFAULT_CAPACITY
        entries[key] = (_spread(key), self._seq)
        self._seq += 1
        n = self._capacity
        if len(entries) > (n * 3) // 4 and n < _MAX_CAPACITY:
            self._capacity = n << 1
        self._order = None

    def put_all(self, keys: Iterable[str]) -> None:
        """``set.addAll(keys)``: :meth:`put` each in turn."""
        for key in keys:
            self.put(key)

    def remove(self, key: str) -> None:
        """``set.remove(key)``; the table never shrinks."""
        if self._entries.pop(key, None) is not None:
            self._order = None

    def retain(self, kept: Iterable[str]) -> None:
        """``set.retainAll(kept)``."""
        keep = set(kept)
        for key in [k for k in self._entries if k not in keep]:
            del self._entries[key]
        self._order = None

    def clear(self) -> None:
        """``set.clear()``: every key goes, the table length stays."""
        self._entries.clear()
        self._order = None

    def keys(self) -> list[str]:
        """The keys in Java's iteration order (a new list)."""
        if self._order is None:
            mask = self._capacity - 1
            entries = self._entries
            self._order = sorted(entries, key=lambda k: ((entries[k][0] & mask), entries[k][1]))
        return list(self._order)
