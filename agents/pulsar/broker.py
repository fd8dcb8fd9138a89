"""A Pulsar broker: metadata session, registration, leader election, host-usage sampling, load reports,
bundle ownership, lookups, connections, unloads, GC pauses — and, while it is the leader, the load manager.

Timers run on the broker's ``loadManagerExecutor`` (one thread, Java semantics, see ``emulator.executor``): the
host-usage sampler (fixed rate as older brokers and the Tencent article had it, or fixed delay as newer brokers
do — a scenario setting), the 5 s load-report task and, on the leader, the shedding task. A stop-the-world pause
stops all of them, the session heartbeats and request handling at once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Generator

import numpy as np
import simpy

from emulator.agent import Agent
from emulator.messages import Message

from . import events  # noqa: F401
from .load_manager import LoadManager
from .machine import Machine
from .reporting import LocalReport, percent_usage, score_of
from .store import BROKERS_PREFIX, LEADER_PATH, OWNERSHIP_PREFIX, STORE
from .workload import workload_for

#: virtual time 0 as epoch milliseconds, so that a first CPU sample divides by "seconds since the epoch"
EPOCH_MS = 1_700_000_000_000
LOAD_REPORT_UPDATE_MINIMUM_INTERVAL_S = 5.0  # LoadReportUpdaterTask's fixed rate in the modular load manager


@dataclass
class Ownership:
    disabled: bool = False
    topics: dict[int, str] = field(default_factory=dict)  # topic index -> client agent
    task_counts: np.ndarray | None = None


class Broker(Agent):
    kind = "broker"

    # -- start ----------------------------------------------------------------------------------------------
    def on_start(self) -> None:
        p = self.params
        self.config: dict[str, Any] = p["config"]
        self.workload = workload_for(p["namespaces"], p["tasks"])
        self.machine = Machine(p["machine"], p["resource_model"], self.rng("cpu-noise"))
        self.machine._t = self.now
        self.task_counts = np.zeros(len(self.workload.tasks))
        self.owned: dict[str, Ownership] = {}
        self.session: str | None = None
        self.leader: str | None = None
        self.active_brokers: set[str] = set()
        self.lm: LoadManager | None = None
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
        for bundle in self.params.get("initial_bundles", ()):
            yield from self._acquire(bundle, via="initial")
        ex = self.executor_
        interval = (self.params.get("host_usage_interval_s") or 0.0) or \
            self.config["loadBalancerHostUsageCheckIntervalMinutes"] * 60.0
        ex.schedule_periodic(self.params["host_usage_mode"], self._sample_host_usage, 0.0, interval,
                             name="host-usage")
        ex.schedule_at_fixed_rate(self._write_load_report, 0.0, LOAD_REPORT_UPDATE_MINIMUM_INTERVAL_S,
                                  name="load-report")
        yield from self._elect()

    def _open_session(self) -> Generator[Any, Any, bool]:
        timeout = self.config["zooKeeperSessionTimeoutMillis"] / 1000.0
        r = yield from self.call(STORE, "session_open", {"timeout_s": timeout}, timeout=timeout)
        if r is None:
            self.crash("metadata store unreachable at start")
            return False
        self.session = r["session"]
        self.spawn(self._heartbeat(self.session, timeout))
        self._refresh_report()
        yield from self._store("create", {"path": BROKERS_PREFIX + self.name, "data": self.report.to_dict(),
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
        if self.config["zookeeperSessionExpiredPolicy"] == "shutdown":
            self.crash("session expired")
            return
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

    def _become_leader(self, previous: str) -> None:
        self.leader = self.name
        self.emit("leader_elected", previous=previous)
        self.lm = LoadManager(self)
        self.spawn(self.lm.start())

    def _stop_leading(self) -> None:
        if self.lm is not None:
            self.lm.stop()
            self.lm = None

    # -- messages -------------------------------------------------------------------------------------------
    def on_message(self, msg: Message) -> Generator | None:
        kind = msg.kind
        if kind == "lookup":
            return self._lookup(msg)
        if kind == "connect":
            self._connect(msg)
        elif kind == "unload":
            return self._unload(msg)
        elif kind == "notify":
            self._notify(msg.body)
        return None

    def _notify(self, body: dict) -> None:
        path = body["path"]
        if path == LEADER_PATH:
            if body["change"] == "deleted":
                previous, self.leader = self.leader, None
                if self.session is not None:
                    self.spawn(self._elect_after(previous or ""))
            else:
                self.leader = body["data"]
        elif path.startswith(BROKERS_PREFIX) and self.lm is not None:
            self.lm.on_broker_report(path[len(BROKERS_PREFIX):], body["change"], body["data"])

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
        bundle = self.workload.bundles[self.workload.topic_bundle[self.workload.topic_index[topic]]]
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
        r = yield from self._store("create", {"path": OWNERSHIP_PREFIX + bundle,
                                              "data": {"broker": self.name, "disabled": False}, "ephemeral": True})
        if r is None:
            return None
        if not r["ok"]:
            return r["data"]["broker"]
        if bundle not in self.owned:
            self.owned[bundle] = Ownership(task_counts=np.zeros(len(self.workload.tasks)))
            self.emit("bundle_owned", bundle=bundle, via=via)
        return self.name

    def _connect(self, msg: Message) -> None:
        topic = msg.body["topic"]
        ti = self.workload.topic_index[topic]
        bundle = self.workload.bundles[self.workload.topic_bundle[ti]]
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
        if delete and self.session is not None:
            self.spawn(self._store("delete", {"path": OWNERSHIP_PREFIX + bundle}))

    def now_ms(self) -> int:
        """Virtual time as the broker's clock reads it (epoch milliseconds)."""
        return EPOCH_MS + int(self.now * 1000)

    # -- resources and reports ------------------------------------------------------------------------------
    def rates(self, t: float) -> tuple[float, float, float, float]:
        """(msgRateIn, msgRateOut, msgThroughputIn, msgThroughputOut) this broker serves at ``t``."""
        f = self.workload.task_factors(t)
        rin = self.task_counts * f
        rout = rin * self.workload._subs
        b = self.workload._msg_bytes
        return float(rin.sum()), float(rout.sum()), float((rin * b).sum()), float((rout * b).sum())

    def _advance_machine(self) -> None:
        self.machine.advance(self.now, self.rates)

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
        self._advance_machine()
        wl = self.workload
        topics = sum(len(o.topics) for o in self.owned.values())
        rates = self.rates(self.now)
        factors = wl.task_factors(self.now)
        stats = {}
        for bundle, own in self.owned.items():
            rin = own.task_counts * factors
            rout = rin * wl._subs
            stats[bundle] = {
                "msgRateIn": float(rin.sum()), "msgRateOut": float(rout.sum()),
                "msgThroughputIn": float((rin * wl._msg_bytes).sum()),
                "msgThroughputOut": float((rout * wl._msg_bytes).sum()),
                "topics": len(wl.bundle_topics[wl.bundle_index[bundle]]) if not own.topics else len(own.topics),
                "consumerCount": int(sum(wl.tasks[int(wl.topic_task[t])].subscriptions for t in own.topics)),
                "producerCount": len(own.topics),
            }
        m = self.machine
        self.report = LocalReport(
            cpu=(self.cpu_percent, 100.0 * m.cores),
            memory=(m.heap_mb(topics, rates), m.heap_max_mb),
            direct_memory=(m.direct_mb(rates), m.direct_max_mb),
            bandwidth_in=(self.bw_in_kbps, m.nic_kbps),
            bandwidth_out=(self.bw_out_kbps, m.nic_kbps),
            msg_rate_in=rates[0], msg_rate_out=rates[1], msg_throughput_in=rates[2], msg_throughput_out=rates[3],
            num_topics=topics, num_bundles=len(self.owned), bundle_stats=stats,
            last_update_ms=self.now_ms(),
        )

    def _write_load_report(self) -> None:
        """LoadReportUpdaterTask: refresh the local data; write it only when the update rule says so."""
        if self.session is None:
            return
        self._refresh_report()
        reason = self.report.needs_update(self.last_written, self.now - self.last_write_t, self.config)
        if reason is None:
            return
        self.last_written = self.report
        self.last_write_t = self.now
        r = self.report
        self.emit("load_report", cpu=r.percent("cpu"), memory=r.percent("memory"),
                  direct_memory=r.percent("direct_memory"), bandwidth_in=r.percent("bandwidth_in"),
                  bandwidth_out=r.percent("bandwidth_out"), msg_rate_in=r.msg_rate_in, msg_rate_out=r.msg_rate_out,
                  msg_throughput_in=r.msg_throughput_in, msg_throughput_out=r.msg_throughput_out,
                  num_bundles=r.num_bundles, num_topics=r.num_topics, score=score_of(r, self.config), reason=reason)
        self.spawn(self._store("set", {"path": BROKERS_PREFIX + self.name, "data": r.to_dict(), "ephemeral": True}))

    # -- faults and GC --------------------------------------------------------------------------------------
    def _gc(self, kind: str, every_s: float, median_s: float, sigma: float) -> Generator[simpy.Event, None, None]:
        rng = self.rng(f"gc-{kind}")
        while True:
            yield from self.sleep(float(rng.exponential(every_s)))
            self.stop_the_world(float(median_s * rng.lognormal(0.0, sigma)), cause=f"gc-{kind}")

    def on_fault(self, kind: str, spec: dict[str, Any]) -> None:
        if kind == "cpu_spike":
            self.spawn(self._cpu_spike(spec["cores"], spec["duration_s"]))
        else:
            super().on_fault(kind, spec)

    def _cpu_spike(self, cores: float, duration: float) -> Generator:
        self._advance_machine()
        self.machine.spike_cores += cores
        self.emit("cpu_spike", cores=cores, duration_s=duration)
        yield self.env.timeout(duration)  # another process on the host: not stopped by our GC
        self._advance_machine()
        self.machine.spike_cores -= cores

    def crash(self, reason: str = "crash") -> None:
        """A crashed broker process: the host's kernel closes its sockets, so clients see their connections
        drop at once; its metadata session expires later, after the session timeout."""
        if self.alive:
            for own in self.owned.values():
                for ti, client in sorted(own.topics.items()):
                    self.send(client, "close", {"topic": self.workload.topics[ti], "reason": "broker_down"})
        super().crash(reason)


def _close_reason(reason: str) -> str:
    return "unload" if reason in ("shedding", "split", "transfer", "admin") else "broker_down"


def _java_divide(numerator: float, denominator: int) -> float:
    """Java's double division by a long that may be 0: +/-Infinity, or NaN for 0/0."""
    if denominator == 0:
        if numerator == 0 or math.isnan(numerator):
            return math.nan
        return math.copysign(math.inf, numerator)
    return numerator / denominator
