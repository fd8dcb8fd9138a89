"""The timer rebalances of a consumer in a steady group, counted without being run one by one.

With ``workload.trace_unchanged_rebalances = false`` a timer rebalance that changes nothing is counted, not
written (``rebalances_unchanged``); with ``workload.cid_lists = "lease"`` such a rebalance also sends nothing: it
takes the client-id list it holds of the broker it draws. Once a counted rebalance finds the list it allocated
from held of the brokers of its route, the ones that follow find the same until something they read changes, or
until one draws a broker whose held list is stale (after a change, until a run draws it and reads it for real):
:class:`SteadyRebalances` counts them at their times instead of running them, up to that one (found by drawing
ahead on a copy of the consumer's keyed stream, :data:`LOOK_AHEAD` runs at most). The RebalanceService process
waits for a change or that run, not for each ``waitInterval``.

Components: :class:`SteadyRebalances`, one per start of a consumer.

Why the counted runs are the ones the one-by-one service runs, at the same times, with the same effects:

* **Their times.** ``ServiceThread.waitForRunning`` waits ``waitInterval`` from the end of the previous run (a
  counted run takes no time: it sends nothing), and a run due during a stop-the-world pause runs when the pause
  ends. The next run is due at ``next_r`` (the same float sum as the process's timer: ``now + waitInterval``); a
  pause that begins before it and ends at or after it (a young GC, a pause fault, or one extended) hands the
  service back to the process, whose timer then fires inside the pause and waits for its end, as the one-by-one
  service does. Runs are counted up to a time whenever the count is read: a change, the consumer's stop or crash,
  the run's end.
* **Their effects.** A counted run draws its broker (``findBrokerAddrByTopic``, the consumer's keyed stream) and
  counts itself; nothing else. The draws are made at the counting, in order, so the stream is where the one-by-one
  runs would have left it for the next real rebalance (and for the next start of the consumer).
* **What ends it.** Whatever could make the next run do something hands the service back to the process, which
  then waits for that run at its due time: a wake-up (``NOTIFY_CONSUMER_IDS_CHANGED``: the process runs at once, as
  it would have), a new route (``route_updated``), a change of the group's client-id list heard from any broker
  (:meth:`.cid_lists.CidLists.heard`), and the time from which a held list would be refused by time alone (a
  stop of the consumer or a network condition coming within the channel's idle time:
  :meth:`.cid_lists.CidLists.steady_view`), and the run that draws a broker whose list is stale (its time is
  the counted runs' grid: a pause that would move it hands the service back first). The queues held change only
  by a rebalance or a stop.

Only the 4.9 service of a client-side CLUSTERING consumer that is not orderly, with held lists and the counts,
does this; otherwise every run is run.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Generator

import numpy as np

from .config import seconds

if TYPE_CHECKING:
    from .consumer import Consumer

__all__ = ["LOOK_AHEAD", "SteadyRebalances"]

#: runs looked ahead for the first that draws a broker whose list is stale (the lookahead's cost is bounded; the
#: run after them is run, and counting resumes after it)
LOOK_AHEAD = 64


def _copy(g: np.random.Generator) -> np.random.Generator:
    """A generator that draws what ``g`` would draw next, leaving ``g`` as it is."""
    bits = type(g.bit_generator)()
    bits.state = g.bit_generator.state
    return np.random.Generator(bits)


class SteadyRebalances:
    """RebalanceService's timer runs of one start of ``consumer`` while they cannot change anything."""

    @classmethod
    def of(cls, consumer: "Consumer") -> "SteadyRebalances | None":
        """The steady counting of one start of ``consumer``, if its service does it (see the module docs)."""
        p = consumer.params
        if (consumer._unchanged is None or not consumer.cid_lists.held or p["client_version"] == "5"
                or consumer.server_side or consumer.orderly or consumer.cfg["messageModel"] != "CLUSTERING"):
            return None
        return cls(consumer, seconds(consumer.cfg, "rocketmq.client.rebalance.waitInterval"))

    def __init__(self, consumer: "Consumer", wait_interval: float) -> None:
        self.c = consumer
        self.wait_interval = wait_interval
        #: counting: the next run is due at ``next_r`` and the process waits for a change (see the module docs)
        self.active = False
        self.next_r = math.inf
        self._horizon = math.inf
        # _due_before's last walk: (from next_r, up to t, k, last, r), continued by a later t from the same next_r
        # (every pause asks, and next_r stays put until the runs are counted: an hour's walk, not one a pause)
        self._walked: tuple[float, float, int, float, float] | None = None

    def enter(self, cids: tuple[str, ...]) -> None:
        """After a counted run (now) that allocated from ``cids``: count the next ones too, up to the first that
        would read a list (or until what hands the service back happens first)."""
        c = self.c
        if c._notified:
            return
        view = c.cid_lists.steady_view(c.route_brokers, cids)
        if view is None:
            return
        current, horizon = view
        interval = self.wait_interval
        next_r = c.now + interval
        brokers = c.route_brokers
        if len(current) < len(brokers):
            # Some brokers' lists are stale (after a change, until a run draws them): the runs ahead are counted
            # up to the first that draws one of those. Which one that is, the consumer's keyed stream says: look
            # ahead on a copy of it (the runs themselves draw from the stream as they are counted).
            ahead = _copy(c.rng("findBrokerAddrByTopic"))
            n = len(brokers)
            r = next_r
            for _ in range(LOOK_AHEAD):
                if r >= horizon:
                    break
                if brokers[int(ahead.integers(0, n))] not in current:
                    horizon = r  # that run reads: the process runs it
                    break
                r = r + interval
            else:
                horizon = min(horizon, r)
        if horizon <= next_r:
            return
        self.active, self.next_r, self._horizon = True, next_r, horizon

    def count_until(self, t: float) -> None:
        """Count the runs due before ``t``, each drawing its broker as the run would (in one call: ``k`` draws
        of ``integers(0, n)`` take the stream where ``integers(0, n, size=k)`` does,
        ``tests/agents/rocketmq/test_steady_rebalances.py``)."""
        if not self.active:
            return
        first = self.next_r
        k, last, self.next_r = self._due_before(t)
        if k:
            c = self.c
            c.rng("findBrokerAddrByTopic").integers(0, len(c.route_brokers), size=k)
            c._count_unchanged(first, last, k)

    def _due_before(self, t: float) -> tuple[int, float, float]:
        """The runs due before ``t`` from the next one: how many, the last one's time and the first due from ``t``
        on, on the float grid the process's timers make (each ``waitInterval`` after the previous run)."""
        interval = self.wait_interval
        start = self.next_r
        walked = self._walked
        if walked is not None and walked[0] == start and walked[1] <= t:
            k, last, r = walked[2:]
        else:
            r = last = start
            k = 0
        while r < t:
            last = r
            k += 1
            r = r + interval
        self._walked = (start, t, k, last, r)
        return k, last, r

    def changed(self) -> None:
        """Something the runs read changes now (called before it does: the runs due before now count with what
        they read then): the next run is run (the process waits for it)."""
        if self.active:
            self.count_until(self.c.now)
            self.c._rouse()

    def paused(self) -> None:
        """A pause began or was extended (now): the run due before its end runs after it, as the process's does.
        The runs before now are not counted here but by the next count, with the same draws and times: nothing
        else draws from their stream while the runs are counted (a young pause every 30 s would otherwise count,
        and draw, one run at a time)."""
        if self.active:
            until = self.c.gate.closed_until
            if until is None:
                return
            if self._due_before(self.c.now)[2] <= until:
                self.changed()

    def wait(self) -> Generator:
        """What the process waits in place of ``_wait_for_running`` while counting: a change, then the next run
        as the one-by-one service would run it; returns its trigger."""
        c = self.c
        env = c.env
        yield from c._woken_or_timer(at=max(env.now, self._horizon) if math.isfinite(self._horizon) else None)
        self.count_until(env.now)
        self.active = False
        if c._notified:
            # woken: the process would have been woken now in its wait, and runs once the gate is open
            yield from c.runnable()
            return c._trigger()
        # the process's own timer for the next run, set when the last run ended
        return (yield from c._wait_for_running(at=self.next_r))
