"""The leader's bundle history (``ModularLoadManagerImpl.updateBundleData``), kept across reports.

On every ``updateAll`` — i.e. whenever any broker's report is written — the leader walks the brokers
(``ConcurrentHashMap`` order) and, for every bundle in each broker's ``lastStats``, folds the stats into
that bundle's short- and long-term averages (:meth:`TimeAverageMessageData.update`); a bundle seen for
the first time starts from the default stats (50 msg/s, 50000 B/s, in and out) with 0 samples, so its
first sample replaces them. Bundles that no broker reports any more are dropped. A bundle reported by two
brokers gets two samples, as in Pulsar.

The averages live in numpy arrays, one slot per bundle: a cluster of 100,000 bundles folds a sample into
every one of them on each report of any broker, which a loop over ``BundleData`` objects cannot do often.
The arithmetic is :meth:`TimeAverageMessageData.update`'s, operation for operation, so the values are the
same to the bit. ``BundleData`` objects are made when read.

Each broker's ``timeAverageData`` (:meth:`BundleHistory.time_average_data`) is what ``updateBundleData`` sets
right after folding that broker's ``lastStats``: ``TimeAverageBrokerData.reset`` over its ``lastStats`` keys (a
``ConcurrentHashMap``'s order, the rule :mod:`clusteremu.strategies.pulsar.split.auto_split` uses too), against
the bundle data as the brokers folded so far left it. It is computed when first asked after a fold, for all
brokers at once.

Departure: Pulsar first tries to load a new bundle's history from the metadata store (written every
``loadBalancerResourceQuotaUpdateIntervalMinutes``); this history only has what it has seen itself.
"""
from __future__ import annotations

import itertools
import weakref
from typing import Any, Iterable, Iterator, Mapping, MutableMapping

import numpy as np

from clusteremu.base.java import java_order

from .load_data import (
    NUM_LONG_SAMPLES,
    NUM_SHORT_SAMPLES,
    BundleData,
    NamespaceBundleStats,
    TimeAverageBrokerData,
    TimeAverageMessageData,
    default_bundle_stats,
)

__all__ = ["BundleHistory", "BundleHistorySnapshot"]

#: sample columns, in the order of ``TimeAverageMessageData``'s fields
_VALUES = ("msg_throughput_in", "msg_throughput_out", "msg_rate_in", "msg_rate_out")
_MAX_SAMPLES = np.array([[NUM_SHORT_SAMPLES], [NUM_LONG_SAMPLES]], dtype=np.int64)
_CAPS = (NUM_SHORT_SAMPLES, NUM_LONG_SAMPLES)
_BLOCK = 8192  # slots folded at a time: 4 values × 8192 doubles, 256 KiB
_CHECK_EVERY = 16  # whole-row folds that look for settled slots: one in _CHECK_EVERY
_COMPACT_EVERY = 256  # folds between two looks at whether the slots still folded should be moved together


def _fold_values(val: np.ndarray, samples: np.ndarray, num: np.ndarray, cap: int,
                 active: np.ndarray | None = None, check: bool = True) -> np.ndarray | None:
    """``val = ((num - 1) * val + samples) / num`` in place (4 × k values, k counts already incremented), in
    :meth:`TimeAverageMessageData.update`'s operations (``v * (n - 1)`` is ``(n - 1) * v`` to the bit), a block of
    slots at a time so that the passes over a block stay in the cache (the arrays of 100,000 bundles do not fit).

    ``active``: which slots need it (a block with none is skipped: the others are settled). With ``check``,
    returns which slots are *settled*: at ``cap`` samples and left as they were, bit for bit (else None)."""
    stop = val.shape[1]
    settled = np.empty(stop, dtype=bool) if check else None
    for a in range(0, stop, _BLOCK):
        b = min(a + _BLOCK, stop)
        if active is not None and not active[a:b].any():
            if check:
                settled[a:b] = True
            continue
        n = num[a:b]
        v = val[:, a:b]
        watch = check and n.max(initial=0) == cap  # only a slot at its cap can settle
        before = v.copy() if watch else None
        if n.min(initial=cap) == cap:  # one count for the block: (cap - 1.0) * v is (n - 1.0) * v then
            v *= cap - 1.0
            v += samples[:, a:b]
            v /= float(cap)
        else:
            nf = n.astype(float)
            v *= nf - 1.0
            v += samples[:, a:b]
            v /= nf
        if watch:
            settled[a:b] = (v.view(np.int64) == before.view(np.int64)).all(axis=0) & (n == cap)
        elif check:
            settled[a:b] = False
    return settled


