"""A consumer's consumption in closed form: each held queue's consume offset as a piecewise-linear function of
virtual time, evaluated only when something reads it or changes it, instead of a pull and a consume step every
``consume_tick_s`` (``workload.consumption = "closed_form"``).

Components: :class:`ClosedFormConsumption` (the held queues' supply and the consumer's capacity; :meth:`settle`
brings every offset to a time; :meth:`~ClosedFormConsumption.snapshot` and :meth:`~ClosedFormConsumption.restore`
carry it to another agent, a broker computing the offsets a persist would carry: :mod:`.persists`) and
:class:`Held` (what it reads and writes of a held queue).

The fluid is the pull model's in the limit of a zero step: a queue's broker appends ``rate`` messages a second
from its start (its max offset is ``rate × (t - since)``); the consumer consumes up to its capacity, shared equally
among its queues with a backlog while the queues without one take only what arrives (the water-filling of
:func:`clusteremu.agents.rocketmq.rebalance.share`, continuously). Between two changes (a queue taken or dropped,
a capacity change, a stop-the-world pause starting or ending) every backlogged queue drains at the same rate, so
the breakpoints (a backlog reaching zero) come in the order of the backlogs. Nothing is consumed while the
consumer is paused; the backlogs grow meanwhile.

Nothing is computed per queue until a queue is read: a take, a drop or a breakpoint costs O(log n), not O(n),
which matters in a rebalance storm where a consumer holds a topic's 1,280 queues and takes or drops them one at
a time. A stop-the-world pause that begins with every queue caught up (the usual case: a young pause of a
consumer with spare capacity) costs O(1) too: its start reads no queue (a read during it gives the offsets at
its start), and its end puts the queues in one *group* that drains together (every queue has the same backlog,
``rate × pause``): one heap entry for all, until the group is caught up or something changes (a take, a drop,
a capacity change or another pause splits it into the queues' own entries). Two regimes, each with one
accumulator for all the queues: with less capacity than arrives (``capacity < n × rate``) every queue consumes
``capacity / n`` a second (``_W``: what each consumed since its anchor); with enough, a queue without backlog sits
at its max offset and the backlogged ones drain by the same amount (``_D``: drained since the regime began; a
queue's backlog empties when ``_D`` reaches its threshold, kept in a heap).
"""
from __future__ import annotations

import heapq
import math
from typing import Callable, Iterable, Protocol

__all__ = ["ClosedFormConsumption", "Held"]

#: backlogs below this many messages count as caught up (float rounding of top - offset)
EPS = 1e-9
#: the heap key of the group (never a queue key: those are ``topic/broker/id``)
_GROUP = ""


class Held(Protocol):
    """What the fluid needs of a held queue (the consumer's ``_ProcessQueue``)."""

    offset: float
    max: float
    ranges: list[list[float]]  # [from, to) consumed since the last report, merged when contiguous


class _Entry:
    """A held queue and its lazy state: ``anchor`` is ``_W`` at its last reading (fewer-capacity regime), or its
    backlog's threshold on ``_D`` in the enough-capacity regime (None: no backlog of its own: caught up, or the
    group's backlog while there is a group)."""

    __slots__ = ("pq", "since", "anchor")

    def __init__(self, pq: Held, since: float) -> None:
        self.pq = pq
        self.since = since
        self.anchor: float | None = None


