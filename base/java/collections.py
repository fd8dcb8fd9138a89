"""Java's iteration order for ``HashMap``/``HashSet`` and ``ConcurrentHashMap`` keyed by ``String``.

Contents: :class:`JavaHashMapOrder` (replays puts, removes and clears on one map and reports its order),
:func:`java_order` (the order of a fresh map after putting keys in a given order), :data:`MapKind`; for keys of
other types, whose ``hashCode`` the caller computes: :func:`hash_spread` (the bucket source of a hash code) and
:func:`table_size_for` (a requested capacity rounded up to the table length), :func:`hash_order` (the order of keys with
given hash codes in a table of a given length), :func:`capacity_after_puts`, :func:`capacity_putall_into_empty` and
:func:`capacity_copy_collection` (a table's length after the ways Java fills it), :func:`hash_set_order` (a default
``HashSet``'s order of items with given hash codes); :func:`java_list_sort` (``Collections.sort`` with a comparator,
calling it in the JDK's sequence for lists shorter than 32 — only a comparator with side effects, such as Storm's
``FIFOSchedulingPriorityStrategy``'s, can tell; longer lists are merge-sorted stably in another sequence).

Why this exists: Pulsar keeps brokers and bundles in hash maps (``LoadData`` uses ``ConcurrentHashMap``;
``getBundleDataForLoadShedding()`` collects into a ``HashMap``; ``LocalBrokerData.bundles`` is a
``HashSet``; Guava's ``ArrayListMultimap`` that shedders return is backed by a ``HashMap``). Every
strategy iterates those maps and breaks ties with stable sorts or strict comparisons, so *which* broker
wins a tie and in which order floating-point sums are accumulated are decided by Java's hash order. To
decide exactly as Pulsar does, the strategies here iterate in that order rather than in Python's
insertion order.

The order is a function of (keys, their insertion order, the table capacity), and the capacity depends on
how many keys the map has ever held. The simulation below replays insertions (and removals) exactly:

* ``String.hashCode()`` over UTF-16 code units with int32 overflow, spread as ``h ^ (h >>> 16)``, bucket
  ``spread & (capacity - 1)``; iteration goes bucket by bucket, each bucket in its list order.
* ``HashMap``: table allocated at the first put (default capacity 16, or ``tableSizeFor(initialCapacity)``),
  doubled when ``++size > 0.75 * capacity``; a resize splits each bucket into "lo"/"hi" lists keeping the
  relative order — so the order is the insertion order sorted stably by bucket in the final table, which is
  how :func:`java_order` computes it for large maps.
* ``ConcurrentHashMap``: capacity 16, doubled when ``size >= 0.75 * capacity`` after an insertion (note:
  one key earlier than ``HashMap``); a resize moves the longest tail run of nodes that go the same way
  as-is and *prepends* the earlier nodes one by one, which reverses their order (``transfer()``'s
  ``lastRun`` logic).

Not modelled (documented departures): tree bins and the ``treeifyBin``/``tryPresize`` growth that Java
triggers when 8 keys collide in one bucket of a small table (practically never with a handful of brokers
or bundles); concurrent-resize interleavings; keys that are not strings. A map built from a JSON snapshot
is taken to have been filled in the snapshot's order (the real insertion history is unknown).
"""
from __future__ import annotations

import functools
from typing import Callable, Iterable, Iterator, Literal, Sequence, TypeVar

import numpy as np

from .lang import string_hash_code

__all__ = ["JavaHashMapOrder", "MapKind", "capacity_after_puts", "capacity_copy_collection",
           "capacity_putall_into_empty", "hash_order", "hash_set_order", "hash_spread", "java_list_sort", "java_order",
           "table_size_for"]

T = TypeVar("T")

MapKind = Literal["hashmap", "concurrent"]

_DEFAULT_CAPACITY = 16
_MAX_CAPACITY = 1 << 30


def hash_spread(hash_code: int) -> int:
    """``ConcurrentHashMap.spread``/``HashMap.hash`` of a key whose ``hashCode()`` is ``hash_code``: ``h ^ (h >>> 16)``
    as a non-negative int; its bucket in a table of length ``n`` is ``hash_spread(h) & (n - 1)``."""
    h = hash_code & 0xFFFFFFFF
    return (h ^ (h >> 16)) & 0x7FFFFFFF  # the sign bit never reaches a bucket index below 2^31


def _spread(key: str) -> int:
    h = string_hash_code(key) & 0xFFFFFFFF  # hash_spread inlined: this runs once per key of every ordering
    return (h ^ (h >> 16)) & 0x7FFFFFFF


