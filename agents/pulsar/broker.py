"""A Pulsar broker: a JVM agent composed of roles.

Components:

* :class:`Broker`: the agent. It owns the broker's life cycle (boot, graceful stop, crash, the host's refusal
  of requests while the process is down), dispatches messages and store notifications to its roles, and
  applies the model's faults. Its roles, each in its own module, are created afresh at every start of the
  process (what outlives a restart — the host, the fault schedule, rolling restarts — is the broker's):

  * ``store``: the metadata session (:class:`~clusteremu.emulator.election.MetadataSession`);
  * ``leadership``: the leader election and, while leading, the load manager (:mod:`.leadership`);
  * ``ownership``: lookups, bundle ownership, connections, unloads (:mod:`.ownership`);
  * ``usage``: the traffic served, the host and the host-usage sampler (:mod:`.usage`);
  * ``reporter``: the load report and its writes (:mod:`.reporter`);
  * ``xchannel`` / ``xreporter``: the extensible load manager's channel view and reporters (None with the
    modular one);
  * ``rolling``: rolling restarts (:mod:`clusteremu.agents.common.lifecycle`); GC pauses and ``gc_storm`` come
    from :class:`~clusteremu.emulator.jvm.JvmAgent`.

  The roles and the load managers see the broker through :class:`~.port.BrokerPort`.

Timers run on the broker's ``loadManagerExecutor`` (``timers``: one thread, Java semantics, see
``clusteremu.emulator.executor``): the host-usage sampler (fixed rate as older brokers and the Tencent article had
it, or fixed delay as newer brokers do — a scenario setting), the 5 s load-report task and, on the leader, the
shedding task. A stop-the-world pause stops all of them, the session heartbeats and request handling at once.
"""
from __future__ import annotations

from typing import Any, Generator

import simpy

from clusteremu.agents.common.lifecycle import ROLLING_RESTART, TURN, RollingRestarts
from clusteremu.emulator.agent import AgentContext
from clusteremu.emulator.election import MetadataSession, StoreProtocol
from clusteremu.emulator.executor import ScheduledExecutor
from clusteremu.emulator.jvm import JvmAgent
from clusteremu.emulator.messages import Message

from . import events  # noqa: F401
from .extensible_channel import CHANNEL_PREFIX, ServiceUnitChannel
from .extensible_reporting import ExtensibleReporter
from .leadership import Leadership
from .machine import Machine
from .ownership import BundleOwnership
from .reporter import LoadReporter, ReportFault
from .split import POLICIES_PREFIX, on_bundles_changed, on_policies, split_on_owner
from .store import BROKERS_PREFIX, STORE
from .usage import HostUsage, now_ms
from .workload import Workload, workload_for


