"""A consumer's heartbeats to the brokers of its route (``MQClientInstance.sendHeartbeatToAllBrokerWithLock``):
one synchronous ``HEARTBEAT`` call per broker, or, with ``workload.heartbeats = "lease"``, the periodic ones as
kernel leases (:mod:`clusteremu.emulator.lease`).

Components: :class:`Heartbeats`, one per start of a consumer.

Why a lease is exact here: in steady state a periodic heartbeat has one lasting effect at the broker, the
channel's last-update time, which ``ClientHousekeepingService``'s scan (every 10 s) expires after
``channelExpiredTimeout`` (and which counts as traffic for Netty's idle handler). So:

* a heartbeat that changes something stays a real call: the first one to a broker (it registers the channel and
  notifies the group), every one after a rebalance changed the queues (``messageQueueChanged``), and the one the
  client sends when the broker answered its lease "expired" (the channel was closed meanwhile: a partition, a
  pause longer than the timeout; the real client's next heartbeat registers it again, at the same keep-alive
  time);
* the periodic timer's next run after a broker answered a real heartbeat declares a :data:`~clusteremu.emulator.
  lease.KEEPALIVE` lease with that broker (the declaration is that run's heartbeat, a real message), scoped by the
  client id, keyed per channel (:func:`~.names.heartbeat_lease_key`); from then on that timer sends nothing to
  that broker, and the broker reads the channel's last heartbeat as the later of its last real heartbeat and the
  lease's last keep-alive (:class:`~clusteremu.emulator.lease.LeaseTable`);
* a crash, a stop-the-world pause and a network condition on the link stop the lease at the keep-alive the real
  client would have missed (the kernel's notices); ``cleanOfflineBroker`` ends the lease of a broker that left the
  route.

The grid: the real client's task is ``scheduleAtFixedRate``, whose runs do not drift, and the lease's grid, anchored
on such a run, does not either; after a stop-the-world pause the task runs its overdue runs at the pause's end and
then keeps its grid, and so does the lease (``keep_grid``: the pause's end is a real keep-alive, the later ones
are on the task's grid again); the one-by-one model's heartbeat to the n-th broker of a run leaves after the
n - 1 calls before it (milliseconds each), the lease's at the run's time: the broker's last contact differs by
those milliseconds, far below the scan's 10 s. Under ``cluster.timer_mode = "fixed_delay"`` each run starts
after the previous one's calls, so the real grid drifts by their duration every period while the lease's would
not: there the heartbeats stay real calls.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generator

from clusteremu.emulator.executor import ScheduledTask
from clusteremu.emulator.lease import Lease

from .config import seconds
from .names import heartbeat_lease_key

if TYPE_CHECKING:
    from .consumer import Consumer

__all__ = ["Heartbeats", "IDLE_SKIP_S"]

#: how far ahead a steady run of the task skips its idle runs (a real run then, which skips again)
IDLE_SKIP_S = 86_400.0


class Heartbeats:
    """The heartbeats of one start of ``consumer`` (``lease``: periodic ones as leases, see the module docs)."""

    def __init__(self, consumer: "Consumer", lease: bool) -> None:
        self.c = consumer
        self.lease = lease
        #: brokers that answered a real heartbeat of this client id (its channel is there, as far as it knows)
        self.registered: set[str] = set()
        #: broker -> the heartbeat lease with it
        self.leases: dict[str, Lease] = {}
        #: the periodic task on the client's executor, once scheduled (its idle runs are skipped)
        self.task: ScheduledTask | None = None

    def one(self, broker: str) -> Generator:
        """One real ``HEARTBEAT`` call (a synchronous request with ``mqClientApiTimeout``)."""
        c = self.c
        reply = yield from c.call(broker, "HEARTBEAT",
                                  {"group": c.group, "cid": c.cid, "topic": c.topic, "orderly": c.orderly},
                                  timeout=seconds(c.cfg, "mqClientApiTimeout"))
        if reply is not None:
            self.registered.add(broker)

    def all(self) -> Generator:
        """A real heartbeat to every broker of the cached route, one after the other (the start, and a rebalance
        that changed the queues)."""
        for b in list(self.c.route_brokers):
            yield from self.one(b)

    def periodic(self) -> Generator | None:
        """The ``heartbeatBrokerInterval`` task: real heartbeats, or leases where the client is registered. A run
        whose every heartbeat is a running lease's keep-alive does nothing and returns None, and so do the runs
        after it until the route changes or a lease ends (:meth:`wake`): they are skipped as idle runs (the
        kernel executor's ``skip_until(idle=True)``; the steady state's run, every 30 s of every consumer)."""
        brokers = self.c.route_brokers
        if self.lease and len(self.leases) == len(brokers) and all(
                (lease := self.leases.get(b)) is not None and lease.state != "ended" for b in brokers):
            if self.task is not None:
                self.task.skip_until(self.c.now + IDLE_SKIP_S, idle=True)
            return None
        return self._periodic()

    def wake(self) -> None:
        """What the task reads changed (the route, or a lease ended): its next run runs."""
        if self.task is not None:
            self.task.wake()

    def _periodic(self) -> Generator:
        if not self.lease:
            yield from self.all()
            return
        c = self.c
        brokers = list(c.route_brokers)
        for b in [b for b in self.leases if b not in brokers]:  # cleanOfflineBroker: no more heartbeats there
            self.leases.pop(b).end()
        period = seconds(c.cfg, "heartbeatBrokerInterval")
        for b in brokers:
            lease = self.leases.get(b)
            if lease is not None and lease.state != "ended":
                continue  # this run's heartbeat to b is the lease's keep-alive
            if b in self.registered:
                self.leases[b] = Lease(c, b, heartbeat_lease_key(c.cid, b), period, scope=c.cid,
                                       on_reply=lambda body, b=b: self._on_reply(b, body), keep_grid=True).start()
            else:
                yield from self.one(b)

    def _on_reply(self, broker: str, body: dict[str, Any]) -> None:
        if body.get("expired"):
            # The broker closed the channel meanwhile: this keep-alive is a real heartbeat, which registers it
            # again (the lease is over; the next periodic run after the answer declares a new one).
            self.registered.discard(broker)
            self.leases.pop(broker, None)
            self.wake()
            self.c.spawn(self.one(broker))
