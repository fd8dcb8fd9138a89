"""The client-id list a consumer's rebalance reads (``RebalanceImpl.rebalanceByTopic`` ->
``findConsumerIdList``: ``GET_CONSUMER_LIST_BY_GROUP`` to one broker of the topic, drawn at random by
``findBrokerAddrByTopic`` at each rebalance): a real call at every rebalance, or, with ``workload.cid_lists =
"lease"``, the list the consumer last read from the drawn broker while the group's membership is steady.

Components: :class:`CidLists` (the consumer's side, one per start), :data:`CID_LIST_CHANGED` (the broker's
bookkeeping message to readers it did not notify), :func:`unanswered_problems` (the scenarios it cannot model).

What a real read returns: the drawn broker's list of the group when the request reaches it, a latency after
the rebalance began. What the consumer has of a broker ``b``: the list and its version from its last real read of
``b`` (a broker's version of a group's list grows by one at every registration, unregistration and expiry of the
group there), and the highest version of ``b``'s list it has heard of since: each change at ``b`` reaches every
consumer that has read the list from ``b`` with the new version, by the change's own
``NOTIFY_CONSUMER_IDS_CHANGED`` (which then carries the version) where ``b`` sends one to it, else by
:data:`CID_LIST_CHANGED` (a channel expired by the housekeeping scan, which notifies nobody; a reader that is no
channel of ``b``; ``notifyConsumerIdsChangedEnable = false``; a 5.x broker batching its notifications,
``realTimeNotifyConsumerChange = false``, whose later notification carries the version then current). So a read
list of ``b`` whose version is the highest heard of ``b`` is ``b``'s list as of at most one delivery ago. A
rebalance takes it instead of calling only when all of these hold, and calls otherwise (and the call's answer
becomes the list held of ``b``):

* the rebalance is a timer's (``waitInterval``, or 5.x's retry), not a notification's: a notified rebalance
  follows a change of the group and reads as the real client does;
* the consumer has heard of no change of the group's list, from any broker (a notification, a
  :data:`CID_LIST_CHANGED`, or a read answering another version than the one held), for twice ``waitInterval``:
  while the membership is changing every read is real, and so is the first timer rebalance after the last change
  (``waitInterval`` after the notified one: the one that settles the stale views);
* no network condition on the link with ``b`` (either way) touches the time from the list's read to
  ``serverChannelMaxIdleTimeSeconds`` from now (longer than ``mqClientApiTimeout``): a partition, a drop or a delay
  may have lost or delayed a change's message, and makes the real read fail or wait; and no fault of the scenario
  stops the consumer (a crash, a pause, a GC storm) within that idle time from now. A read is traffic on the
  consumer's channel, which Netty's idle handler closes after that long without any: a read that could be the
  channel's last traffic before the consumer goes silent stays real, so the idle expiry after a crash, a long
  pause or a partition is the one-by-one model's (the consumer's own young GC pauses, milliseconds, are far
  shorter than the idle time);
* ``b`` answers throughout: a scenario with a fault that can stop a broker answering (``broker_loss``, a crash, a
  pause or a GC storm of a broker) is refused (:func:`unanswered_problems`), as the consumer could not know.

Exactness: a rebalance that takes the held list of ``b`` uses ``b``'s list as the real read would unless ``b``'s
list changed within a delivery (the change's message, milliseconds) before the rebalance or within the request's
latency after it: then it uses the list before that change, which is what the real read returns with a
latency draw a few milliseconds shorter. That change's notification (or :data:`CID_LIST_CHANGED`) arrives
milliseconds later and the rebalance it triggers is a real read, so the allocation it settles on is the same.
Timing: a rebalance that takes the held list ends without the read's round trip, so the ``waitInterval`` that
follows starts that much earlier (a round trip, milliseconds, per rebalance; a broker's GC pause that the
request would have waited out, tens of milliseconds, is not waited either). The broker drawn is the same keyed
draw at each rebalance with or without the lists held (``findBrokerAddrByTopic`` is drawn before the read), and
the ``rebalance_result`` names the same list by the same broker and version.
"""
from __future__ import annotations

import fnmatch
import math
from typing import TYPE_CHECKING, Any, Generator, Iterable

from .config import seconds

if TYPE_CHECKING:
    from .consumer import Consumer

__all__ = ["CID_LIST_CHANGED", "CidLists", "UNANSWERED", "stop_times", "unanswered_problems"]

#: broker -> a consumer that read a group's list from it: that list's version changed (the bookkeeping of a list
#: held by the consumer; sent where no ``NOTIFY_CONSUMER_IDS_CHANGED`` carries the version to it)
CID_LIST_CHANGED = "cid_list_changed"
#: fault kinds that can stop a broker answering a read, which a held list cannot see
UNANSWERED = ("broker_loss", "crash", "pause", "gc_storm")
#: triggers of a rebalance that may take a held list (RebalanceService's own timers)
_TIMER_TRIGGERS = ("timer", "retry")


def stop_times(faults: list[dict[str, Any]], agent: str) -> list[float]:
    """When the scenario's faults stop ``agent`` talking (a crash, a pause, a GC storm), in time order."""
    return sorted(float(f["at"]) for f in faults
                  if f["kind"] in UNANSWERED and any(fnmatch.fnmatchcase(agent, g) for g in f["agents"]))