class BundleHistory:
    """Bundle name → :class:`BundleData`, updated from brokers' ``LocalBrokerData`` reports."""

    def __init__(self) -> None:
        self._slot: dict[str, int] = {}  # insertion order = the order bundles were first seen
        self._names: list[str | None] = []
        self._free: list[int] = []
        self._num = np.zeros((2, 0), dtype=np.int64)  # samples: [short, long] × slot
        self._val = np.zeros((2, 4, 0))  # [short, long] × _VALUES × slot
        self._topics = np.zeros(0, dtype=np.int64)
        self._cur = np.zeros((4, 0))  # each slot's latest sample, _VALUES × slot
        self._cur_topics = np.zeros(0, dtype=np.int64)
        #: every known bundle is in exactly one report, and _cur holds the samples of the reports given last
        self._aligned = False
        #: per row (short-, long-term) and slot, whether the next fold must compute it: False once a fold left the
        #: slot's values as they were at its capped count (the same sample gives the same values again, so the
        #: fold skips it) until its sample changes, it takes a second sample or it is reset
        self._active = np.zeros((2, 0), dtype=bool)
        self._folds = 0  # folds of every slot so far (see _CHECK_EVERY)
        self._compact_at = _COMPACT_EVERY  # the fold count after which _compact is next considered
        # snapshots still in use that share this history's arrays: they take copies before the next change
        self._sharing: list[weakref.ref[BundleHistorySnapshot]] = []
        # per broker: (its lastStats mapping, slots of its bundles, samples 4 × n, topics), rebuilt when the
        # broker's report object changes or a slot of its bundles is freed
        self._samples: dict[str, tuple[Mapping[str, NamespaceBundleStats], np.ndarray, np.ndarray, np.ndarray]] = {}
        self._averages = _BrokerAverages()

    # -- folding ----------------------------------------------------------------------------------------------
    def update_all(self, reports: Mapping[str, Mapping[str, Any]]) -> None:
        """Fold one sample per reported bundle from ``reports`` ({broker: LocalBrokerData JSON})."""
        self.update_all_stats({
            broker: {bundle: NamespaceBundleStats.from_json(raw, f'brokerData["{broker}"].localData.lastStats["{bundle}"]')
                     for bundle, raw in (report.get("lastStats") or {}).items()}
            for broker, report in reports.items()
        })

    def update_all_stats(self, last_stats: Mapping[str, Mapping[str, NamespaceBundleStats]],
                         changed: Iterable[str] | None = None) -> None:
        """:meth:`update_all` from reports already parsed: {broker: its ``lastStats``}. Pass the same mapping
        object again for a broker whose report did not change: its samples are then reused. ``changed``, when
        given, names every broker whose mapping may differ from the previous call (the leader knows which
        report arrived)."""
        self._unshare()
        self._averages.folded(last_stats)
        if self._folds >= self._compact_at:  # before any slot number is read below
            self._compact_at = self._folds + _COMPACT_EVERY
            self._compact(len(self._names))
        samples = self._samples
        if changed is not None:
            changed = [b for b in changed if b in last_stats]
        # every broker given that is not new was given before: none is gone when the counts add up
        if changed is None or len(samples) + sum(b not in samples for b in changed) != len(last_stats):
            for broker in [b for b in samples if b not in last_stats]:
                del samples[broker]
                self._aligned = False
        if self._aligned:
            if changed is None:
                changed = [b for b, stats in last_stats.items() if b not in samples or samples[b][0] is not stats]
            for broker in changed:
                self._broker_samples(broker, last_stats[broker])
            if self._aligned:
                # Every known bundle is in exactly one report and the per-slot samples are current: fold them all
                # at once, slot by slot (free slots are folded too; a slot is reset when it is taken again). The
                # brokers' order does not matter then: each slot gets one sample.
                n = len(self._names)
                self._fold(slice(0, n), self._cur[:, :n], self._cur_topics[:n])
                return
        order = java_order(last_stats, "concurrent")
        parts = [self._broker_samples(broker, last_stats[broker]) for broker in order]
        if not parts:
            self._drop(np.zeros(0, dtype=np.int64), 0)
            return
        slots = np.concatenate([p[1] for p in parts])
        samples = np.concatenate([p[2] for p in parts], axis=1)
        topics = np.concatenate([p[3] for p in parts])
        n = len(self._names)
        reported = int(np.count_nonzero(np.bincount(slots, minlength=n)))
        if reported == len(slots):
            self._set_samples(slots, samples)
            self._cur_topics[slots] = topics
            # One sample per slot: fold every slot at once, as the aligned path does (a known slot nobody reported
            # is folded with its stale sample and dropped below; a free slot is reset when it is taken again).
            self._fold(slice(0, n), self._cur[:, :n], self._cur_topics[:n])
            # with every known bundle reported once, the next calls can take the aligned path
            self._aligned = reported == len(self._slot)
        else:
            # A bundle in two reports gets both samples, in broker order: the first ones together, the rest after.
            self._aligned = False
            unique, first = np.unique(slots, return_index=True)
            first_of = first.copy()  # each distinct slot's first occurrence, in the order of ``unique``
            first.sort()
            self._set_samples(slots[first], samples[:, first])
            self._cur_topics[slots[first]] = topics[first]
            self._fold(slice(0, n), self._cur[:, :n], self._cur_topics[:n])
            rest = np.ones(len(slots), dtype=bool)
            rest[first] = False
            # The brokers reporting such a bundle before its last reporter had their averages summed between the
            # folds (updateBundleData sets each broker's right after its own): keep what each of them saw.
            ends = np.cumsum([len(p[1]) for p in parts])
            latest: dict[int, int] = {}  # slot -> its occurrence folded last
            again = np.flatnonzero(rest)
            for i, slot, first_i in zip(again.tolist(), slots[again].tolist(),
                                        first_of[np.searchsorted(unique, slots[again])].tolist()):
                before = latest.get(slot, first_i)
                k = int(np.searchsorted(ends, before, side="right"))
                self._averages.saw(order[k], before - (int(ends[k - 1]) if k else 0), self._val[:, :, slot].ravel())
                latest[slot] = i
                self._fold(slots[i:i + 1], samples[:, i:i + 1], topics[i:i + 1])
        self._drop(slots, reported)

    def _broker_samples(
        self, broker: str, stats: Mapping[str, NamespaceBundleStats]
    ) -> tuple[Mapping[str, NamespaceBundleStats], np.ndarray, np.ndarray, np.ndarray]:
        cached = self._samples.get(broker)
        if cached is not None and cached[0] is stats:
            return cached
        known = len(self._slot)
        slots = np.fromiter((self._slot_of(b) for b in stats), dtype=np.int64, count=len(stats))
        samples = np.array([[getattr(st, v) for v in _VALUES] for st in stats.values()], dtype=float).reshape(-1, 4).T
        topics = np.fromiter((st.topics for st in stats.values()), dtype=np.int64, count=len(stats))
        # (a new bundle takes a new slot; freeing a slot drops the cached entries that name it)
        before = cached[1] if cached is not None else slots[:0]
        if len(slots) == len(before) + len(self._slot) - known and np.isin(before, slots).all():
            # The broker still reports all it did, plus bundles nobody had (new slots): each known bundle is still
            # in exactly one report (a broker's first reports at start, a bundle it takes over).
            self._set_samples(slots, samples)
            self._cur_topics[slots] = topics
        else:
            self._aligned = False  # the bundles changed hands: the general path checks the layout again
        out = self._samples[broker] = (stats, slots, np.ascontiguousarray(samples), topics)
        return out

    def _slot_of(self, bundle: str) -> int:
        slot = self._slot.get(bundle)
        if slot is not None:
            return slot
        if self._free:
            slot = self._free.pop()
            self._names[slot] = bundle
        else:
            slot = len(self._names)
            self._names.append(bundle)
            if slot >= self._num.shape[1]:
                grow = max(64, slot)
                self._num = np.concatenate([self._num, np.zeros((2, grow), dtype=np.int64)], axis=1)
                self._val = np.concatenate([self._val, np.zeros((2, 4, grow))], axis=2)
                self._topics = np.concatenate([self._topics, np.zeros(grow, dtype=np.int64)])
                self._cur = np.concatenate([self._cur, np.zeros((4, grow))], axis=1)
                self._cur_topics = np.concatenate([self._cur_topics, np.zeros(grow, dtype=np.int64)])
                self._active = np.concatenate([self._active, np.ones((2, grow), dtype=bool)], axis=1)
        default = default_bundle_stats()
        self._num[:, slot] = 0
        self._active[:, slot] = True
        self._val[:, :, slot] = [getattr(default, v) for v in _VALUES]
        self._topics[slot] = 0
        self._slot[bundle] = slot
        return slot

    def _set_samples(self, slots: np.ndarray, samples: np.ndarray) -> None:
        """Make ``samples`` the current samples of ``slots`` (distinct); those that changed are folded again."""
        cur = self._cur
        changed = (cur[:, slots].view(np.int64) != samples.view(np.int64)).any(axis=0)
        cur[:, slots] = samples
        self._active[:, slots[changed]] = True

    def _fold(self, slots: np.ndarray | slice, samples: np.ndarray, topics: np.ndarray) -> None:
        """One sample per slot (slots distinct): ``n = min(n + 1, max)``, ``v = ((n - 1) * v + sample) / n``.

        ``slots`` is an index array, or the slice of every slot (``slice(0, len(self._names))``) with the current
        samples (``self._cur``)."""
        if isinstance(slots, slice):
            assert samples.base is self._cur or samples is self._cur, "a fold of every slot takes the current samples"
            self._fold_all(slots.stop)
            self._topics[slots] = topics
            return
        num, val = self._num[:, slots], self._val[:, :, slots]  # copies, written back after
        num += 1
        np.minimum(num, _MAX_SAMPLES, out=num)
        for row, cap in enumerate(_CAPS):
            _fold_values(val[row], samples, num[row], cap, check=False)
        self._num[:, slots] = num
        self._val[:, :, slots] = val
        self._topics[slots] = topics
        self._active[:, slots] = True  # a second sample: their current one may no longer leave them as they are

    def _fold_all(self, stop: int) -> None:
        """:meth:`_fold` of slots ``[0, stop)`` with their current samples, skipping the settled ones (a settled
        slot's fold would leave it as it is, bit for bit: the same operations on the same numbers). When few are
        left to fold they are gathered, folded and put back; else the whole row is folded block by block. Either
        way each slot's values see the same operations."""
        self._folds += 1
        samples = self._cur[:, :stop]
        for row, cap in enumerate(_CAPS):
            active = self._active[row, :stop]
            n_todo = int(np.count_nonzero(active))  # (no index array for the whole-row path below)
            if n_todo == 0:
                continue
            num = self._num[row, :stop]
            val = self._val[row, :, :stop]
            if n_todo * 8 <= stop:
                todo = np.flatnonzero(active)
                n = num[todo] + 1
                np.minimum(n, cap, out=n)
                num[todo] = n
                v = val[:, todo]  # a copy
                settled = _fold_values(v, samples[:, todo], n, cap)
                val[:, todo] = v
                active[todo[settled]] = False
            else:
                # Most slots to fold (a namespace whose rates changed moves its long-term averages for thousands
                # of folds): fold the whole row, checking which slots settled on one fold in _CHECK_EVERY only
                # (a settled slot is a fixed point whenever it is found).
                num += 1
                np.minimum(num, cap, out=num)
                check = self._folds % _CHECK_EVERY == 0
                settled = _fold_values(val, samples, num, cap, active, check)
                if check:
                    active[:] = ~settled

    def _compact(self, stop: int) -> None:
        """Move the slots still folded (in either row) after the settled ones, when they are spread over many
        more blocks than they fill: a namespace whose rates changed keeps a fifth of 100,000 long-term averages
        moving all hour, and whole blocks of settled slots are skipped only if those are together. A slot's number
        is this history's own business (names, snapshots and iteration keep the order bundles were first seen);
        every per-slot array, the names, the free list and the brokers' cached slots are renumbered alike."""
        busy = self._active[:, :stop].any(axis=0)
        moving = np.flatnonzero(busy)
        if len(moving) == 0 or len(moving) * 2 > stop:
            return
        fill = -(-len(moving) // _BLOCK) + 1
        if len(np.unique(moving // _BLOCK)) <= fill + fill // 2:
            return
        order = np.concatenate([np.flatnonzero(~busy), moving])  # new slot i is old slot order[i]
        renumber = np.empty(stop, dtype=np.int64)
        renumber[order] = np.arange(stop)
        self._num[:, :stop] = self._num[:, order]
        self._val[:, :, :stop] = self._val[:, :, order]
        self._topics[:stop] = self._topics[order]
        self._cur[:, :stop] = self._cur[:, order]
        self._cur_topics[:stop] = self._cur_topics[order]
        self._active[:, :stop] = self._active[:, order]
        names = self._names
        self._names[:stop] = [names[i] for i in order.tolist()]
        new = renumber.tolist()
        slot = self._slot
        for bundle in slot:  # values only: the dict keeps its order (the order bundles were first seen)
            slot[bundle] = new[slot[bundle]]
        self._free = [new[i] for i in self._free]
        self._samples = {b: (e[0], renumber[e[1]], e[2], e[3]) for b, e in self._samples.items()}

    def _drop(self, slots: np.ndarray, reported: int) -> None:
        """Forget the bundles that no report holds (``slots`` were reported, ``reported`` of them distinct)."""
        if len(self._slot) == reported:
            return  # every known bundle was reported
        unseen = np.ones(len(self._names), dtype=bool)
        unseen[slots] = False
        names = self._names  # a free slot has no name (the order of the freed slots does not matter)
        self._forget([b for b in (names[s] for s in np.flatnonzero(unseen).tolist()) if b is not None])

    def forget(self, bundle: str) -> None:
        """Drop ``bundle``'s history (the leader does when it splits the bundle)."""
        if bundle in self._slot:
            # the brokers' averages were set by the last fold and a bundle forgotten after it does not change them
            self.time_average_data()
        self._forget([bundle])

    def _forget(self, bundles: list[str]) -> None:
        bundles = [b for b in bundles if b in self._slot]
        if not bundles:
            return
        self._unshare()
        freed = [self._slot.pop(b) for b in bundles]
        for slot in freed:
            self._names[slot] = None
            self._free.append(slot)
        # a broker's cached samples that name a freed slot are made again (the slot may be taken by another bundle)
        gone = np.zeros(len(self._names), dtype=bool)
        gone[freed] = True
        for broker in [b for b, entry in self._samples.items() if gone[entry[1]].any()]:
            del self._samples[broker]
        self._averages.forgot()
        self._aligned = False

    # -- reading ------------------------------------------------------------------------------------------------
    def time_average_data(self) -> Mapping[str, TimeAverageBrokerData]:
        """Every broker of the last :meth:`update_all_stats`: its ``timeAverageData`` as ``updateBundleData`` set it.

        The objects are shared by every caller until the next fold (the strategies only read them)."""
        return self._averages.get(self._samples, self._val)

    def __contains__(self, bundle: object) -> bool:
        return bundle in self._slot

    def __len__(self) -> int:
        return len(self._slot)

    def get(self, bundle: str) -> BundleData | None:
        """``bundle``'s history as a new :class:`BundleData`, or None for a bundle without one."""
        slot = self._slot.get(bundle)
        return None if slot is None else _bundle_data(self._num, self._val, self._topics, slot)

    @property
    def bundles(self) -> dict[str, BundleData]:
        """Every bundle's history as new :class:`BundleData` objects, in the order bundles were first seen."""
        return dict(self.snapshot())

    def snapshot(self) -> "BundleHistorySnapshot":
        """Every bundle's history as it is now, as a mapping that makes each :class:`BundleData` when it is
        first read (a shedding cycle reads a few of 100,000 bundles); later folds do not change it.

        It shares this history's arrays until the history next changes, and takes copies then if it is still in
        use (each placement makes one; most are gone before the next report)."""
        snap = BundleHistorySnapshot(self._slot, self._num, self._val, self._topics)
        self._sharing.append(weakref.ref(snap))
        return snap

    def _unshare(self) -> None:
        for ref in self._sharing:
            snap = ref()
            if snap is not None:
                snap._own()
        self._sharing.clear()

    def bundle_json(self, bundle: str) -> dict[str, Any]:
        """``bundle``'s ``BundleData`` JSON; default stats (0 samples) for a bundle without history."""
        data = self.get(bundle)
        return (data if data is not None else BundleData.with_default_stats(default_bundle_stats())).to_json()

    def to_json(self) -> dict[str, Any]:
        """``{bundle: BundleData JSON}`` in the order bundles were first seen (``LoadData.bundleData``)."""
        return {bundle: data.to_json() for bundle, data in self.bundles.items()}


class BundleHistorySnapshot(MutableMapping[str, BundleData]):
    """Bundle name → :class:`BundleData` frozen at :meth:`BundleHistory.snapshot`, in the order bundles were
    first seen. A dict in all but cost: each value is made on first read and the same object is returned after,
    and entries set or deleted change only this snapshot (placement inserts defaults, as Pulsar does)."""

    def __init__(self, slots: dict[str, int], num: np.ndarray, val: np.ndarray, topics: np.ndarray) -> None:
        self._slot = slots
        self._num, self._val, self._topics = num, val, topics
        self._made: dict[str, BundleData] = {}
        self._extra: dict[str, BundleData] = {}  # set here and not in the history, in insertion order
        self._owned = False  # whether the slots and arrays are this snapshot's own copies

    def _own(self) -> None:
        if not self._owned:
            self._slot = dict(self._slot)
            self._num, self._val, self._topics = self._num.copy(), self._val.copy(), self._topics.copy()
            self._owned = True

    def __getitem__(self, bundle: str) -> BundleData:
        data = self._made.get(bundle)
        if data is not None:
            return data
        slot = self._slot.get(bundle)
        if slot is None:
            return self._extra[bundle]
        data = self._made[bundle] = _bundle_data(self._num, self._val, self._topics, slot)
        return data

    def __setitem__(self, bundle: str, data: BundleData) -> None:
        if bundle in self._slot:
            self._made[bundle] = data
        else:
            self._extra[bundle] = data

    def __delitem__(self, bundle: str) -> None:
        if bundle in self._slot:
            self._own()
            del self._slot[bundle]
            self._made.pop(bundle, None)
        else:
            del self._extra[bundle]

    def __contains__(self, bundle: object) -> bool:
        return bundle in self._slot or bundle in self._extra

    def __iter__(self) -> Iterator[str]:
        return itertools.chain(self._slot, self._extra)  # at C speed: the Java orders list all 100,000 keys

    def __len__(self) -> int:
        return len(self._slot) + len(self._extra)


def _bundle_data(num: np.ndarray, val: np.ndarray, topics: np.ndarray, slot: int) -> BundleData:
    n, v = num[:, slot].tolist(), val[:, :, slot].tolist()
    return BundleData(
        short_term_data=TimeAverageMessageData(NUM_SHORT_SAMPLES, n[0], *v[0]),
        long_term_data=TimeAverageMessageData(NUM_LONG_SAMPLES, n[1], *v[1]),
        topics=int(topics[slot]),
    )


#: the brokers' slot arrays it was made from, the brokers, the brokers' columns (longest first), and the
#: [position × column] slots (-1 past a broker's end) with, per position, how many columns have one
_Layout = tuple[list[np.ndarray], list[str], np.ndarray, tuple[np.ndarray, list[int]]]


class _BrokerAverages:
    """The brokers' ``TimeAverageBrokerData`` of the last fold, summed when first asked for after it.

    Each broker's sum runs over its ``lastStats`` keys in their ``ConcurrentHashMap`` order, in
    :meth:`TimeAverageBrokerData.reset`'s operations: the brokers' slots are laid out as a [position × broker]
    table (brokers longest first, so the brokers with a bundle at a position are a prefix) and each position is one
    vector add over brokers, so every broker's sum takes its bundles one at a time, in order, as the loop does."""

    def __init__(self) -> None:
        self._last_stats: dict[str, Mapping[str, NamespaceBundleStats]] = {}
        self._result: dict[str, TimeAverageBrokerData] | None = None
        #: broker -> {position in its lastStats' own order: the 8 values it saw} (a bundle folded again after it)
        self._seen: dict[str, dict[int, np.ndarray]] = {}
        #: per broker: its lastStats, its keys, and their positions taken in Java order (kept while the keys are)
        self._perm: dict[str, tuple[Mapping[str, NamespaceBundleStats], tuple[str, ...], np.ndarray]] = {}
        self._layout: _Layout | None = None

    def folded(self, last_stats: Mapping[str, Mapping[str, NamespaceBundleStats]]) -> None:
        self._last_stats = dict(last_stats)
        self._result = None
        self._seen = {}

    def saw(self, broker: str, position: int, values: np.ndarray) -> None:
        self._seen.setdefault(broker, {})[position] = values.copy()

    def forgot(self) -> None:
        """Slots were freed (and may be taken by other bundles): the layout is made again when next needed."""
        self._layout = None

    def get(self, samples: Mapping[str, tuple[Any, np.ndarray, Any, Any]], val: np.ndarray
            ) -> dict[str, TimeAverageBrokerData]:
        if self._result is None:
            self._result = self._compute(samples, val)
        return self._result

    @staticmethod
    def _java_positions(stats: Mapping[str, NamespaceBundleStats]) -> np.ndarray:
        """The positions of ``stats``' keys in its own order, taken in its ``ConcurrentHashMap`` order."""
        index = {bundle: i for i, bundle in enumerate(stats)}
        return np.array([index[b] for b in java_order(stats, "concurrent")], dtype=np.int64)

    def _java_ordered(self, broker: str, slots: np.ndarray) -> np.ndarray:
        """``slots`` (the broker's, in its lastStats' own order) in its lastStats' Java order."""
        stats = self._last_stats[broker]
        cached = self._perm.get(broker)
        if cached is None or cached[0] is not stats:
            keys = tuple(stats)  # a new report of the same bundles in the same order has the same Java order
            if cached is None or cached[1] != keys:
                cached = (stats, keys, self._java_positions(stats))
            else:
                cached = (stats, keys, cached[2])
            self._perm[broker] = cached
        return slots[cached[2]]

    def _compute(self, samples: Mapping[str, tuple[Any, np.ndarray, Any, Any]], val: np.ndarray
                 ) -> dict[str, TimeAverageBrokerData]:
        brokers = list(self._last_stats)
        for broker in [b for b in self._perm if b not in self._last_stats]:
            del self._perm[broker]
        rows = [samples[b][1] for b in brokers]  # each broker's slots, in its lastStats' own order
        layout = self._layout
        # A new report of the same bundles in the same order (the same slots, none freed since) keeps its column.
        if layout is None or layout[1] != brokers or not all(
                a is b or np.array_equal(a, b) for a, b in zip(layout[0], rows)):
            layout = self._layout = self._lay_out(brokers, rows)
        _, _, by_length, (table, counts) = layout
        # Every bundle a broker reports has data once it is folded (reset's default stats never apply here), and
        # a bundle forgotten later is forgotten after the sums are taken (see BundleHistory._forget).
        values = val.reshape(8, val.shape[2])  # [short, long] × _VALUES, as TimeAverageBrokerData's fields
        # 8 × position × column, in one gather (-1 past a broker's end: never added)
        gathered = np.take(values, table, axis=1)
        sums = np.zeros((8, len(brokers)))
        for position, count in enumerate(counts):
            sums[:, :count] += gathered[:, position, :count]
        out_rows = np.empty_like(sums)
        out_rows[:, by_length] = sums
        result = {b: TimeAverageBrokerData(*row) for b, row in zip(brokers, out_rows.T.tolist())}
        for broker, seen in self._seen.items():  # a bundle in two reports (a hand-over): this broker's sum again
            perm = self._java_positions(self._last_stats[broker])
            slots = samples[broker][1]
            total = [0.0] * 8
            for j in perm.tolist():
                v = seen[j].tolist() if j in seen else values[:, slots[j]].tolist()
                total = [t + x for t, x in zip(total, v)]
            result[broker] = TimeAverageBrokerData(*total)
        return result

    def _lay_out(self, brokers: list[str], rows: list[np.ndarray]) -> _Layout:
        """[position × broker] slots, brokers longest first, and per position how many brokers have one."""
        ordered = [self._java_ordered(b, row) for b, row in zip(brokers, rows)]
        lengths = np.array([len(r) for r in ordered], dtype=np.int64)
        by_length = np.argsort(-lengths, kind="stable")
        widest = int(lengths.max(initial=0))
        table = np.full((widest, len(brokers)), -1, dtype=np.int64)
        if widest:
            column = np.empty(len(brokers), dtype=np.int64)
            column[by_length] = np.arange(len(brokers))
            starts = np.cumsum(lengths) - lengths
            position = np.arange(int(lengths.sum())) - np.repeat(starts, lengths)
            table[position, np.repeat(column, lengths)] = np.concatenate(ordered)
        counts = [int(c) for c in np.count_nonzero(table >= 0, axis=1)]
        return rows, brokers, by_length, (table, counts)
