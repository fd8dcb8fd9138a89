"""RocketMQ's views over a trace, computed from the events alone: who holds each queue over time, the overlap
and orphan windows, messages consumed twice, and the lag. A test or an analysis reaches them as ``trace.views`` of
a RocketMQ run, or as ``RocketMQViews(trace)``.

Components: :class:`Holding` (one consumer's hold of one queue), :class:`RocketMQViews`.

The rules, which an analysis outside Python reproduces from the same events:

* a consumer holds a queue from its ``queue_taken`` to its ``queue_dropped`` of it, or to its own
  ``agent_stopped`` (a crash drops nothing), or to the end of the trace;
* a queue exists from its broker's ``queues_created`` to that broker's ``agent_stopped``;
* overlap: a queue held in PULL mode by two consumers or more (POP and BROADCAST holds are shared by design); orphan: an existing queue held by nobody (a POP
  assignment ``<topic>/<broker>/-1`` holds every queue of its broker);
* messages consumed twice: per queue, the lengths of all ``consume_progress`` ranges minus the length of their
  union;
* the view behind a rebalance: its ``cid_source`` broker's client-id list of the group at ``cid_version`` is the
  replay, in the broker's order, of that broker's ``consumer_registered`` (append ``cid``),
  ``consumer_unregistered`` and ``channel_expired`` (remove ``cid``) events of the group up to that version, then
  sorted by ``String.compareTo``; its route is the consumer's last ``route_updated`` at or before
  ``route_changed_t``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from clusteremu.emulator.trace.query import Event, Trace
from clusteremu.strategies.rocketmq import sort_cid_all

__all__ = ["Holding", "RocketMQViews"]


@dataclass(frozen=True)
class Holding:
    """``consumer`` held ``queue`` in ``mode`` over [start, end)."""

    queue: str
    consumer: str
    cid: str
    mode: str
    start: float
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


def _clip(a: float, b: float, within: tuple[float | None, float | None] | None) -> tuple[float, float]:
    if within is None:
        return a, b
    lo, hi = within
    return max(a, lo if lo is not None else a), min(b, hi if hi is not None else b)


def _union_length(ranges: Iterable[tuple[float, float]]) -> float:
    total, cur_a, cur_b = 0.0, None, None
    for a, b in sorted(ranges):
        if cur_b is None or a > cur_b:
            if cur_b is not None:
                total += cur_b - cur_a
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    if cur_b is not None:
        total += cur_b - cur_a
    return total


class RocketMQViews:
    """Queue holdings, overlap, orphans, duplicates and lag of a RocketMQ run."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self._holdings: list[Holding] | None = None
        self._queues: dict[str, tuple[float, float]] | None = None
        self._cid_changes: dict[tuple[str, str], list[tuple[int, str, bool]]] | None = None

    # -- holdings -------------------------------------------------------------------------------------------
    def holdings(self) -> list[Holding]:
        """Every hold of every queue, in start order."""
        if self._holdings is None:
            end = self.trace.end
            open_: dict[tuple[str, str], tuple[float, str, str]] = {}
            out: list[Holding] = []
            for e in self.trace.select(["queue_taken", "queue_dropped", "agent_stopped"]):
                if e.kind == "queue_taken":
                    open_[(e.queue, e.agent)] = (e.t, e.cid, e.mode)
                elif e.kind == "queue_dropped":
                    start = open_.pop((e.queue, e.agent), None)
                    if start is not None:
                        out.append(Holding(e.queue, e.agent, start[1], start[2], start[0], e.t))
                else:
                    for key in [k for k in open_ if k[1] == e.agent]:
                        start = open_.pop(key)
                        out.append(Holding(key[0], e.agent, start[1], start[2], start[0], e.t))
            for (queue, consumer), (t0, cid, mode) in open_.items():
                out.append(Holding(queue, consumer, cid, mode, t0, end))
            out.sort(key=lambda h: (h.start, h.queue, h.consumer))
            self._holdings = out
        return self._holdings

    def holders_at(self, queue: str, t: float) -> list[str]:
        """The consumers holding ``queue`` at ``t`` (a hold that starts at ``t`` counts, one that ends does not)."""
        return sorted(h.consumer for h in self.holdings() if h.queue == queue and h.start <= t < h.end)

    def allocation_at(self, t: float) -> dict[str, list[str]]:
        """:meth:`holders_at` of every queue at ``t`` in one pass over the holdings: each queue of :meth:`queues`
        (an empty list when nobody holds it) and any other a consumer holds then (a POP assignment's ``-1``)."""
        out: dict[str, list[str]] = {q: [] for q in self.queues()}
        for h in self.holdings():
            if h.start <= t < h.end:
                out.setdefault(h.queue, []).append(h.consumer)
        for holders in out.values():
            holders.sort()
        return out

    def queues(self) -> dict[str, tuple[float, float]]:
        """Every queue of the run and when it existed: its broker's start to its stop (or the trace's end)."""
        if self._queues is None:
            stopped = {e.agent: e.t for e in self.trace.select("agent_stopped")}
            out = {}
            for e in self.trace.select("queues_created"):
                end = stopped.get(e.agent, self.trace.end)
                if end < e.t:
                    end = self.trace.end
                for i in range(e.queues):
                    out[f"{e.subscription}/{e.broker}/{i}"] = (e.t, end)
            self._queues = out
        return self._queues

    # -- views -----------------------------------------------------------------------------------------------
    def cid_list(self, broker: str, group: str, version: int) -> list[str]:
        """``group``'s client ids on ``broker`` at list version ``version`` (registration order; version 0: none).
        KeyError if the broker never had that version."""
        if self._cid_changes is None:
            changes: dict[tuple[str, str], list[tuple[int, str, bool]]] = {}
            for e in self.trace.select(["consumer_registered", "consumer_unregistered", "channel_expired"]):
                changes.setdefault((e.agent, e.group), []).append((e.version, e.cid, e.kind == "consumer_registered"))
            self._cid_changes = changes
        steps = self._cid_changes.get((broker, group), [])
        if version and not any(v == version for v, _c, _a in steps):
            raise KeyError(f"{broker} has no version {version} of {group}'s client-id list")
        out: list[str] = []
        for v, cid, added in steps:
            if v > version:
                break
            if added:
                out.append(cid)
            else:
                out.remove(cid)
        return out

    def cid_all(self, result: Event) -> list[str]:
        """The sorted client-id list a client-side ``rebalance_result`` allocated from ([] without one)."""
        if result.cid_version < 0:
            return []
        return sort_cid_all(self.cid_list(result.cid_source, self.group_of(result), result.cid_version))

    def group_of(self, event: Event) -> str:
        """The consumer group of the consumer that wrote ``event`` (from its latest ``consumer_started``)."""
        started = self.trace.last("consumer_started", where=lambda e: e.agent == event.agent and e.t <= event.t)
        return started.group

    # -- overlap and orphans ---------------------------------------------------------------------------------
    def overlap_windows(self, mode: str = "PULL") -> list[tuple[str, float, float, list[str]]]:
        """(queue, start, end, holders) of every window in which two consumers or more held a queue in ``mode``."""
        by_queue: dict[str, list[Holding]] = {}
        for h in self.holdings():
            if h.mode == mode:
                by_queue.setdefault(h.queue, []).append(h)
        out = []
        for queue, hs in sorted(by_queue.items()):
            points = sorted({p for h in hs for p in (h.start, h.end)})
            for a, b in zip(points, points[1:]):
                holders = sorted(h.consumer for h in hs if h.start <= a and h.end >= b)
                if len(holders) >= 2 and b > a:
                    if out and out[-1][0] == queue and out[-1][2] == a and out[-1][3] == holders:
                        out[-1] = (queue, out[-1][1], b, holders)
                    else:
                        out.append((queue, a, b, holders))
        return out

    def overlap_seconds(self, within: tuple[float | None, float | None] | None = None, mode: str = "PULL") -> float:
        """Queue-seconds held by two consumers or more (summed over queues)."""
        total = 0.0
        for _q, a, b, _h in self.overlap_windows(mode):
            a, b = _clip(a, b, within)
            total += max(0.0, b - a)
        return total

    def orphan_windows(self) -> list[tuple[str, float, float]]:
        """(queue, start, end) of every window in which an existing queue was held by nobody."""
        covering: dict[str, list[tuple[float, float]]] = {}
        for h in self.holdings():
            topic, broker, qid = h.queue.rsplit("/", 2)
            if qid == "-1":
                for q in self.queues():
                    if q.startswith(f"{topic}/{broker}/"):
                        covering.setdefault(q, []).append((h.start, h.end))
            else:
                covering.setdefault(h.queue, []).append((h.start, h.end))
        out = []
        for queue, (q0, q1) in sorted(self.queues().items()):
            t = q0
            for a, b in sorted(covering.get(queue, [])):
                if a > t:
                    out.append((queue, t, min(a, q1)))
                t = max(t, b)
                if t >= q1:
                    break
            if t < q1:
                out.append((queue, t, q1))
        return [w for w in out if w[2] > w[1]]

    def orphan_seconds(self, within: tuple[float | None, float | None] | None = None) -> float:
        """Queue-seconds in which an existing queue was held by nobody (summed over queues)."""
        total = 0.0
        for _q, a, b in self.orphan_windows():
            a, b = _clip(a, b, within)
            total += max(0.0, b - a)
        return total

    # -- consumption --------------------------------------------------------------------------------------------
    def consumed_ranges(self) -> dict[str, list[tuple[float, float, str]]]:
        """Per queue, every consumed range (from, to, consumer) of ``consume_progress`` (BROADCASTING consumers
        each consume every message by design: their ranges are left out)."""
        out: dict[str, list[tuple[float, float, str]]] = {}
        for e in self.trace.select("consume_progress", where=lambda e: e.mode != "BROADCAST"):
            for a, b in e.ranges:
                out.setdefault(e.queue, []).append((a, b, e.agent))
        return out

    def duplicates(self) -> dict[str, float]:
        """Per queue, the messages consumed more than once (each extra consumption counts)."""
        out = {}
        for queue, ranges in sorted(self.consumed_ranges().items()):
            total = sum(b - a for a, b, _ in ranges)
            dup = total - _union_length((a, b) for a, b, _ in ranges)
            if dup > 1e-9:
                out[queue] = dup
        return out

    def duplicates_total(self) -> float:
        return sum(self.duplicates().values())

    def consumed_total(self) -> float:
        return sum(b - a for ranges in self.consumed_ranges().values() for a, b, _ in ranges)

    def max_lag(self, within: tuple[float | None, float | None] | None = None) -> float:
        """The largest ``queue_stats`` lag (messages behind the committed offset) of any queue."""
        lags = [e.lag for e in self.trace.select("queue_stats", within=within) if e.lag >= 0]
        return max(lags, default=0.0)
