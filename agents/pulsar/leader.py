"""What both load managers share as the leader runs them: their life cycle on the leader's broker.

Components:

* :class:`LeaderLoadManager`: the base of :class:`~.load_manager.LoadManager` (modular) and
  :class:`~.extensible_load_manager.ExtensibleLoadManager`: on becoming leader, watch the store prefixes the
  load manager reads (each snapshot handed to :meth:`~LeaderLoadManager.on_notify` as ``created`` nodes, in path
  order), adopt what the snapshots show (:meth:`~LeaderLoadManager.on_snapshot`), then run the shedding task on
  the broker's load-manager executor every ``loadBalancerSheddingIntervalMinutes`` (first run one interval
  later) with the load manager's own timer semantics; on losing leadership, stop.

A load manager talks to its broker only through :class:`~.port.BrokerPort`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Generator

from clusteremu.emulator.executor import ScheduledTask

if TYPE_CHECKING:
    from .port import BrokerPort


class LeaderLoadManager:
    """The leader's load manager (see the module docstring); subclasses set the class attributes."""

    #: the store prefixes it watches, in order
    watched: ClassVar[tuple[str, ...]] = ()
    #: the shedding task's timer semantics (``fixed_rate`` or ``fixed_delay``) and its name
    shedding_mode: ClassVar[str] = ""
    shedding_task: ClassVar[str] = ""

    def __init__(self, broker: "BrokerPort") -> None:
        self.b = broker
        self.cfg: dict[str, Any] = broker.config
        self.active: set[str] = set()  # the brokers it knows to be up (registered)
        self._task: ScheduledTask | None = None
        self.stopped = False

    def start(self) -> Generator:
        """Read the watched prefixes, then schedule the shedding task (unless stopped meanwhile)."""
        for prefix in self.watched:
            r = yield from self.b.store.op("watch", {"prefix": prefix})
            if r is None or self.stopped:
                return
            for path, data in sorted(r["nodes"].items()):
                self.on_notify(path, "created", data)
        self.on_snapshot()
        interval = self.cfg["loadBalancerSheddingIntervalMinutes"] * 60.0
        self._task = self.b.timers.schedule_periodic(self.shedding_mode, self.shed, interval, interval,
                                                     name=self.shedding_task)

    def stop(self) -> None:
        self.stopped = True
        if self._task is not None:
            self._task.cancel()

    def on_notify(self, path: str, change: str, data: Any) -> None:
        """A node under a watched prefix was created, changed or deleted."""
        raise NotImplementedError

    def on_snapshot(self) -> None:
        """Called once the watched prefixes were read, before the shedding task is scheduled."""

    def shed(self) -> None:
        """One run of the shedding task."""
        raise NotImplementedError

    def begin_shedding(self) -> str | None:
        """The start of every shedding run: the strategy's short name, or None when there is nothing to do
        (stopped, shedding disabled, or at most one broker: that run's ``shedding_cycle`` is written here)."""
        cfg = self.cfg
        if self.stopped or not (cfg["loadBalancerEnabled"] and cfg["loadBalancerSheddingEnabled"]):
            return None
        name = cfg["loadBalancerLoadSheddingStrategy"].rsplit(".", 1)[-1]
        if len(self.active) <= 1:
            self.b.emit("shedding_cycle", strategy=name, brokers=len(self.active), unloads=0, skipped="brokers<=1")
            return None
        return name

    def forget_grace_period(self, recently_unloaded: dict[str, int], now_ms: int) -> None:
        """Drop the bundles unloaded longer than ``loadBalancerSheddingGracePeriodMinutes`` ago."""
        grace_ms = self.cfg["loadBalancerSheddingGracePeriodMinutes"] * 60_000
        for bundle in [b for b, t in recently_unloaded.items() if t < now_ms - grace_ms]:
            del recently_unloaded[bundle]

    def place(self, bundle: str) -> str | None:
        """The owner of an unowned bundle a lookup asks for (modular), or None when no broker can own it."""
        raise NotImplementedError
