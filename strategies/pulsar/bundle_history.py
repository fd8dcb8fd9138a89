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
    TimeAverageMessageData,
    default_bundle_stats,
)

__all__ = ["BundleHistory", "BundleHistorySnapshot"]

#: sample columns, in the order of ``TimeAverageMessageData``'s fields
_VALUES = ("msg_throughput_in", "msg_throughput_out", "msg_rate_in", "msg_rate_out")
_MAX_SAMPLES = np.array([[NUM_SHORT_SAMPLES], [NUM_LONG_SAMPLES]], dtype=np.int64)
_BLOCK = 8192  # slots folded at a time once every count is capped: 4 values × 8192 doubles, 256 KiB


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
        #: every slot's short- and long-term counts are at their caps (cleared when a slot is reset)
        self._capped = False
        # snapshots still in use that share this history's arrays: they take copies before the next change
        self._sharing: list[weakref.ref[BundleHistorySnapshot]] = []
        # per broker: (its lastStats mapping, slots of its bundles, samples 4 × n, topics), rebuilt when the
        # broker's report object changes or a slot of its bundles is freed
        self._samples: dict[str, tuple[Mapping[str, NamespaceBundleStats], np.ndarray, np.ndarray, np.ndarray]] = {}

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
        self._cur[:, slots] = samples  # with a bundle in two reports, the later one (unused: not aligned then)
        self._cur_topics[slots] = topics
        _, first = np.unique(slots, return_index=True)
        reported = len(first)
        if reported == len(slots):
            self._fold(slots, samples, topics)
            # with every known bundle reported once, the next calls can take the aligned path
            self._aligned = reported == len(self._slot)
        else:
            # A bundle in two reports gets both samples, in broker order: the first ones together, the rest after.
            self._aligned = False
            first.sort()
            self._fold(slots[first], samples[:, first], topics[first])
            rest = np.ones(len(slots), dtype=bool)
            rest[first] = False
            for i in np.flatnonzero(rest):
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
            self._cur[:, slots] = samples
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
        default = default_bundle_stats()
        self._num[:, slot] = 0
        self._capped = False
        self._val[:, :, slot] = [getattr(default, v) for v in _VALUES]
        self._topics[slot] = 0
        self._slot[bundle] = slot
        return slot

    def _fold(self, slots: np.ndarray, samples: np.ndarray, topics: np.ndarray) -> None:
        """One sample per slot (slots distinct): ``n = min(n + 1, max)``, ``v = ((n - 1) * v + sample) / n``."""
        if isinstance(slots, slice) and self._capped:
            self._fold_capped(slots, samples)
            self._topics[slots] = topics
            return
        # A slice (every slot at once) is folded in place; index arrays give copies, written back after.
        num, val = self._num[:, slots], self._val[:, :, slots]
        num += 1
        np.minimum(num, _MAX_SAMPLES, out=num)
        for row, cap in enumerate(_MAX_SAMPLES[:, 0].tolist()):
            v = val[row]
            # v * (n - 1) is (n - 1) * v to the bit; with every count at its cap n is one number
            if num[row].min(initial=cap) == cap:
                v *= cap - 1.0
                v += samples
                v /= float(cap)
            else:
                n = num[row].astype(float)
                v *= n - 1.0
                v += samples
                v /= n
        if not isinstance(slots, slice):
            self._num[:, slots] = num
            self._val[:, :, slots] = val
        elif slots == slice(0, len(self._names)):
            self._capped = bool((num == _MAX_SAMPLES).all())
        self._topics[slots] = topics

    def _fold_capped(self, slots: slice, samples: np.ndarray) -> None:
        """:meth:`_fold` of every slot while all counts are at their caps: the counts stay, each value takes
        ``v * (cap - 1.0) + sample``, divided by ``cap`` — the same operations, a block of slots at a time so that
        the three passes over a block stay in the cache (the arrays of 100,000 bundles do not fit)."""
        val = self._val
        start, stop = slots.start or 0, slots.stop
        for row, cap in enumerate(_MAX_SAMPLES[:, 0].tolist()):
            keep, whole = cap - 1.0, float(cap)
            for a in range(start, stop, _BLOCK):
                b = min(a + _BLOCK, stop)
                v = val[row, :, a:b]
                v *= keep
                v += samples[:, a - start:b - start]
                v /= whole

    def _drop(self, slots: np.ndarray, reported: int) -> None:
        """Forget the bundles that no report holds (``slots`` were reported, ``reported`` of them distinct)."""
        if len(self._slot) == reported:
            return  # every known bundle was reported
        seen = np.zeros(len(self._names), dtype=bool)
        seen[slots] = True
        self._forget([b for b, s in self._slot.items() if not seen[s]])

    def forget(self, bundle: str) -> None:
        """Drop ``bundle``'s history (the leader does when it splits the bundle)."""
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
        gone = np.array(freed, dtype=np.int64)
        for broker in [b for b, entry in self._samples.items() if np.isin(entry[1], gone).any()]:
            del self._samples[broker]
        self._aligned = False

    # -- reading ------------------------------------------------------------------------------------------------
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