class ClosedFormConsumption:
    """The consume offsets of one consumer's held queues as functions of time. Every queue of one consumer is
    fed at the same ``rate`` (the model's ``workload.rate_per_queue``); a queue with another rate is refused."""

    def __init__(self, capacity: float, now: float) -> None:
        self.capacity = float(capacity)
        self.t = float(now)  # the accumulators are advanced up to here
        self.paused = False
        self.rate: float | None = None
        self._queues: dict[str, _Entry] = {}
        self._short = False  # the regime: capacity < n × rate
        self._W = 0.0  # short: what every queue consumed since the regime began
        self._D = 0.0  # enough: what every backlogged queue drained since the regime began
        self._heap: list[tuple[float, str]] = []  # enough: (threshold on _D, queue), stale entries skipped
        self._backlogged = 0
        self._lazy_at: float | None = None  # the start of a pause that began with every queue caught up, unread
        self._group: float | None = None  # enough: the threshold on _D of the group (every queue), if any

    def __len__(self) -> int:
        return len(self._queues)

    def top(self, key: str, t: float) -> float:
        """The max offset of ``key`` at ``t``."""
        assert self.rate is not None
        return self.rate * (t - self._queues[key].since)

    # -- changes -----------------------------------------------------------------------------------------
    def add(self, key: str, pq: Held, rate: float, since: float, now: float) -> None:
        """Start consuming ``key`` from ``pq.offset`` at ``now``; its broker appends ``rate`` msg/s since
        ``since`` (a queue is taken from a broker that has started: ``since <= now``)."""
        if since > now:
            raise ValueError(f"queue {key}: its broker starts at {since}, after {now}")
        if self.rate is not None and self._queues and float(rate) != self.rate:
            raise ValueError(f"queue {key}: rate {rate} msg/s differs from the consumer's other queues' {self.rate}")
        self._advance(now)
        self._unlazy()  # the new queue is not caught up with the others
        self._split_group()
        if not self._queues:
            self.rate = float(rate)
        e = self._queues[key] = _Entry(pq, float(since))
        if self._regime_changed():
            self._rebuild(now, read=[x for k, x in self._queues.items() if k != key])
        elif not self.paused:
            self._enter(key, e, now)

    def remove(self, key: str, now: float) -> None:
        """Stop consuming ``key`` (its offset settled at ``now`` first)."""
        e = self._queues.get(key)
        if e is None:
            return
        self._advance(now)
        self._split_group()
        self._read(e, now)
        del self._queues[key]
        if not self.paused and not self._short and e.anchor is not None:
            self._backlogged -= 1  # its heap entry is stale now
        if self._regime_changed():
            self._rebuild(now, read=list(self._queues.values()))

    def set_capacity(self, capacity: float, now: float) -> None:
        self.settle(now)
        self.capacity = float(capacity)
        self._rebuild(now, read=[])

    def pause(self, now: float) -> None:
        """A stop-the-world pause begins: consumption up to ``now`` happened, none until :meth:`resume`."""
        self._advance(now)
        if self._queues and not self.paused and self.caught_up():
            self._lazy_at = now  # every queue sits at its max offset: read at ``now`` whenever read
        else:
            self._read_all(self._queues.values(), now)
        self.paused = True

    def resume(self, now: float) -> None:
        self.t = max(self.t, now)
        start, n = self._lazy_at, len(self._queues)
        if start is not None and n and not self.capacity < n * self.rate:
            # every queue caught up at the pause's start, none taken since: each has the same backlog now
            self._lazy_at = None
            self.paused = False
            self._start_regime()
            backlog = self.rate * (now - start)
            if backlog > EPS:
                self._heap.append((backlog, _GROUP))
                self._group = backlog
                self._backlogged = n
            return
        self._unlazy()
        self.paused = False
        self._rebuild(now, read=[])

    def settle(self, now: float) -> None:
        """Bring every held queue's offset (and the ranges it consumed) to ``now``."""
        self._advance(now)
        self._read_all(self._queues.values(), now)

    def reader(self, keys: Iterable[str]) -> Callable[[float], None]:
        """:meth:`settle` of ``keys`` only, as a function of the time, for a consumption whose queues do not change
        (a restored copy read again and again: the queues looked up once). Each queue's reading is its own: the
        others, read later, give what they would have."""
        entries = [self._queues[k] for k in keys]
        advance, read_all = self._advance, self._read_all

        def settle(now: float) -> None:
            advance(now)
            read_all(entries, now)

        return settle

    def caught_up(self) -> bool:
        """Whether every held queue sat at its max offset at the last reading or change (a pause's start
        included): capacity to spare and no backlog."""
        return not self._short and self._backlogged == 0

    def caught_up_again(self, paused_s: float) -> float:
        """After a pause of ``paused_s`` that began with every queue caught up and ended now (:meth:`resume`), when
        every queue is caught up again if nothing changes: each has ``rate × paused_s`` to drain, all at the same
        speed (``inf``: never, without spare capacity)."""
        n = len(self._queues)
        if n == 0 or paused_s <= 0:
            return self.t
        speed = self.capacity / n - self.rate
        if self._short or speed <= 0:
            return math.inf
        return self.t + self.rate * paused_s / speed

    # -- another agent's copy ------------------------------------------------------------------------------
    def snapshot(self, now: float) -> dict:
        """Everything the offsets' future depends on, as plain data: the offsets settled at ``now``, each queue's
        supply, the capacity and whether a pause holds (see :meth:`restore`)."""
        self.settle(now)
        return {"t": now, "capacity": self.capacity, "rate": self.rate, "paused": self.paused,
                "queues": [[k, e.since, e.pq.offset] for k, e in self._queues.items()]}

    @classmethod
    def restore(cls, state: dict, pqs: dict[str, Held]) -> "ClosedFormConsumption":
        """The consumption of a :meth:`snapshot`, its queues read and written through ``pqs`` (their offsets set
        to the snapshot's): from the snapshot's time on, it computes what the original does until its next change
        (up to float rounding)."""
        t = float(state["t"])
        f = cls(state["capacity"], t)
        f.rate = state["rate"]
        f.paused = bool(state["paused"])
        for key, since, offset in state["queues"]:
            pq = pqs[key]
            pq.offset = pq.max = float(offset)
            f._queues[key] = _Entry(pq, float(since))
        f._rebuild(t, read=[])
        return f

    # -- the closed form ---------------------------------------------------------------------------------
    def _regime_changed(self) -> bool:
        if self.paused:
            return False
        short = self.rate is not None and self.capacity < len(self._queues) * self.rate
        return short != self._short

    def _unlazy(self) -> None:
        """A pause taken without reading: read every queue now (at the pause's start), as a pause does."""
        if self._lazy_at is not None:
            self._read_all(self._queues.values(), self._lazy_at)
            self._lazy_at = None

    def _split_group(self) -> None:
        """The group's queues take their own heap entries (at its threshold): a change makes them differ."""
        theta = self._group
        if theta is None:
            return
        self._group = None
        heap = self._heap
        for key, e in self._queues.items():
            if e.anchor is None:
                e.anchor = theta
                heapq.heappush(heap, (theta, key))

    def _rebuild(self, now: float, read: list[_Entry]) -> None:
        """Read ``read`` at ``now`` (the others are read already), then start the regime of the queues now held."""
        self._read_all(read, now)
        if self.paused:
            return
        self._start_regime()
        for key, e in self._queues.items():
            self._enter(key, e, now)

    def _start_regime(self) -> None:
        """The regime of the queues now held, none of them in it yet: accumulators at zero, no backlog, no group."""
        self._short = self.rate is not None and self.capacity < len(self._queues) * self.rate
        self._W = self._D = 0.0
        self._heap = []
        self._backlogged = 0
        self._group = None

    def _enter(self, key: str, e: _Entry, now: float) -> None:
        """Put ``e`` (read at ``now``) in the current regime."""
        if self._short:
            e.anchor = self._W
            return
        backlog = self.rate * (now - e.since) - e.pq.offset
        if backlog > EPS:
            e.anchor = self._D + backlog
            heapq.heappush(self._heap, (e.anchor, key))
            self._backlogged += 1
        else:
            e.anchor = None

    def _advance(self, now: float) -> None:
        """Advance the regime's accumulator to ``now``, through the breakpoints on the way."""
        t = self.t
        if now <= t:
            return
        self.t = now
        n = len(self._queues)
        if self.paused or n == 0:
            return
        cap, lam = self.capacity, self.rate
        if self._short:
            self._W += cap / n * (now - t)
            return
        heap, queues = self._heap, self._queues
        while self._backlogged:
            speed = (cap - (n - self._backlogged) * lam) / self._backlogged - lam
            if speed <= 0:
                return
            while heap and (self._group != heap[0][0] if heap[0][1] == _GROUP else
                            heap[0][1] not in queues or queues[heap[0][1]].anchor != heap[0][0]):
                heapq.heappop(heap)  # a dropped queue's, one re-entered since, or a split group's
            threshold = heap[0][0]
            t_empty = t + (threshold - self._D) / speed
            if t_empty > now:
                self._D += speed * (now - t)
                return
            self._D, t = max(self._D, threshold), t_empty
            # every queue whose backlog is used up sits at its max offset from here on
            while heap and heap[0][0] <= self._D + EPS:
                theta, key = heapq.heappop(heap)
                if key == _GROUP:
                    if self._group == theta:  # the group is caught up: every queue (nothing changed since)
                        self._group = None
                        self._backlogged -= n
                    continue
                e = queues.get(key)
                if e is not None and e.anchor == theta:
                    e.anchor = None
                    self._backlogged -= 1

    def _read(self, e: _Entry, now: float) -> None:
        self._read_all((e,), now)

    def _read_all(self, entries: Iterable[_Entry], now: float) -> None:
        """Write each entry's consumption up to ``now`` (the accumulators advanced there) into its process queue:
        [its offset, the closed form's offset now) consumed (merged with its last range when contiguous), and the
        max offset it saw. One loop for all, as every persist reads every held queue."""
        if self.paused:
            if self._lazy_at is None:
                return
            now = self._lazy_at  # every queue sat at its max offset when the pause began
        rate, short, W, D = self.rate, self._short, self._W, self._D
        group = self._group
        for e in entries:
            pq = e.pq
            a = pq.offset
            top = rate * (now - e.since)
            if short:
                to = a + (W - e.anchor)
                e.anchor = W
            elif e.anchor is None:
                to = top if group is None else top - (group - D)
            else:
                to = top - (e.anchor - D)
            if to > a:
                r = pq.ranges
                if r and r[-1][1] == a:
                    r[-1][1] = to
                else:
                    r.append([a, to])
                pq.offset = to
            pq.max = top
