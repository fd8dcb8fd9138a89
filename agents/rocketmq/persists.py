"""A consumer's offset persists (``persistAllConsumerOffset``, every ``persistConsumerOffsetInterval``): one
one-way ``UPDATE_CONSUMER_OFFSET`` per broker and run, or, with ``workload.persist_offsets = "lease"``, a kernel
keep-alive lease per broker whose keep-alives carry the offsets, which the broker computes from the consumer's
closed-form consumption (:mod:`.fluid`) as the consumer publishes it.

Components: :class:`OffsetPersists` (the client side, one per start of a consumer) and :class:`PersistedOffsets`
(the broker side: the offsets the keep-alives carry, and which of them and of the real commits is the latest).

Why it is exact. A periodic persist has one effect at the broker: the committed offset of each queue it names
becomes the offset the consumer had consumed to when it sent it (and it is traffic on the channel, for Netty's
idle handler). With ``workload.consumption = "closed_form"`` that offset is a function of time the broker can
compute too, from a description of the consumer's consumption (its held queues' offsets at one time, their
supply, its capacity, whether a pause holds: :meth:`~.fluid.ClosedFormConsumption.snapshot`) that changes only
when the consumption changes: a take, a drop, a capacity change and a stop-the-world pause's end (a pause's start
needs none: no persist is made while it holds; nor does its end when every queue was caught up as it began and
no persist falls before they are again, since from then on the description published before gives the same
offsets: :meth:`OffsetPersists.resumed`). The consumer publishes the description to each broker it holds
queues on at each such change (:func:`~clusteremu.emulator.lease.publish`, a kernel notice after the link's
minimum latency ``L``); the lease keeps the task's grid (``keep_grid``: the task is ``scheduleAtFixedRate``; a pause
covering a run stops the lease and the overdue run at its end is a real beat). The broker reads a queue's
committed offset as the latest of its real commits (a drop's own persist, a shutdown's, the running start's), by
arrival time, and of the keep-alives of the leases whose description held the queue, each counted ``L`` after it
was made (the kernel's :meth:`~clusteremu.emulator.lease.LeaseTable.read_at`, which is causal: every description
published up to a keep-alive has arrived by then).

What differs is milliseconds: a real persist arrives a latency draw after its run, at least ``L``; the lease's
content is seen from ``L`` after it. A read (a take's ``QUERY_CONSUMER_OFFSET``, the 60 s ``queue_stats``) within
that difference of a persist sees it one persist earlier with the one-by-one messages; the offsets are the
closed form's to float rounding. A broker's own stop-the-world pause holds real persists until its end; the
observer reading during such a pause counts the keep-alives made until ``L`` before its read.

What it needs, checked by the scenario: the closed form (``workload.consumption = "closed_form"``: no network
fault and no broker that stops answering, so no keep-alive is lost or delayed by a condition), committed offsets
seen in ``queue_stats`` only (``workload.trace_commits = false``: there is no commit event per keep-alive) and
fixed-rate timers (under ``fixed_delay`` a run delayed behind another task moves every later one).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Mapping

from clusteremu.emulator.lease import Lease, LeaseTable, grid_at_or_after, publish

from .config import seconds
from .fluid import ClosedFormConsumption
from .names import persist_lease_key

if TYPE_CHECKING:
    from clusteremu.emulator.executor import ScheduledExecutor, ScheduledTask

    from .consumer import Consumer

__all__ = ["OffsetPersists", "PersistedOffsets"]


class OffsetPersists:
    """The offset persists of one start of ``consumer`` (``lease``: as keep-alive leases, see the module docs)."""

    def __init__(self, consumer: "Consumer", lease: bool) -> None:
        self.c = consumer
        self.lease_mode = lease
        self.period = seconds(consumer.cfg, "persistConsumerOffsetInterval")
        #: the periodic task (lease mode: cancelled after its first run, which declares the leases)
        self.task: "ScheduledTask | None" = None
        #: lease mode: the task's grid origin and thread, and the run armed for a broker without a lease (its time)
        self._origin: float | None = None
        self._thread: "ScheduledExecutor | None" = None
        self._armed: float | None = None
        #: broker -> the persist lease with it
        self.leases: dict[str, Lease] = {}
        #: brokers told the last description (those the consumer held PULL queues on then)
        self._told: set[str] = set()
        #: how many times the held queues changed: a description names it, so that a broker indexes the queues of
        #: a description only when they differ from the last one's
        self._version = 0
        self._published = -math.inf  # when the last description was published

    def periodic(self) -> None:
        """The ``persistConsumerOffsetInterval`` task's run: the persists, or the leases where there are none.
        In lease mode only its first run is periodic: the leases make the later ones, and a broker that gets
        queues later is declared at the grid's next run (:meth:`changed` arms it on the same thread)."""
        c = self.c
        if not self.lease_mode:
            c._persist_all()
            return
        if self.task is not None:
            self._origin = self.task.start  # the task's grid, which an overdue run (after a pause) is off
            self._thread = self.task.executor
            self.task.cancel()
            self.task = None
        self._armed = None
        for b in sorted(self._brokers()):
            lease = self.leases.get(b)
            if lease is None or lease.state == "ended":
                # this run's persist to b declares the lease (a real beat); its keep-alives are the later runs'
                self.leases[b] = Lease(c, b, persist_lease_key(c.cid, b), self.period, keep_grid=True,
                                       origin=self._origin).start()

    def changed(self, queues: bool = True) -> None:
        """The consumption changed now (a take, a drop, a capacity change, a pause's end; ``queues``: the held
        queues may have changed): publish it to every broker the consumer holds queues on or did until now, end
        the leases of brokers it holds nothing on any more (their last keep-alive stays the last persist), and arm
        the task's next run if a broker has no lease."""
        if not self.lease_mode or not self.c.alive:
            return
        c = self.c
        if queues:
            self._version += 1
            held = self._brokers()
        else:
            held = self._told
        state = c.fluid.snapshot(c.now)
        state["group"], state["v"] = c.group, self._version
        self._published = c.now
        for b in sorted(held | self._told):
            publish(c, b, persist_lease_key(c.cid, b), state)
        for b in sorted(self._told - held):
            lease = self.leases.pop(b, None)
            if lease is not None:
                lease.end()
        self._told = held
        if self._origin is not None and self._armed is None and any(
                b not in self.leases or self.leases[b].state == "ended" for b in held):
            # the periodic task's next run on its grid (a pause delays it to the pause's end, as it would the task)
            self._armed = self._next_run(c.now)
            self._thread.schedule(self.periodic, max(0.0, self._armed - c.now), name="persistAllConsumerOffset")

    def resumed(self, paused_at: float, caught_up: bool) -> None:
        """A stop-the-world pause that began at ``paused_at`` ended now (``caught_up``: every queue sat at its max
        offset when it began). The pause's end is a change to publish, except when no keep-alive can tell: the
        queues were caught up, nothing was published since, and no persist is made from the pause's start until
        they are caught up again. From then on the description published before the pause gives exactly what
        the consumer has (every queue at its max offset, the same expression), so the brokers' reads are the
        same without it (a young pause of 20 ms costs a consumer with spare capacity some 50 ms of catching up,
        which a persist, every 5 s, falls in about once in a hundred pauses)."""
        if not self.lease_mode or not self.c.alive:
            return
        if caught_up and self._published < paused_at:
            fluid = self.c.fluid
            if not self._persists_between(paused_at, fluid.caught_up_again(self.c.now - paused_at)):
                return
        self.changed(queues=False)

    def _persists_between(self, a: float, b: float) -> bool:
        """Whether a persist may be made in [a, b] (a grid run of the task, or the declaration armed), with a
        millisecond's slack for the float arithmetic of the catching up."""
        b += 1e-3
        if self._origin is None or not math.isfinite(b):
            return True  # the task's first run (or a catch-up that never ends) may fall anywhere
        if self._armed is not None and self._armed <= b:
            return True
        return self._next_run(a) <= b

    def _next_run(self, t: float) -> float:
        """The periodic task's first grid run at or after ``t``."""
        return grid_at_or_after(self._origin, self.period, t)

    def _brokers(self) -> set[str]:
        return {pq.broker for pq in self.c.pqs.values() if pq.mode == "PULL"}