class Broker(JvmAgent):
    kind = "broker"

    # The roles of the current run of the process (created at every start; see the module docstring).
    config: dict[str, Any]
    workload: Workload
    booted: simpy.Event
    store: MetadataSession
    ownership: BundleOwnership
    usage: HostUsage
    reporter: LoadReporter
    leadership: Leadership
    xchannel: ServiceUnitChannel | None
    xreporter: ExtensibleReporter | None
    timers: ScheduledExecutor

    def __init__(self, name: str, ctx: AgentContext) -> None:
        super().__init__(name, ctx)
        # What outlives a restart of the broker process: it belongs to the host or to the fault schedule.
        self.machine: Machine | None = None
        self.boots = 0
        self.stopping: str | None = None  # the cause of a graceful stop in progress
        self.report_faults: list[ReportFault] = []
        self.rolling = RollingRestarts(self, members=lambda: self.params["all_brokers"],
                                       on_done=lambda n: self.emit("rolling_restart_done", brokers=n))

    # -- start ----------------------------------------------------------------------------------------------
    def on_start(self) -> None:
        p = self.params
        self.config = p["config"]
        self.workload = workload_for(p["namespaces"], p["tasks"])
        if self.machine is None:  # the host survives a restart of the broker; its CPU counters keep counting
            self.machine = Machine(p["machine"], p["resource_model"], self.rng("cpu-noise"), start=self.now)
        self.stopping = None
        self.boots += 1
        self.booted = self.env.event()
        self.store = MetadataSession(
            self, StoreProtocol(STORE), timeout_s=self.config["zooKeeperSessionTimeoutMillis"] / 1000.0,
            op_timeout_s=self.config["metadataStoreOperationTimeoutSeconds"], on_lost=self._session_lost)
        self.ownership = BundleOwnership(self)
        self.usage = HostUsage(self, self.machine)
        self.reporter = LoadReporter(self, self.report_faults)
        self.leadership = Leadership(self)
        extensible = p.get("load_manager") == "extensible"
        self.xchannel = ServiceUnitChannel(self) if extensible else None
        self.xreporter = ExtensibleReporter(self) if extensible else None
        self.timers = self.executor("loadManagerExecutor")
        self.start_gc(p["gc"])
        self.spawn(self._boot())

    def now_ms(self) -> int:
        """Virtual time as the broker's clock reads it (epoch milliseconds)."""
        return now_ms(self.now)

    def _boot(self) -> Generator:
        """Open a session, register, take the preassigned bundles, start the timers, join the election."""
        ok = yield from self._open_session()
        if not ok:
            return
        cause = "restart" if self.boots > 1 else self.params.get("start_cause", "start")
        self.emit("broker_booted", cause=cause, session=self.store.id or "")
        self.booted.succeed()
        if self.boots == 1:
            for bundle in self.params.get("initial_bundles", ()):
                owner = yield from self.ownership.acquire(bundle, via="initial")
                if owner == self.name:
                    self.ownership.serve_preassigned_topics(bundle)
        interval = (self.params.get("host_usage_interval_s") or 0.0) or \
            self.config["loadBalancerHostUsageCheckIntervalMinutes"] * 60.0
        self.timers.schedule_periodic(self.params["host_usage_mode"], self.usage.sample, 0.0, interval,
                                      name="host-usage")
        self.reporter.start()
        if self.config["loadBalancerAutoBundleSplitEnabled"] and \
                (self.boots > 1 or self.params.get("start_cause") == "scale_out"):
            # A broker that was not there may have missed splits; the others are told of each split.
            self.spawn(self._watch_policies())
        if self.xchannel is not None:
            yield from self.xchannel.start()
            self.xreporter.start()
        yield from self.leadership.run()

    def _watch_policies(self) -> Generator:
        r = yield from self.store.op("watch", {"prefix": POLICIES_PREFIX})
        for path, data in sorted((r or {}).get("nodes", {}).items()):
            on_policies(self, path, data)

    def _open_session(self) -> Generator[Any, Any, bool]:
        """Open the metadata session and register (the registration node carries the first load report)."""
        ok = yield from self.store.open()
        if not ok:
            self.crash("metadata store unreachable at start")
            return False
        self.reporter.refresh()
        yield from self.store.op("create", {"path": BROKERS_PREFIX + self.name,
                                            "data": self.reporter.stamped().to_json(), "ephemeral": True})
        return True

    # -- session --------------------------------------------------------------------------------------------
    def _session_lost(self) -> None:
        """The session expired: its ephemeral nodes are gone, so are our bundles and any leadership."""
        self.leadership.session_lost()
        self.ownership.release_all("session_lost")
        if self.xchannel is not None:
            self.xchannel.drop_held("broker_down")
            self.xchannel.on_session_event(lost=True)
        if self.config["zookeeperSessionExpiredPolicy"] == "shutdown":
            self.crash("session expired")
            return
        if not self.stopping:  # a closing broker does not come back
            self.spawn(self._reconnect())

    def _reconnect(self) -> Generator:
        ok = yield from self._open_session()
        if ok:
            if self.xchannel is not None:
                self.xchannel.on_session_event(lost=False)
            yield from self.leadership.run()

    # -- graceful stop, crash -------------------------------------------------------------------------------
    def shutdown(self, cause: str) -> Generator:
        """A graceful stop (``PulsarService.close``): leave the election, unload every bundle (clients are told
        to reconnect and look the topics up again), close the metadata session (its ephemeral nodes, the
        registration among them, go at once), and stop the process."""
        if not self.alive or self.stopping:
            return
        self.stopping = cause
        self.emit("broker_stopping", cause=cause, bundles=len(self.ownership.owned))
        self.leadership.stop()
        if self.xchannel is not None:
            yield from self.xchannel.clean_ownerships()
        yield from self.ownership.unload_all()
        yield from self.store.close()
        self.emit("broker_stopped", cause=cause)
        self.crash(cause)

    def crash(self, reason: str = "crash") -> None:
        """A crashed broker process: the host's kernel closes its sockets, so clients see their connections
        drop at once; its metadata session expires later, after the session timeout."""
        if self.alive:
            self.ownership.close_connections("broker_down")
            if self.xchannel is not None:
                self.xchannel.drop_held("broker_down")
        super().crash(reason)

    # -- messages -------------------------------------------------------------------------------------------
    def deliver(self, msg: Message) -> None:
        """While the broker process is down (stopped or crashed) its host is up: the host's kernel refuses
        connections at once, so a request gets an immediate connection error instead of waiting out its timeout
        (a network partition, by contrast, still times out)."""
        if not self.alive and self.boots and type(msg.body) is dict and "_call" in msg.body:
            self.refuse(msg, {"ok": False, "response": "error", "error": "Connection refused"})
            return
        super().deliver(msg)

    def on_message(self, msg: Message) -> Generator | None:
        kind = msg.kind
        if kind == TURN:
            self.rolling.on_turn(msg.body)
            return None
        if self.stopping and kind in ("lookup", "connect"):
            # Closing: the broker serves no new lookups or connections; the client backs off and retries.
            self.reply(msg, {"response": "error", "error": "ServiceNotReady: broker is closing", "ok": False})
            return None
        if kind == "lookup":
            return self.ownership.lookup(msg)
        if kind == "connect":
            self.ownership.connect(msg)
        elif kind == "unload":
            return self.ownership.unload(msg)
        elif kind == "notify":
            self._notify(msg.body)
        elif kind == "split":
            return split_on_owner(self, msg)
        elif kind == "bundles_changed":
            on_bundles_changed(self, msg.body)
        elif kind == "assign" and self.xchannel is not None:
            return self.xchannel.serve_assign(msg)
        return None

    def _notify(self, body: dict) -> None:
        path = body["path"]
        if self.leadership.on_notify(path, body["change"], body["data"]):
            return
        if path.startswith(POLICIES_PREFIX):
            on_policies(self, path, body["data"])
        elif path.startswith(CHANNEL_PREFIX) and self.xchannel is not None:
            self.xchannel.on_notify(path, body["change"], body["data"])

    # -- faults ---------------------------------------------------------------------------------------------
    def on_fault(self, kind: str, spec: dict[str, Any]) -> None:
        """The model's faults (see ``clusteremu.agents.pulsar.faults``); the JVM's and the kernel's otherwise."""
        if kind == "cpu_spike":
            # Another process on the host: it neither stops with the broker nor pauses with its GC.
            self.env.process(self.usage.cpu_spike(spec["cores"], spec["duration_s"]))
        elif kind in ("shutdown", "scale_in"):
            self.spawn(self.shutdown(kind))
        elif kind == "leader_kill":
            # Each broker gets the fault; only one that believes it leads acts, so no agent needs another's state.
            if self.alive and self.leadership.is_leading:
                self.crash("leader_kill")
        elif kind == "report_loss":
            self.report_faults.append((spec["at"], spec["at"] + spec["duration_s"], spec["probability"],
                                       (spec["extra_ms"] or 0.0) / 1000.0))
        elif kind == "scale_out":
            pass  # the broker was created to start at this instant (AgentSpec.start_at); it is booting now
        elif kind == ROLLING_RESTART:
            self.rolling.on_fault(spec)
        else:
            super().on_fault(kind, spec)
