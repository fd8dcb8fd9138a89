"""A broker's route registration (``BrokerController.registerBrokerAll``): a one-way ``REGISTER_BROKER`` at start
and every ``registerNameServerPeriod``, or, with ``workload.register_broker = "lease"``, the periodic ones as a
kernel :data:`~clusteremu.emulator.lease.KEEPALIVE` lease with the name server.

Components: :class:`Registration`, one per start of a broker; :data:`REGISTER_LEASE_KEY`.

The real code (RocketMQ 4.9.4, the version of the model and of its source article): ``BrokerController.start``
registers once, then runs ``registerBrokerAll(true, false, forceRegister)`` at a fixed rate, first after 10 s,
every ``registerNameServerPeriod`` clamped to [10 s, 60 s] (30 s by default); ``forceRegister`` is true by
default, so every run sends the full registration without first asking the name servers for their data version
(``needRegister`` is skipped). The name server's ``RouteInfoManager.registerBroker`` then replaces the broker's
``BrokerLiveInfo`` (its last-update timestamp, the data version) and rewrites the broker's queue data only when
the topic config's data version changed or the broker registers for the first time; ``scanNotActiveBroker``,
every 10 s from 5 s (``NamesrvController``), removes a broker whose last update is more than
``BROKER_CHANNEL_EXPIRED_TIME`` (120 s) old. (5.x keeps this path for the default deployment; its scan period
is a setting, 5 s, and a broker's own ``heartbeatTimeoutMillis`` applies only to the lightweight
``BROKER_HEARTBEAT`` of the slave-acting-master and controller modes, which the model does not run.)

Why a lease is exact here: in steady state a periodic registration carries the same topic config (the model's
brokers never change theirs after start), so its only lasting effect at the name server is the last-update
timestamp, which only the scan reads: a keep-alive. So:

* a registration that changes something stays a real ``REGISTER_BROKER``: the start's, and one that the name
  server would take as a first registration (it removed the broker meanwhile, or lost its table in a restart):
  the lease's beat in a scope it does not know is answered "expired" (the scope is the broker's name, alive while
  the name server holds its route), and the broker sends the real registration at once (an answer's round trip
  after that keep-alive time, as the real run would have registered it then);
* the task's first run after the start (and its next run after an "expired" answer) declares the lease (a real
  beat, that run's registration); from then on the task sends nothing, and the name server reads a broker's last
  update as the later of its last real registration and the lease's last keep-alive;
* a crash (and a graceful stop, which unregisters first), a stop-the-world pause and a network condition on the
  link stop the lease at the keep-alive the real broker would have missed (the kernel's notices), so the scan
  expires the broker when it would expire the one-by-one broker: after a crash, a pause or a partition longer
  than 120 s, at the scan after the last registration that got through plus 120 s.

The grid: under ``cluster.timer_mode = "fixed_rate"`` (RocketMQ's) the task keeps its grid after a pause's overdue
runs, and so does the lease (``keep_grid``); under ``fixed_delay`` its next run is a period after the overdue one,
which is the lease's default re-anchoring (the task is a one-way send: a fixed-delay grid does not drift
otherwise). What differs is milliseconds: the one-by-one name server stamps a registration when it arrives, the
lease counts a keep-alive at its send time; a scan within that latency of the expiry bound may decide one scan
(10 s) apart. A name server paused for longer than 120 s less a period is not covered: the one-by-one model's
held registrations then race the overdue scan at the pause's end, the lease's keep-alives do not (the model's
faults cannot pause the name server; only ``cluster.gc`` can, for far shorter than that).
"""
from __future__ import annotations

from typing import Any, Callable

from clusteremu.emulator.agent import Agent
from clusteremu.emulator.lease import Lease

from .config import seconds

__all__ = ["REGISTER_LEASE_KEY", "Registration", "register_period"]

#: the registration lease's key among a broker's leases (one name server)
REGISTER_LEASE_KEY = "registerBrokerAll"


def register_period(cfg: dict[str, Any]) -> float:
    """``registerNameServerPeriod`` as ``BrokerController.start`` clamps it: [10 s, 60 s]."""
    return max(10.0, min(seconds(cfg, "registerNameServerPeriod"), 60.0))


class Registration:
    """The registrations of one start of ``broker``: ``send()`` sends one real ``REGISTER_BROKER``; ``lease``: the
    periodic ones as a lease (see the module docs); ``keep_grid``: the task is fixed-rate."""

    def __init__(self, broker: Agent, send: Callable[[], None], lease: bool, keep_grid: bool) -> None:
        self.b = broker
        self.send = send
        self.lease_mode = lease
        self.keep_grid = keep_grid
        self.lease: Lease | None = None

    def periodic(self) -> None:
        """The ``registerBrokerAll`` task's run: a real registration, or the lease (declared by this run)."""
        if not self.lease_mode:
            self.send()
            return
        if self.lease is not None and self.lease.state != "ended":
            return  # this run's registration is the lease's keep-alive (or the kernel's notices stopped it)
        b = self.b
        self.lease = Lease(b, b.params["namesrv"], REGISTER_LEASE_KEY, register_period(b.params["config"]),
                           scope=b.name,
                           on_reply=self._on_reply, keep_grid=self.keep_grid).start()

    def _on_reply(self, body: dict[str, Any]) -> None:
        if body.get("expired"):
            # The name server removed the broker (or restarted): this keep-alive is a first registration again,
            # a real one; the lease is over and the task's next run declares a new one.
            self.send()