class _Queue:
    """A held queue of a broker's copy of a consumer's consumption (:class:`~.fluid.Held`). Nobody reads what the
    copy consumed; its ``ranges`` stay one range, merged at each reading (a reading starts where the last ended)."""

    __slots__ = ("offset", "max", "ranges")

    def __init__(self) -> None:
        self.offset = 0.0
        self.max = 0.0
        self.ranges: list[list[float]] = []


class _Copy:
    """A broker's copy of one description a consumer published, evaluated at increasing keep-alive times."""

    __slots__ = ("t", "settle", "ours", "at", "offsets")

    def __init__(self, t: float, state: dict, ours: Mapping[str, str]) -> None:
        self.t = t
        queues = {q[0]: _Queue() for q in state["queues"]}
        self.ours = [(k, q) for k, q in queues.items() if k in ours]  # this broker's queues
        # a broker reads its own queues of the consumer's dozen
        self.settle = ClosedFormConsumption.restore(state, queues).reader([k for k, _q in self.ours])
        self.at = -math.inf
        self.offsets: dict[str, float] = {}

    def offsets_at(self, s: float) -> dict[str, float]:
        if s != self.at:
            self.settle(s)
            self.offsets = {k: q.offset for k, q in self.ours}
            self.at = s
        return self.offsets


