"""A Pulsar broker: metadata session, registration, leader election, host-usage sampling, load reports,
bundle ownership, lookups, connections, unloads, GC pauses — and, while it is the leader, the load manager.

Timers run on the broker's ``loadManagerExecutor`` (one thread, Java semantics, see ``clusteremu.emulator.executor``): the
host-usage sampler (fixed rate as older brokers and the Tencent article had it, or fixed delay as newer brokers
do — a scenario setting), the 5 s load-report task and, on the leader, the shedding task. A stop-the-world pause
stops all of them, the session heartbeats and request handling at once.
"""
from __future__ import annotations

import fnmatch
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Generator

import numpy as np
import simpy

from clusteremu.emulator.agent import Agent, AgentContext
from clusteremu.emulator.messages import Message
from clusteremu.strategies.pulsar import PulsarConfig

from . import events  # noqa: F401
from .faults import in_name_order
from .extensible_channel import CHANNEL_PREFIX, ServiceUnitChannel
from .extensible_load_manager import ExtensibleLoadManager
from .extensible_reporting import LOAD_DATA_PREFIX, TOP_BUNDLES_PREFIX, ExtensibleReporter
from .load_manager import LoadManager
from .machine import Machine
from .split import POLICIES_PREFIX, BundleMap, on_bundles_changed, on_policies, split_on_owner
from .reporting import LocalReport, percent_usage, score_of
from .store import BROKERS_PREFIX, LEADER_PATH, OWNERSHIP_PREFIX, STORE
from .workload import client_of, workload_for

#: virtual time 0 as epoch milliseconds, so that a first CPU sample divides by "seconds since the epoch"
EPOCH_MS = 1_700_000_000_000
LOAD_REPORT_UPDATE_MINIMUM_INTERVAL_S = 5.0  # LoadReportUpdaterTask's fixed rate in the modular load manager


_owned_versions = itertools.count()


@dataclass
class Ownership:
    disabled: bool = False
    topics: dict[int, str] = field(default_factory=dict)  # topic index -> client agent
    task_counts: np.ndarray | None = None  # topics per task; only ever grows while the bundle is owned


