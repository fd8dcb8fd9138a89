"""A consumer's route poll (``MQClientInstance.updateTopicRouteInfoFromNameServer``, every
``pollNameServerInterval``): one ``GET_ROUTEINFO_BY_TOPIC`` call per period, or, with ``workload.route_poll =
"lease"``, a kernel :data:`~clusteremu.emulator.lease.POLL` lease with the name server.

Components: :class:`RoutePoll`, one per start of a consumer; :func:`changed_topics` (which topics' routes a
name-server change touched).

Why a lease is exact here: the reply of a periodic route read has an effect on the client only when the route
differs from the cached one (``topicRouteDataChanged``; the client keeps the cached route when the read fails).
The lease's declaration is the task's first run (a real read, answered with the route); from then on the name
server, when a topic's route changes (a broker registering it for the first time or with other queue data, a
broker unregistered or expired), delivers the route at the client's next poll time (the first run of the task's
grid not before the change), as the real read of that run would return it: the real client reads the route
then, and acts on the reply when it arrives, as it acts on the delivery. A stop-the-world pause, a crash, a
network condition on the link and a crash of the name server are the kernel lease's: a poll missed during a
pause is a real read when the pause ends (the overdue runs, all at that instant), after which the lease keeps
the task's grid (``keep_grid``: a fixed-rate task's runs stay on ``origin + k·period`` after its overdue runs,
so a change is delivered at the grid's next run, not a period after the pause's end), a poll during a
condition is a real read routed by the network model (lost with the condition), and a route read from a name
server that lost the lease is a real read.
What differs is milliseconds: the real reply reads the name server's table when the request arrives (a latency
after the run) and is delivered a second latency later; the delivery reads it at the run and arrives one latency
later. A route change within that latency of a poll time is seen at that poll by one model and at the next poll
(``pollNameServerInterval`` later) by the other, as a real client's is with two different latency draws.

The task is ``scheduleAtFixedRate``, whose runs do not drift, nor does the lease's grid anchored on one of them;
under ``cluster.timer_mode = "fixed_delay"`` each run starts a call's round trip after the previous one's start
plus the period, a grid the lease cannot keep: there the route poll stays a real call.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generator, Mapping

from clusteremu.emulator.lease import POLL, Lease

from .config import seconds

if TYPE_CHECKING:
    from clusteremu.emulator.executor import ScheduledTask

    from .consumer import Consumer

__all__ = ["ROUTE_LEASE_KEY", "RoutePoll", "changed_topics"]

#: the route lease's key among a client's leases (one topic per consumer)
ROUTE_LEASE_KEY = "route"


def changed_topics(before: Mapping[str, tuple] | None, after: Mapping[str, tuple] | None) -> list[str]:
    """The topics whose route a broker's change touched: ``before`` and ``after`` are the broker's registered
    topics (topic -> (read queues, perm)), None when the broker had or has no route; sorted."""
    b, a = before or {}, after or {}
    return sorted(t for t in b.keys() | a.keys() if b.get(t) != a.get(t))


class RoutePoll:
    """The route poll of one start of ``consumer`` (``lease``: as a kernel poll lease, see the module docs)."""

    def __init__(self, consumer: "Consumer", lease: bool) -> None:
        self.c = consumer
        self.lease_mode = lease
        self.lease: Lease | None = None
        self.task: "ScheduledTask | None" = None  # the periodic task, cancelled once the lease is declared
        self.period = seconds(consumer.cfg, "pollNameServerInterval")

    def periodic(self) -> Generator:
        """The ``pollNameServerInterval`` task's run: a real read, or the lease's declaration (its first read)."""
        if not self.lease_mode:
            yield from self.read()
            return
        c = self.c
        if self.task is not None:
            self.task.cancel()  # the lease makes every later run (the kernel's notices handle what stops it)
        # declared on one of the task's runs, it keeps the task's grid (see the module docs)
        self.lease = Lease(c, c.params["namesrv"], ROUTE_LEASE_KEY, self.period, form=POLL, target=c.topic,
                           on_reply=self._on_reply, keep_grid=True).start()

    def read(self) -> Generator:
        """One real ``GET_ROUTEINFO_BY_TOPIC`` call (the start's, and every run without a lease)."""
        c = self.c
        reply = yield from c.call(c.params["namesrv"], "GET_ROUTEINFO_BY_TOPIC", {"topic": c.topic},
                                  timeout=seconds(c.cfg, "mqClientApiTimeout"))
        self._apply(reply)

    def _on_reply(self, body: dict[str, Any]) -> None:
        if "data" in body:
            self._apply(body["data"])

    def _apply(self, route: dict[str, Any] | None) -> None:
        if route is None or not route["found"]:
            return  # an exception in the real client: the cached route stays
        self.c._set_route(route["brokers"], route["queue_datas"])