class PersistedOffsets:
    """The broker side (see the module docs): the offsets the consumers' persist leases carry.

    ``table`` is the broker's lease table, ``ours`` the broker's queues (queue -> group)."""

    def __init__(self, table: LeaseTable, ours: Mapping[str, str]) -> None:
        self.table = table
        self.ours = ours
        table.on_state = self._on_state
        #: queue -> the leases (client, key) whose descriptions held it, in arrival order
        self._holders: dict[str, dict[tuple[str, str], None]] = {}
        #: every such lease, and the version of the held queues its descriptions were indexed at
        self._indexed: dict[tuple[str, str], int] = {}
        self._copies: dict[tuple[str, str], _Copy] = {}

    def _on_state(self, client: str, key: str, state: Any) -> None:
        lid = (client, key)
        if self._indexed.get(lid) == state["v"]:
            return  # the same queues as its last description's
        self._indexed[lid] = state["v"]
        ours = self.ours
        for q in state["queues"]:
            if q[0] in ours:
                self._holders.setdefault(q[0], {})[lid] = None

    def latest(self, queue: str) -> tuple[float, float] | None:
        """The last keep-alive that carried ``queue``'s offset: (when it reached the broker, the offset); of two
        at the same time, the lease that sorts last."""
        holders = self._holders.get(queue)
        if not holders:
            return None
        best, best_lid = None, None
        for lid in list(holders):
            got = self._read(lid)
            if got is None:
                continue
            t, offsets = got
            offset = offsets.get(queue)
            if offset is None:
                if self._copies[lid].t == self.table.last_published(*lid):
                    del holders[lid]  # its last description, read from now on, does not hold the queue
                continue
            if best is None or t > best[0] or (t == best[0] and lid > best_lid):
                best, best_lid = (t, offset), lid
        return best

    def latest_all(self) -> dict[str, tuple[float, float]]:
        """:meth:`latest` of every queue some description held (one reading of each lease)."""
        out: dict[str, tuple[float, float]] = {}
        read = self._read
        for lid in sorted(self._indexed):  # ties go to the lease that sorts last, as in latest
            got = read(lid)
            if got is None:
                continue
            t, offsets = got
            for queue, offset in offsets.items():
                best = out.get(queue)
                if best is None or t >= best[0]:
                    out[queue] = (t, offset)
        return out

    def _read(self, lid: tuple[str, str]) -> tuple[float, dict[str, float]] | None:
        got = self.table.read_at(*lid)
        if got is None:
            return None
        s, t, state = got
        copy = self._copies.get(lid)
        if copy is None or copy.t != t or s < copy.at:
            copy = self._copies[lid] = _Copy(t, state, self.ours)
        return s + self.table.min_latency(lid[0]), copy.offsets_at(s)