class OwnedBundles(dict[str, Ownership]):
    """The bundles a broker owns. ``version`` is new (unique across brokers) whenever a bundle is added or
    removed: with the broker's total task counts, which only grow while the set is the same, it tells that no
    bundle's counts changed, so the report's bundle stats can be reused without reading 100 ownerships."""

    __slots__ = ("version",)

    def __init__(self) -> None:
        super().__init__()
        self.version = next(_owned_versions)

    def __setitem__(self, bundle: str, own: Ownership) -> None:
        super().__setitem__(bundle, own)
        self.version = next(_owned_versions)

    def __delitem__(self, bundle: str) -> None:
        super().__delitem__(bundle)
        self.version = next(_owned_versions)

    def pop(self, bundle: str, *default: Any) -> Any:
        self.version = next(_owned_versions)
        return super().pop(bundle, *default)

    def _unsupported(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("OwnedBundles changes one bundle at a time (set, del, pop)")

    clear = popitem = setdefault = update = __ior__ = _unsupported  # type: ignore[assignment]


class Broker(Agent):
    kind = "broker"

    def __init__(self, name: str, ctx: AgentContext) -> None:
        super().__init__(name, ctx)
        # Life-cycle state that outlives a restart of the broker process (it belongs to the host or to the
        # fault schedule, not to the JVM).
        self.machine: Machine | None = None
        self.boots = 0
        self.stopping: str | None = None  # the cause of a graceful stop in progress
        self.report_faults: list[tuple[float, float, float, float]] = []  # (start, end, probability, extra_s)
        self.rolling: dict[str, dict[str, Any]] = {}  # rolling restarts this broker takes part in, by key

    # -- start ----------------------------------------------------------------------------------------------
    def on_start(self) -> None:
        p = self.params
        self.config: dict[str, Any] = p["config"]
        self.workload = workload_for(p["namespaces"], p["tasks"])
        if self.machine is None:  # the host survives a restart of the broker; its CPU counters keep counting
            self.machine = Machine(p["machine"], p["resource_model"], self.rng("cpu-noise"), start=self.now)
        self.stopping = None
        self.boots += 1
        self.booted = self.env.event()
        self.task_counts = np.zeros(len(self.workload.tasks))
        self._stats_cache: tuple[Any, dict[str, dict[str, Any]]] | None = None
        self._rates_cache: tuple[np.ndarray, bytes, tuple[float, float, float, float]] | None = None
        self._report_inputs: tuple[Any, ...] = ()  # what the current report was made from
        self._typed_config: PulsarConfig | None = None
        self.bundle_map = BundleMap(self.workload)  # the bundles as this broker knows them (splits)
        self.owned = OwnedBundles()
        self.session: str | None = None
        self.leader: str | None = None
        self.active_brokers: set[str] = set()
        self.lm: LoadManager | ExtensibleLoadManager | None = None
        # the extensible load manager's service-unit channel view and reporters (None with the modular one)
        extensible = p.get("load_manager") == "extensible"
        self.xchannel = ServiceUnitChannel(self) if extensible else None
        self.xreporter = ExtensibleReporter(self) if extensible else None
        self.report: LocalReport | None = None
        self.last_written: LocalReport | None = None
        self.last_write_t = -math.inf
        self.cpu_percent = 0.0
        self.bw_in_kbps = 0.0
        self.bw_out_kbps = 0.0
        self.elapsed_s = 0.0
        self._last_sample_ms = 0
        self._last_cpu_ns = 0.0
        self._last_bytes = (0.0, 0.0)
        self.executor_ = self.executor("loadManagerExecutor")
        gc = p["gc"]
        if gc["young_every_s"] > 0:
            self.spawn(self._gc("young", gc["young_every_s"], gc["young_pause_ms"] / 1000.0, gc["sigma"]))
        if gc["full_every_s"] > 0:
            self.spawn(self._gc("full", gc["full_every_s"], gc["full_pause_s"], gc["sigma"]))
        self.spawn(self._boot())

    def _boot(self) -> Generator:
        """Open a session, register, take the preassigned bundles, start the timers, join the election."""
        ok = yield from self._open_session()
        if not ok:
            return
        cause = "restart" if self.boots > 1 else self.params.get("start_cause", "start")
        self.emit("broker_booted", cause=cause, session=self.session or "")
        self.booted.succeed()
        if self.boots == 1:
            for bundle in self.params.get("initial_bundles", ()):
                owner = yield from self._acquire(bundle, via="initial")
                if owner == self.name:
                    self._serve_preassigned_topics(bundle)
        ex = self.executor_
        interval = (self.params.get("host_usage_interval_s") or 0.0) or \
            self.config["loadBalancerHostUsageCheckIntervalMinutes"] * 60.0
        ex.schedule_periodic(self.params["host_usage_mode"], self._sample_host_usage, 0.0, interval,
                             name="host-usage")
        ex.schedule_at_fixed_rate(self._write_load_report, 0.0, LOAD_REPORT_UPDATE_MINIMUM_INTERVAL_S,
                                  name="load-report")
        if self.config["loadBalancerAutoBundleSplitEnabled"] and self.xchannel is None and \
                (self.boots > 1 or self.params.get("start_cause") == "scale_out"):
            # A broker that was not there may have missed splits; the others are told of each split.
            self.spawn(self._watch_policies())
        if self.xchannel is not None:
            yield from self.xchannel.start()
            self.xreporter.start()
        yield from self._elect()

    def _watch_policies(self) -> Generator:
        r = yield from self._store("watch", {"prefix": POLICIES_PREFIX})
        for path, data in sorted((r or {}).get("nodes", {}).items()):
            on_policies(self, path, data)

    def _open_session(self) -> Generator[Any, Any, bool]:
        timeout = self.config["zooKeeperSessionTimeoutMillis"] / 1000.0
        r = yield from self.call(STORE, "session_open", {"timeout_s": timeout}, timeout=timeout)
        if r is None:
            self.crash("metadata store unreachable at start")
            return False
        self.session = r["session"]
        self.spawn(self._heartbeat(self.session, timeout))
        self._refresh_report()
        yield from self._store("create", {"path": BROKERS_PREFIX + self.name, "data": self._stamped_report().to_dict(),
                                          "ephemeral": True})
        return True

    def _store(self, op: str, body: dict) -> Generator[Any, Any, dict | None]:
        body = dict(body)
        body["session"] = self.session
        r = yield from self.call(STORE, op, body, timeout=self.config["metadataStoreOperationTimeoutSeconds"])
        if r is not None and r.get("expired"):
            self._session_lost()
            return None
        return r

    # -- session --------------------------------------------------------------------------------------------
    def _heartbeat(self, session: str, timeout: float) -> Generator:
        # ZooKeeper clients ping at a third of the session timeout when idle; a pause stops the pings.
        while self.session == session:
            yield from self.sleep(timeout / 3.0)
            if self.session != session:
                return
            r = yield from self.call(STORE, "ping", {"session": session}, timeout=timeout / 3.0)
            if r is not None and r.get("expired") and self.session == session:
                self._session_lost()
                return

    def _session_lost(self) -> None:
        """The session expired: its ephemeral nodes are gone, so are our bundles and any leadership."""
        if self.session is None:
            return
        self.session = None
        self._stop_leading()
        self.leader = None
        for bundle in sorted(self.owned):
            self._release(bundle, reason="session_lost", destination="", delete=False)
        if self.xchannel is not None:
            self.xchannel.drop_held("broker_down")
        if self.config["zookeeperSessionExpiredPolicy"] == "shutdown":
            self.crash("session expired")
            return
        if not self.stopping:  # a closing broker does not come back
            self.spawn(self._reconnect())

    def _reconnect(self) -> Generator:
        ok = yield from self._open_session()
        if ok:
            yield from self._elect()

    # -- election -------------------------------------------------------------------------------------------
    def _elect(self) -> Generator:
        r = yield from self._store("watch", {"prefix": LEADER_PATH})
        if r is None:
            return
        r = yield from self._store("create", {"path": LEADER_PATH, "data": self.name, "ephemeral": True})
        if r is None:
            return
        if r["ok"]:
            self._become_leader(previous=self.leader or "")
        else:
            self.leader = r["data"]

    # -- graceful stop, restart -----------------------------------------------------------------------------
    def _shutdown(self, cause: str) -> Generator:
        """A graceful stop (``PulsarService.close``): leave the election, unload every bundle (clients are told
        to reconnect and look the topics up again), close the metadata session (its ephemeral nodes, the
        registration among them, go at once), and stop the process."""
        if not self.alive or self.stopping:
            return
        self.stopping = cause
        self.emit("broker_stopping", cause=cause, bundles=len(self.owned))
        self._stop_leading()
        if self.xchannel is not None:
            yield from self.xchannel.clean_ownerships()
        for bundle in sorted(self.owned):
            own = self.owned.get(bundle)
            if own is None:
                continue
            own.disabled = True
            yield from self._store("set", {"path": OWNERSHIP_PREFIX + bundle,
                                           "data": {"broker": self.name, "disabled": True}})
            if self.owned.get(bundle) is own:
                self._release(bundle, reason="shutdown", destination="", delete=False)
                yield from self._store("delete", {"path": OWNERSHIP_PREFIX + bundle})
        if self.session is not None:
            yield from self._store("session_close", {})
        self.session = None
        self.emit("broker_stopped", cause=cause)
        self.crash(cause)

    def _rolling_restart(self, key: str) -> Generator:
        """This broker's turn in a rolling restart: stop gracefully, stay down ``down_s``, boot, wait until
        booted and ``gap_s`` more, then hand the turn to the next broker. It runs as the operator's script, not
        as a process of the broker, so that stopping the broker does not end it."""
        spec = self.rolling[key]
        if not self.alive or self.stopping:
            return  # a broker that is down already: the script stops here (its turn message would be lost too)
        yield from self._shutdown("rolling_restart")
        yield self.env.timeout(spec["down_s"])
        self.start()
        # Waits for the boot to complete; if it never does (store unreachable), the script stops here, as an
        # operator's would.
        yield self.booted
        order = self.rolling_order(spec)
        i = order.index(self.name)
        if i + 1 == len(order):
            self.emit("rolling_restart_done", brokers=len(order))
            return
        yield self.env.timeout(spec["gap_s"])
        # The operator moves on to the next broker; the hand-over travels as a message so that each broker
        # knows only its own state (the brokers may live on different workers).
        self.send(order[i + 1], "rolling_restart_turn", {"key": key})

    def rolling_order(self, spec: dict[str, Any]) -> list[str]:
        """The brokers a rolling restart goes through, in the order it takes them."""
        return in_name_order(b for b in self.params["all_brokers"]
                             if any(fnmatch.fnmatchcase(b, g) for g in spec["agents"]))

    def _become_leader(self, previous: str) -> None:
        self.leader = self.name
        self.emit("leader_elected", previous=previous)
        self.lm = ExtensibleLoadManager(self) if self.xchannel is not None else LoadManager(self)
        self.spawn(self.lm.start())

    def _stop_leading(self) -> None:
        if self.lm is not None:
            self.lm.stop()
            self.lm = None

    # -- messages -------------------------------------------------------------------------------------------
    def deliver(self, msg: Message) -> None:
        """While the broker process is down (stopped or crashed) its host is up: the host's kernel refuses
        connections at once, so a request gets an immediate connection error instead of waiting out its timeout
        (a network partition, by contrast, still times out)."""
        if not self.alive and self.boots and type(msg.body) is dict and "_call" in msg.body:
            self._msg_seq += 1
            refusal = {"_reply": msg.body["_call"], "ok": False, "response": "error", "error": "Connection refused"}
            self._outbox.append(Message(self.name, msg.src, msg.kind + "_reply", refusal, self.now, self._msg_seq))
            return
        super().deliver(msg)

    def on_message(self, msg: Message) -> Generator | None:
        kind = msg.kind
        if kind == "rolling_restart_turn":
            if msg.body["key"] in self.rolling:
                self.env.process(self._rolling_restart(msg.body["key"]))
            return None
        if self.stopping and kind in ("lookup", "connect"):
            # Closing: the broker serves no new lookups or connections; the client backs off and retries.
            self.reply(msg, {"response": "error", "error": "ServiceNotReady: broker is closing", "ok": False})
            return None
        if kind == "lookup":
            return self._lookup(msg)
        if kind == "connect":
            self._connect(msg)
        elif kind == "unload":
            return self._unload(msg)
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
        if path == LEADER_PATH:
            if body["change"] == "deleted":
                previous, self.leader = self.leader, None
                if self.session is not None and not self.stopping:
                    self.spawn(self._elect_after(previous or ""))
            else:
                self.leader = body["data"]
        elif path.startswith(BROKERS_PREFIX) and self.lm is not None:
            self.lm.on_broker_report(path[len(BROKERS_PREFIX):], body["change"], body["data"])
        elif path.startswith(POLICIES_PREFIX):
            on_policies(self, path, body["data"])
        elif path.startswith(CHANNEL_PREFIX) and self.xchannel is not None:
            self.xchannel.on_notify(path, body["change"], body["data"])
        elif path.startswith((LOAD_DATA_PREFIX, TOP_BUNDLES_PREFIX)) and isinstance(self.lm, ExtensibleLoadManager):
            self.lm.on_notify(path, body["change"], body["data"])

    def _elect_after(self, previous: str) -> Generator:
        self.leader = None
        r = yield from self._store("create", {"path": LEADER_PATH, "data": self.name, "ephemeral": True})
        if r is None:
            return
        if r["ok"]:
            self._become_leader(previous)
        else:
            self.leader = r["data"]

    # -- lookups and ownership ------------------------------------------------------------------------------
    def _lookup(self, msg: Message) -> Generator:
        topic = msg.body["topic"]
        bundle = self.bundle_map.bundle_of(self.workload.topic_index[topic])
        if self.xchannel is not None:
            yield from self.xchannel.lookup(msg, bundle)
            return
        r = yield from self._store("get", {"path": OWNERSHIP_PREFIX + bundle})
        if r is None:
            self.reply(msg, {"response": "error", "error": "MetadataError"})
            return
        if r["ok"]:
            owner = r["data"]
            if owner["disabled"]:
                self.reply(msg, {"response": "error", "error": f"Namespace bundle {bundle} is being unloaded"})
            else:
                self.reply(msg, {"response": "connect", "target": owner["broker"], "authoritative": True})
            return
        if msg.body["authoritative"]:
            candidate = self.name  # the leader already chose us
        elif self.lm is not None or self.leader is None or self.leader not in self._known_brokers():
            candidate = self.lm.place(bundle) if self.lm is not None else self.name
            if candidate is None:
                self.reply(msg, {"response": "error", "error": f"No broker was available to own {topic}"})
                return
        else:
            self.reply(msg, {"response": "redirect", "target": self.leader, "authoritative": False})
            return
        if candidate != self.name:
            self.reply(msg, {"response": "redirect", "target": candidate, "authoritative": True})
            return
        owner = yield from self._acquire(bundle, via="lookup")
        if owner is None:
            self.reply(msg, {"response": "error", "error": "MetadataError"})
        else:
            self.reply(msg, {"response": "connect", "target": owner, "authoritative": True})

    def _known_brokers(self) -> set[str]:
        return self.lm.active if self.lm is not None else {self.leader} if self.leader else set()

    def _acquire(self, bundle: str, via: str) -> Generator[Any, Any, str | None]:
        """Claim ``bundle`` with an ephemeral ownership node; return the owner that is actually recorded."""
        if bundle in self.owned:
            return self.name
        if self.stopping:
            return None
        if self.xchannel is not None:
            return (yield from self.xchannel.claim_initial(bundle))
        if not self.bundle_map.exists(bundle):
            return None  # split meanwhile: the client retries and finds a child
        r = yield from self._store("create", {"path": OWNERSHIP_PREFIX + bundle,
                                              "data": {"broker": self.name, "disabled": False}, "ephemeral": True})
        if r is None:
            return None
        if not r["ok"]:
            return r["data"]["broker"]
        if self.stopping:  # began closing while the claim was in flight: give it back
            yield from self._store("delete", {"path": OWNERSHIP_PREFIX + bundle})
            return None
        if bundle not in self.owned:
            self.owned[bundle] = Ownership(task_counts=np.zeros(len(self.workload.tasks)))
            self.emit("bundle_owned", bundle=bundle, via=via)
        return self.name

    def _serve_preassigned_topics(self, bundle: str) -> None:
        """A bundle preassigned at start comes with its topics' connections: their clients were started
        connected to this broker (``cluster.start = "preassigned"``), so its traffic flows from now on."""
        own = self.owned[bundle]
        wl = self.workload
        clients = self.params["clients"]
        topics = wl.bundle_topics[wl.bundle_index[bundle]]
        self._advance_machine()
        for ti in topics.tolist():
            own.topics[ti] = client_of(ti, clients)
        counts = np.bincount(wl.topic_task[topics], minlength=len(wl.tasks))
        own.task_counts += counts
        self.task_counts += counts

    def _connect(self, msg: Message) -> None:
        topic = msg.body["topic"]
        ti = self.workload.topic_index[topic]
        bundle = self.bundle_map.bundle_of(ti)
        own = self.owned.get(bundle)
        if own is None or own.disabled:
            self.reply(msg, {"ok": False, "error": "ServiceUnitNotReady"})
            return
        if ti not in own.topics:
            self._advance_machine()
            task = self.workload.topic_task[ti]
            own.topics[ti] = msg.src
            own.task_counts[task] += 1
            self.task_counts[task] += 1
        self.reply(msg, {"ok": True})

    def _unload(self, msg: Message) -> Generator:
        bundle = msg.body["bundle"]
        own = self.owned.get(bundle)
        if own is None:
            self.reply(msg, {"ok": False})
            return
        own.disabled = True
        yield from self._store("set", {"path": OWNERSHIP_PREFIX + bundle,
                                       "data": {"broker": self.name, "disabled": True}})
        if self.owned.get(bundle) is own:
            self._release(bundle, reason=msg.body.get("reason", "shedding"),
                          destination=msg.body.get("destination", ""), delete=True)
        self.reply(msg, {"ok": True})

    def _release(self, bundle: str, reason: str, destination: str, delete: bool) -> None:
        """Close the bundle's topics (clients get a close and reconnect) and give up its ownership."""
        own = self.owned.pop(bundle)
        self._advance_machine()
        for ti, client in sorted(own.topics.items()):
            self.send(client, "close", {"topic": self.workload.topics[ti], "reason": _close_reason(reason)})
        self.task_counts -= own.task_counts
        self.emit("bundle_unloaded", bundle=bundle, destination=destination, reason=reason, topics=len(own.topics))
        if self.xchannel is not None:
            self.xchannel.on_released(bundle, reason)
        if delete and self.session is not None:
            self.spawn(self._store("delete", {"path": OWNERSHIP_PREFIX + bundle}))

    def now_ms(self) -> int:
        """Virtual time as the broker's clock reads it (epoch milliseconds)."""
        return EPOCH_MS + int(self.now * 1000)

    # -- resources and reports ------------------------------------------------------------------------------
    def rates(self, t: float) -> tuple[float, float, float, float]:
        """(msgRateIn, msgRateOut, msgThroughputIn, msgThroughputOut) this broker serves at ``t``."""
        f = self.workload.task_factors(t)
        counts = self.task_counts.tobytes()
        cached = self._rates_cache
        # the workload hands out one factors array per stretch of constant rates
        if cached is not None and cached[0] is f and cached[1] == counts:
            return cached[2]
        out = self.workload.task_rates(self.task_counts, t)
        self._rates_cache = (f, counts, out)
        return out

    def _advance_machine(self) -> None:
        self.machine.advance(self.now, self.rates, self.workload.is_steady)

    def _sample_host_usage(self) -> Generator:
        """LinuxBrokerHostUsageImpl: usage from two cumulative samples over the elapsed time in whole seconds."""
        self._advance_machine()
        now_ms = self.now_ms()
        elapsed_s = (now_ms - self._last_sample_ms) // 1000  # Java long division, as the Tencent article shows
        cpu_ns = self.machine.cpu_seconds * 1e9
        delta_ns = cpu_ns - self._last_cpu_ns
        self.cpu_percent = _java_divide(100.0 * delta_ns, elapsed_s) / 1e9
        bin_, bout = self.machine.bytes_in, self.machine.bytes_out
        if self._last_sample_ms:
            self.bw_in_kbps = _java_divide((bin_ - self._last_bytes[0]) * 8 / 1000, elapsed_s)
            self.bw_out_kbps = _java_divide((bout - self._last_bytes[1]) * 8 / 1000, elapsed_s)
        self.elapsed_s = float(elapsed_s)
        self._last_sample_ms, self._last_cpu_ns, self._last_bytes = now_ms, cpu_ns, (bin_, bout)
        self.emit("host_usage_sampled", cpu=percent_usage(self.cpu_percent, 100.0 * self.machine.cores),
                  elapsed_s=float(elapsed_s), bandwidth_in=percent_usage(self.bw_in_kbps, self.machine.nic_kbps),
                  bandwidth_out=percent_usage(self.bw_out_kbps, self.machine.nic_kbps))
        # Reading /proc and the cgroup files takes a few milliseconds of the thread's time.
        yield from self.sleep(float(self.rng("sampler").uniform(0.001, 0.005)))

    def _refresh_report(self) -> None:
        """Bring ``self.report`` up to date (``updateLocalBrokerData``); its ``lastUpdate`` is set when it is
        written (:meth:`_stamped_report`), as Pulsar sets it in ``writeBrokerDataOnZooKeeper``."""
        # The host is not integrated here: the report reads the sampler's usage and the current rates only (the
        # sampler and every traffic change integrate it), and 1,000 brokers refresh every 5 s.
        factors = self.workload.task_factors(self.now)
        inputs = (self.cpu_percent, self.bw_in_kbps, self.bw_out_kbps, factors.tobytes(), self.owned.version,
                  self.task_counts.tobytes())
        if self.report is not None and inputs == self._report_inputs:
            return  # all the report is made of is the same (bundle counts only grow while the set is the same)
        self._report_inputs = inputs
        topics = int(self.task_counts.sum())  # the task counts count the owned bundles' topics
        rates = self.rates(self.now)
        m = self.machine
        self.report = LocalReport(
            cpu=(self.cpu_percent, 100.0 * m.cores),
            memory=(m.heap_mb(topics, rates), m.heap_max_mb),
            direct_memory=(m.direct_mb(rates), m.direct_max_mb),
            bandwidth_in=(self.bw_in_kbps, m.nic_kbps),
            bandwidth_out=(self.bw_out_kbps, m.nic_kbps),
            msg_rate_in=rates[0], msg_rate_out=rates[1], msg_throughput_in=rates[2], msg_throughput_out=rates[3],
            num_topics=topics, num_bundles=len(self.owned), bundle_stats=self._bundle_stats(factors),
            last_update_ms=self.now_ms(),
        )

    def _stamped_report(self) -> LocalReport:
        """The current report with ``lastUpdate`` now, to be written."""
        now_ms = self.now_ms()
        if self.report.last_update_ms != now_ms:
            self.report = self.report.restamped(now_ms)
        return self.report

    def _bundle_stats(self, factors: np.ndarray) -> dict[str, dict[str, Any]]:
        """Per owned bundle: rates, throughputs, topic, producer and consumer counts (NamespaceBundleStats).

        Computed for all bundles at once, and reused while neither the bundles, their topics nor the task rates
        changed (the report task asks every 5 s; a large broker has hundreds of bundles)."""
        owned = self.owned
        # The same bundles (version) with the same total counts mean that no bundle's counts grew.
        key = (factors.tobytes(), owned.version, self.task_counts.tobytes())
        if self._stats_cache is not None and self._stats_cache[0] == key:
            return self._stats_cache[1]
        wl = self.workload
        names = list(owned)
        if names:
            counts = np.stack([owned[b].task_counts for b in names])
            rin = counts * factors
            rout = rin * wl._subs
            cols = np.stack([rin.sum(axis=1), rout.sum(axis=1), rin @ wl._msg_bytes, rout @ wl._msg_bytes,
                             counts @ wl._subs])
            cols = cols.T.tolist()
        else:
            cols = []
        stats = {}
        for b, (r_in, r_out, t_in, t_out, consumers) in zip(names, cols):
            own = owned[b]
            stats[b] = {
                "msgRateIn": r_in, "msgRateOut": r_out, "msgThroughputIn": t_in, "msgThroughputOut": t_out,
                "topics": len(self.bundle_map.topics_of(b)) if not own.topics else len(own.topics),
                "consumerCount": int(round(consumers)), "producerCount": len(own.topics),
            }
        self._stats_cache = (key, stats)
        return stats

    def _write_load_report(self) -> None:
        """LoadReportUpdaterTask: refresh the local data; write it only when the update rule says so."""
        if self.session is None:
            return
        self._refresh_report()
        if self._typed_config is None:
            self._typed_config = PulsarConfig(self.config)
        reason = self.report.needs_update(self.last_written, self.now - self.last_write_t, self._typed_config)
        if reason is None:
            return
        previous = (self.last_written, self.last_write_t)
        r = self.last_written = self._stamped_report()
        self.last_write_t = self.now
        delay = self._report_fault()
        if delay == 0.0:
            # The write fails (the store is unreachable for it): lastData is not updated, so the next run of
            # the task tries again if the update rule still says so.
            self.last_written, self.last_write_t = previous
            self.emit("load_report_lost", reason=reason)
            return
        self.emit("load_report", cpu=r.percent("cpu"), memory=r.percent("memory"),
                  direct_memory=r.percent("direct_memory"), bandwidth_in=r.percent("bandwidth_in"),
                  bandwidth_out=r.percent("bandwidth_out"), msg_rate_in=r.msg_rate_in, msg_rate_out=r.msg_rate_out,
                  msg_throughput_in=r.msg_throughput_in, msg_throughput_out=r.msg_throughput_out,
                  num_bundles=r.num_bundles, num_topics=r.num_topics, score=score_of(r, self.config), reason=reason)
        write = self._store("set", {"path": BROKERS_PREFIX + self.name, "data": r.to_dict(), "ephemeral": True})
        if delay is not None:
            self.emit("load_report_delayed", extra_s=delay)
            self.spawn(_after(self, delay, write))
        else:
            self.spawn(write)

    def _report_fault(self) -> float | None:
        """How a ``report_loss`` fault hits this write: None (it does not), 0.0 (lost) or its delay in seconds."""
        hit = None
        for start, end, probability, extra_s in self.report_faults:
            if start <= self.now < end and (probability >= 1.0 or self.rng("report-loss").random() < probability):
                if extra_s == 0.0:
                    return 0.0
                hit = max(extra_s, hit or 0.0)
        return hit

    # -- faults and GC --------------------------------------------------------------------------------------
    def _gc(self, kind: str, every_s: float, median_s: float, sigma: float) -> Generator[simpy.Event, None, None]:
        rng = self.rng(f"gc-{kind}")
        while True:
            yield from self.sleep(float(rng.exponential(every_s)))
            self.stop_the_world(float(median_s * rng.lognormal(0.0, sigma)), cause=f"gc-{kind}")

    def on_fault(self, kind: str, spec: dict[str, Any]) -> None:
        """The model's faults (see ``clusteremu.agents.pulsar.faults``); the kernel's ``pause`` and ``crash`` otherwise."""
        if kind == "cpu_spike":
            # Another process on the host: it neither stops with the broker nor pauses with its GC.
            self.env.process(self._cpu_spike(spec["cores"], spec["duration_s"]))
        elif kind in ("shutdown", "scale_in"):
            self.spawn(self._shutdown(kind))
        elif kind == "leader_kill":
            # Each broker gets the fault; only one that believes it leads acts, so no agent needs another's state.
            if self.alive and self.lm is not None and self.leader == self.name:
                self.crash("leader_kill")
        elif kind == "gc_storm":
            self.spawn(self._gc_storm(spec))
        elif kind == "report_loss":
            self.report_faults.append((spec["at"], spec["at"] + spec["duration_s"], spec["probability"],
                                       (spec["extra_ms"] or 0.0) / 1000.0))
        elif kind == "scale_out":
            pass  # the broker was created to start at this instant (AgentSpec.start_at); it is booting now
        elif kind == "rolling_restart":
            key = f"{spec['at']}:{spec['label']}:{','.join(spec['agents'])}"
            self.rolling[key] = spec
            if self.rolling_order(spec)[0] == self.name:
                self.env.process(self._rolling_restart(key))
        else:
            super().on_fault(kind, spec)

    def _cpu_spike(self, cores: float, duration: float) -> Generator:
        self._advance_machine()
        self.machine.spike_cores += cores
        self.emit("cpu_spike", cores=cores, duration_s=duration)
        yield self.env.timeout(duration)
        if self.alive:
            self._advance_machine()
        else:  # the broker is down: the host's counters still advance, without traffic
            self.machine.advance(self.now, lambda _t: (0.0, 0.0, 0.0, 0.0))
        self.machine.spike_cores -= cores

    def _gc_storm(self, spec: dict[str, Any]) -> Generator:
        """Stop-the-world pauses starting in [at, at + duration_s): exponential gaps of mean ``every_s``,
        lognormal lengths of median ``pause_s``. Its own keyed stream, so other draws do not shift it."""
        rng = self.rng(f"gc_storm@{spec['at']}:{spec['label']}")
        end = spec["at"] + spec["duration_s"]
        t = self.now
        while True:
            t += float(rng.exponential(spec["every_s"]))
            if t >= end:
                return
            yield self.env.timeout(t - self.now)  # the storm's clock is not stopped by its own pauses
            self.stop_the_world(float(spec["pause_s"] * rng.lognormal(0.0, spec["sigma"])), cause="gc_storm")

    def crash(self, reason: str = "crash") -> None:
        """A crashed broker process: the host's kernel closes its sockets, so clients see their connections
        drop at once; its metadata session expires later, after the session timeout."""
        if self.alive:
            for own in self.owned.values():
                for ti, client in sorted(own.topics.items()):
                    self.send(client, "close", {"topic": self.workload.topics[ti], "reason": "broker_down"})
            if self.xchannel is not None:
                self.xchannel.drop_held("broker_down")
        super().crash(reason)


def _close_reason(reason: str) -> str:
    return "unload" if reason in ("shedding", "split", "transfer", "admin", "shutdown") else "broker_down"


def _after(agent: Agent, delay: float, gen: Generator) -> Generator:
    yield from agent.sleep(delay)
    return (yield from gen)


def _java_divide(numerator: float, denominator: int) -> float:
    """Java's double division by a long that may be 0: +/-Infinity, or NaN for 0/0."""
    if denominator == 0:
        if numerator == 0 or math.isnan(numerator):
            return math.nan
        return math.copysign(math.inf, numerator)
    return numerator / denominator