def unanswered_problems(faults: list[dict[str, Any]], brokers: Iterable[str], key: str) -> list[tuple[str, str]]:
    """The faults of a scenario that can stop one of ``brokers`` answering (``key`` names the setting refused)."""
    names = list(brokers)
    return [(f"faults[{i}].agents", f"a {f['kind']} fault of a broker stops its answers, which a held client-id "
                                    f"list cannot see: use {key} = \"messages\"")
            for i, f in enumerate(faults)
            if f["kind"] in UNANSWERED and any(fnmatch.fnmatchcase(b, g) for b in names for g in f["agents"])]


class CidLists:
    """The client-id lists one start of ``consumer`` has read (``held``: take them while steady, see the module
    docs; otherwise every rebalance calls)."""

    def __init__(self, consumer: "Consumer", held: bool) -> None:
        self.c = consumer
        self.held = held
        # a change's notified rebalance is followed by a timer one waitInterval later: that one reads too
        self.quiet_s = 2.0 * seconds(consumer.cfg, "rocketmq.client.rebalance.waitInterval")
        self.timeout_s = seconds(consumer.cfg, "mqClientApiTimeout")
        # a read is traffic on the client's channel, which Netty's idle handler closes after this long without any
        self.idle_s = float(consumer.cfg["serverChannelMaxIdleTimeSeconds"])
        self.stops = [float(t) for t in consumer.params["stops"]]
        #: broker -> (its list, its version, when it was read)
        self.lists: dict[str, tuple[list[str], int, float]] = {}
        #: broker -> the highest version of its list heard of
        self.known: dict[str, int] = {}
        self.last_change = -math.inf  # when the consumer last heard of a change of the group's list
        self._windows: dict[str, list[tuple[float, float]]] = {}

    def read(self, broker: str, trigger: str) -> Generator:
        """The list of ``broker`` for a rebalance with ``trigger``: ``{"cids", "version"}``, None when the call
        failed."""
        c = self.c
        held = self._held(broker, trigger)
        if held is not None:
            return {"cids": held[0], "version": held[1]}
        reply = yield from c.call(broker, "GET_CONSUMER_LIST_BY_GROUP", {"group": c.group}, timeout=self.timeout_s)
        if reply is not None and self.held:
            self._store(broker, list(reply["cids"]), int(reply["version"]), c.now)
        return reply

    def seed(self, brokers: Iterable[str], cids: list[str], version: int) -> None:
        """A running start: the list every broker of the route holds, as the consumer's last reads found it."""
        if self.held:
            for b in brokers:
                self.lists[b] = (list(cids), version, self.c.now)
                self.known[b] = version

    def heard(self, broker: str, version: int | None) -> None:
        """``broker``'s list of the group is now ``version`` (a notification or a :data:`CID_LIST_CHANGED`)."""
        if version is None or not self.held:
            return
        self.known[broker] = max(self.known.get(broker, 0), int(version))
        self.last_change = self.c.now

    def steady_view(self, brokers: Iterable[str], cids: Iterable[str]) -> tuple[set[str], float] | None:
        """What a timer rebalance would take now: the brokers of ``brokers`` whose held list it would take and is
        ``cids`` (the others it would read, or find another list), and the earliest time from which it would take
        none of them by time alone (a stop of the consumer, or a network condition on one of those links, coming
        within the idle time: ``math.inf`` if none). None while it takes no held list at all (a change heard of
        within twice ``waitInterval``, or lists not held). Until then only a change heard of (:meth:`heard`)
        changes the answer."""
        if not self.held or self.c.now - self.last_change < self.quiet_s:
            return None
        want = set(cids)
        current: set[str] = set()
        horizon = math.inf
        window = max(self.timeout_s, self.idle_s)
        for b in brokers:
            held = self._held(b, "timer")
            if held is None or set(held[0]) != want:
                continue
            current.add(b)
            # _held refuses a read at r when a stop lies in [r, r + window], or a condition on the link that
            # began before r + window ends after the list was read: neither holds now, so both lie ahead
            for s, e in self._conditions(b):
                if e > held[2]:
                    horizon = min(horizon, s - window)
        now = self.c.now
        for t in self.stops:
            if t >= now:
                horizon = min(horizon, t - window)
        return current, horizon

    # -- internals ------------------------------------------------------------------------------------------
    def _store(self, broker: str, cids: list[str], version: int, now: float) -> None:
        held = self.lists.get(broker)
        if held is not None and held[1] != version:
            self.last_change = now
        self.lists[broker] = (cids, version, now)
        self.known[broker] = max(self.known.get(broker, 0), version)

    def _held(self, broker: str, trigger: str) -> tuple[list[str], int, float] | None:
        if not self.held or trigger not in _TIMER_TRIGGERS:
            return None
        now = self.c.now
        if now - self.last_change < self.quiet_s:
            return None
        held = self.lists.get(broker)
        if held is None or held[1] < self.known.get(broker, 0):
            return None
        # the read would be the channel's last traffic before a stop or a condition within the idle time: real
        end = now + max(self.timeout_s, self.idle_s)
        if any(now <= t <= end for t in self.stops):
            return None
        if any(s < end and e > held[2] for s, e in self._conditions(broker)):
            return None
        return held

    def _conditions(self, broker: str) -> list[tuple[float, float]]:
        w = self._windows.get(broker)
        if w is None:
            net = self.c.network
            w = self._windows[broker] = [] if net is None else \
                net.condition_windows(self.c.name, broker) + net.condition_windows(broker, self.c.name)
        return w