#: the spread of keys put one by one: names that recur (brokers on every placement) are hashed once
_cached_spread = functools.lru_cache(maxsize=1 << 16)(_spread)

#: the spreads of the keys of large orders (a leader orders the same 100,000 bundle names again whenever the
#: history's insertion order changes); cleared when it holds more than :data:`_SPREADS_MAX` names
_SPREADS: dict[str, int] = {}
_SPREADS_MAX = 1 << 20


def _hash_codes_unsigned(keys: list[str]) -> np.ndarray:
    """``String.hashCode()`` of each key mod 2**32 (uint64), all at once: keys of one length in UTF-16 units form
    a matrix whose columns go through ``h = 31 * h + c`` together (a leader's first order of 100,000 bundle names
    hashes them all; one by one in Python that took most of a second)."""
    encoded = [k.encode("utf-16-be", "surrogatepass") for k in keys]
    by_length: dict[int, list[int]] = {}
    for i, e in enumerate(encoded):
        by_length.setdefault(len(e) // 2, []).append(i)
    out = np.zeros(len(keys), dtype=np.uint64)
    for units, rows in by_length.items():
        if units == 0:
            continue  # "".hashCode() is 0
        matrix = np.frombuffer(b"".join([encoded[i] for i in rows]), dtype=">u2").reshape(len(rows), units)
        h = np.zeros(len(rows), dtype=np.uint64)
        for column in matrix.T.astype(np.uint64):
            h *= 31
            h += column
            h &= 0xFFFFFFFF
        out[rows] = h
    return out


def _spreads(keys: list[str]) -> np.ndarray:
    """``_spread`` of each key, as an int64 array (each distinct name hashed once per process)."""
    cache = _SPREADS
    if len(cache) > _SPREADS_MAX:
        cache.clear()
    get = cache.get
    out = [get(k) for k in keys]
    if None in out:
        missing = [i for i, v in enumerate(out) if v is None]
        h = _hash_codes_unsigned([keys[i] for i in missing])
        spread = ((h ^ (h >> 16)) & 0x7FFFFFFF).tolist()
        for i, v in zip(missing, spread):
            out[i] = cache[keys[i]] = v
    return np.array(out, dtype=np.int64)


@functools.lru_cache(maxsize=64)
def _filled(keys: tuple[str, ...], n: int, first_capacity: int) -> tuple[dict[str, int], int]:
    """An empty ``HashMap`` of table length ``n`` (0: none yet, ``first_capacity`` at the first put) after putting
    ``keys``: its entries (key -> spread, in put order; read-only, copied by the caller) and table length."""
    entries: dict[str, int] = {}
    for key in keys:
        if key in entries:
            continue
        if n == 0:
            n = first_capacity
        entries[key] = _cached_spread(key)
        if len(entries) > (n * 3) // 4 and n < _MAX_CAPACITY:
            n <<= 1
    return entries, n


@functools.lru_cache(maxsize=64)
def _bucket_order(keys: tuple[str, ...], mask: int) -> tuple[str, ...]:
    """``keys`` (in put order) in the iteration order of a ``HashMap`` whose bucket mask is ``mask``: by bucket,
    ties in put order."""
    buckets = [_cached_spread(k) & mask for k in keys]
    return tuple(keys[i] for i in sorted(range(len(keys)), key=buckets.__getitem__))


def table_size_for(cap: int) -> int:
    """``HashMap.tableSizeFor``: the smallest power of two >= ``cap`` (at least 1, at most 2^30)."""
    n = 1
    while n < cap:
        n <<= 1
    return max(1, min(n, _MAX_CAPACITY))


class JavaHashMapOrder:
    """Puts and removes on a Java hash table of string keys, and its iteration order.

    ``kind`` is ``"hashmap"`` (also ``HashSet`` and Guava's ``HashMap``-backed multimaps) or ``"concurrent"``
    (``ConcurrentHashMap``). ``initial_capacity`` is the constructor argument (``None`` = Java's default
    constructor).

    A ``HashMap``'s order is computed, not replayed: a put appends to its bucket and a resize splits every bucket
    into its lo and hi halves keeping their relative order, so the order is always the present keys sorted by their
    bucket in the current table, ties in the order they were (last) put. A ``ConcurrentHashMap``'s ``transfer()``
    reverses part of each bin, so its buckets are replayed.
    """

    def __init__(self, kind: MapKind = "hashmap", initial_capacity: int | None = None) -> None:
        if kind not in ("hashmap", "concurrent"):
            raise ValueError(f"unknown map kind {kind!r}")
        self.kind: MapKind = kind
        if initial_capacity is None:
            self._first_capacity = _DEFAULT_CAPACITY
        elif kind == "hashmap":
            self._first_capacity = table_size_for(max(initial_capacity, 1))
        else:
            # ConcurrentHashMap(int): tableSizeFor(initialCapacity + initialCapacity/2 + 1)
            self._first_capacity = table_size_for(initial_capacity + (initial_capacity >> 1) + 1)
        self._capacity = 0  # no table before the first put, as in Java
        self._entries: dict[str, int] = {}  # key -> hash spread, in put order
        self._seq = 0  # puts so far (a change since an order was computed)
        self._order: tuple[str, ...] | None = None  # the hashmap order, until the next change
        self._table: list[list[tuple[int, str]]] | None = None  # the concurrent map's bins

    @property
    def capacity(self) -> int:
        """Current table length (0 before the first put)."""
        return self._capacity

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def put(self, key: str) -> None:
        """``map.put(key, ..)``: a present key keeps its position; a new key is appended to its bucket."""
        entries = self._entries
        if key in entries:
            return
        if self._capacity == 0:
            self._capacity = self._first_capacity
            if self.kind == "concurrent":
                self._table = [[] for _ in range(self._capacity)]
        h = _cached_spread(key)
        entries[key] = h
        self._seq += 1
        self._order = None
        n = self._capacity
        if self.kind == "hashmap":
            if len(entries) > (n * 3) // 4 and n < _MAX_CAPACITY:
                self._capacity = n << 1
        else:
            assert self._table is not None
            self._table[h & (n - 1)].append((h, key))
            if len(entries) >= n - (n >> 2) and n < _MAX_CAPACITY:
                self._resize_concurrent()

    def put_all(self, keys: Iterable[str]) -> None:
        """``addAll``/``putAll`` into this map: :meth:`put` each in turn (a ``HashMap``'s puts inlined: a leader
        puts its 1,000 brokers into a fresh ``HashSet`` on every placement)."""
        if self.kind != "hashmap":
            for key in keys:
                self.put(key)
            return
        if not self._entries:
            # an empty map filled from a list: the same puts give the same map (a leader fills a fresh set with
            # the same 1,000 brokers several times per placement)
            filled, n = _filled(keys if type(keys) is tuple else tuple(keys), self._capacity, self._first_capacity)
            if filled:
                self._entries = dict(filled)
                self._capacity, self._order = n, None
                self._seq += len(filled)
            return
        entries = self._entries
        n, seq, size = self._capacity, self._seq, len(entries)
        for key in keys:
            if key in entries:
                continue
            if n == 0:
                n = self._first_capacity
            entries[key] = _cached_spread(key)
            seq += 1
            size += 1
            if size > (n * 3) // 4 and n < _MAX_CAPACITY:
                n <<= 1
        if seq != self._seq:
            self._capacity, self._seq, self._order = n, seq, None

    def remove(self, key: str) -> None:
        """``map.remove(key)``; tables never shrink (as in Java)."""
        entry = self._entries.pop(key, None)
        if entry is None:
            return
        self._order = None
        if self._table is not None:
            bucket = self._table[entry & (self._capacity - 1)]
            bucket[:] = [node for node in bucket if node[1] != key]

    def retain(self, kept: Iterable[str]) -> None:
        """``retainAll(kept)``: every key not in ``kept`` is removed."""
        keep = set(kept)
        for key in [k for k in self._entries if k not in keep]:
            self.remove(key)

    def clear(self) -> None:
        """``map.clear()``: drops every key but keeps the table length (Java never shrinks a table)."""
        self._entries.clear()
        self._order = None
        if self._table is not None:
            self._table = [[] for _ in range(self._capacity)]

    def keys(self) -> list[str]:
        """Keys in Java iteration order (a new list)."""
        if self._table is not None:
            return [key for bucket in self._table for _, key in bucket]
        if self._order is None:
            # by bucket, ties in put order: the entries are in put order already (a key put again after its
            # removal goes to the end), so a stable sort by bucket alone
            self._order = _bucket_order(tuple(self._entries), self._capacity - 1)
        return list(self._order)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def _resize_concurrent(self) -> None:
        assert self._table is not None
        n = self._capacity
        new: list[list[tuple[int, str]]] = [[] for _ in range(2 * n)]
        for i, bucket in enumerate(self._table):
            if bucket:
                new[i], new[i + n] = _transfer(bucket, n)
        self._table = new
        self._capacity = 2 * n


def java_order(
    keys: Iterable[str], kind: MapKind = "hashmap", initial_capacity: int | None = None
) -> list[str]:
    """Iteration order of a fresh Java map of ``kind`` after putting ``keys`` in the given order."""
    return list(_java_order(tuple(keys), kind, initial_capacity))


@functools.lru_cache(maxsize=32)
def _java_order(keys: tuple[str, ...], kind: MapKind, initial_capacity: int | None) -> tuple[str, ...]:
    # Memoised: the leader orders the same 100,000 bundle names on every shedding cycle and report.
    table = JavaHashMapOrder(kind, initial_capacity)
    if len(keys) > 64:
        return _hashmap_order(keys, table) if kind == "hashmap" else _concurrent_order(keys, table)
    for key in keys:
        table.put(key)
    return tuple(table.keys())


def _hashmap_order(keys: tuple[str, ...], empty: JavaHashMapOrder) -> tuple[str, ...]:
    """The order :meth:`JavaHashMapOrder.put` gives a ``HashMap``, computed at once: its resizes keep each
    bucket in insertion order, so the keys end up in insertion order sorted (stably) by their bucket in the
    final table."""
    unique = list(dict.fromkeys(keys))
    n = empty._first_capacity
    while len(unique) > (n * 3) // 4 and n < _MAX_CAPACITY:
        n <<= 1
    buckets = _spreads(unique) & (n - 1)
    return tuple(unique[i] for i in np.argsort(buckets, kind="stable").tolist())


def _concurrent_order(keys: tuple[str, ...], empty: JavaHashMapOrder) -> tuple[str, ...]:
    """The order :meth:`JavaHashMapOrder.put` gives a ``ConcurrentHashMap``, computed a table at a time.

    The puts between two resizes append to their bins' tails in put order, and a resize (at known sizes: three
    quarters of each table length) maps every bin to its lo and hi bins by ``transfer()``'s rule: in each, the
    nodes before the bin's last run in reverse order, then the last run if it goes there. So each stage is a
    stable sort of the table's nodes with numpy instead of a replay node by node (100,000 bundle names on
    every shedding cycle whose bundles changed). Same puts, same thresholds, same transfer."""
    unique = list(dict.fromkeys(keys))
    m = len(unique)
    spreads = _spreads(unique)
    order = np.zeros(0, dtype=np.int64)  # node indices, in the table's iteration order
    n = empty._first_capacity
    size = 0
    while size < m:
        threshold = n - (n >> 2)
        batch = m - size if n >= _MAX_CAPACITY else min(m, threshold) - size
        # the new nodes go to their bins' tails in put order: a stable sort by bin of table-then-new
        nodes = np.concatenate([order, np.arange(size, size + batch, dtype=np.int64)])
        order = nodes[np.argsort(spreads[nodes] & (n - 1), kind="stable")]
        size += batch
        if size >= threshold and n < _MAX_CAPACITY:
            order = _transfer_all(order, spreads[order], n)
            n <<= 1
    return tuple(unique[i] for i in order.tolist())


def _transfer_all(order: np.ndarray, spreads: np.ndarray, n: int) -> np.ndarray:
    """:func:`_transfer` applied to every bin of a table of length ``n`` whose nodes are ``order`` (grouped by bin,
    each bin in its list order; ``spreads`` are theirs): the nodes in the order of the table of length ``2n``."""
    count = len(order)
    if count == 0:
        return order
    at = np.arange(count, dtype=np.int64)
    bins = spreads & (n - 1)
    high = (spreads & n) != 0
    first = np.ones(count, dtype=bool)
    first[1:] = bins[1:] != bins[:-1]
    starts = np.flatnonzero(first)
    group = np.cumsum(first) - 1
    lasts = np.append(starts[1:], count) - 1
    # a node is in its bin's last run when no node after it in the bin goes the other way from the bin's last node
    differs = high != high[lasts][group]
    last_differing = np.maximum.reduceat(np.where(differs, at, -1), starts)
    in_last_run = at > last_differing[group]
    # within a new bin: the nodes before the last run reversed (prepended one by one), then the last run in order
    within = np.where(in_last_run, at + count, -at)
    return order[np.lexsort((within, spreads & (2 * n - 1)))]


def _transfer(bucket: list[tuple[int, str]], n: int) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """``ConcurrentHashMap.transfer()`` of one bin of a table of length ``n``: (lo, hi)."""
    # The tail run whose nodes all go the same way is reused in order ...
    run_bit = bucket[0][0] & n
    last_run = 0
    for k in range(1, len(bucket)):
        b = bucket[k][0] & n
        if b != run_bit:
            run_bit = b
            last_run = k
    lo: list[tuple[int, str]] = []
    hi: list[tuple[int, str]] = []
    (lo if run_bit == 0 else hi).extend(bucket[last_run:])
    # ... and the nodes before it are prepended one by one (so they come out reversed).
    for node in bucket[:last_run]:
        (hi if node[0] & n else lo).insert(0, node)
    return lo, hi


def capacity_after_puts(n: int, initial: int = _DEFAULT_CAPACITY) -> int:
    """Table length of a ``HashMap``/``HashSet`` created with ``initial`` capacity after ``n`` distinct puts
    (doubled while ``n > 0.75 * capacity``)."""
    cap = table_size_for(initial)
    while n > (cap * 3) // 4 and cap < _MAX_CAPACITY:
        cap <<= 1
    return cap


def capacity_putall_into_empty(n: int) -> int:
    """``new HashMap<>(0)`` then ``putAll`` of ``n`` entries: pre-sized to ``tableSizeFor((int)(n / 0.75f + 1))``
    (JDK 8-18; JDK 19+ uses ``ceil(n / 0.75)`` and differs when ``n / 0.75`` is a power of two)."""
    if n == 0:
        return 1
    return capacity_after_puts(n, table_size_for(int(n / 0.75 + 1.0)))


def capacity_copy_collection(n: int) -> int:
    """``new HashSet<>(c)`` with ``c.size() == n``: ``HashMap(max((int)(n / .75f) + 1, 16))`` (JDK 8-18)."""
    return capacity_after_puts(n, table_size_for(max(int(n / 0.75) + 1, 16)))


def hash_order(keys: Sequence[T], hashes: Sequence[int], capacity: int) -> list[T]:
    """Iteration order of a Java hash table of length ``capacity`` after inserting ``keys`` (whose ``hashCode()``
    values are ``hashes``) in the given order, with no removals: the insertion order sorted stably by bucket (a
    resize keeps each bucket's relative order). Tree bins (8+ keys in one bucket of a table >= 64) are not
    modelled."""
    if len(keys) != len(hashes):
        raise ValueError("one hash code per key")
    mask = capacity - 1
    idx = sorted(range(len(keys)), key=lambda i: hash_spread(hashes[i]) & mask)
    return [keys[i] for i in idx]


def hash_set_order(items: Sequence[T], hash_codes: Sequence[int]) -> list[T]:
    """Iteration order of ``new HashSet<>()`` after ``add``-ing ``items`` in order (``hash_codes[i]`` is
    ``items[i].hashCode()``, equal items already removed)."""
    if len(items) != len(hash_codes):
        raise ValueError("one hash code per item")
    return hash_order(items, hash_codes, capacity_after_puts(len(items)))


_MIN_MERGE = 32  # java.util.TimSort.MIN_MERGE: below it the whole list is one binary-insertion-sorted run


def java_list_sort(items: list[T], compare: Callable[[T, T], int]) -> None:
    """Sort ``items`` in place, stably, as ``Collections.sort(items, compare)`` does (see the module doc)."""
    n = len(items)
    if n < 2:
        return
    if n >= _MIN_MERGE:
        items[:] = sorted(items, key=functools.cmp_to_key(compare))
        return
    run = _count_run_and_make_ascending(items, compare)
    _binary_sort(items, run, compare)


def _count_run_and_make_ascending(a: list[T], compare: Callable[[T, T], int]) -> int:
    hi = len(a)
    run_hi = 1
    if run_hi == hi:
        return 1
    run_hi += 1
    if compare(a[1], a[0]) < 0:  # strictly descending run: reversed in place, as TimSort does
        while run_hi < hi and compare(a[run_hi], a[run_hi - 1]) < 0:
            run_hi += 1
        a[0:run_hi] = a[0:run_hi][::-1]
    else:
        while run_hi < hi and compare(a[run_hi], a[run_hi - 1]) >= 0:
            run_hi += 1
    return run_hi


def _binary_sort(a: list[T], start: int, compare: Callable[[T, T], int]) -> None:
    if start == 0:
        start = 1
    for i in range(start, len(a)):
        pivot = a[i]
        left, right = 0, i
        while left < right:
            mid = (left + right) >> 1
            if compare(pivot, a[mid]) < 0:
                right = mid
            else:
                left = mid + 1
        a[left + 1:i + 1] = a[left:i]
        a[left] = pivot
