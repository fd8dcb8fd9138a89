"""Nimbus: a JVM agent that contends for leadership on ZooKeeper and, while it leads, takes topology submissions
and kills and schedules every ``nimbus.monitor.freq.secs``.

Components of :class:`Nimbus`:

* ``store``: its ZooKeeper session (the kernel's :class:`~clusteremu.emulator.election.MetadataSession`,
  ``storm.zookeeper.session.timeout``, its pings a kernel lease) and ``election``: the kernel's
  :class:`~clusteremu.emulator.election.LeaderElection` on :data:`~.store.LEADER_PATH` (Storm: Curator's leader
  latch) — the same mechanism as Pulsar's brokers;
* its copy of ZooKeeper, kept by watches: the topologies (``StormBase``), the assignments, each supervisor's
  part of them; every Nimbus keeps it, so a new leader schedules at once. The supervisors' heartbeats
  (``SupervisorInfo``) are read once at the start of each round (Storm's ``allSupervisorInfo``), not watched. After a round the leader writes the changed assignments, then the part of each supervisor
  whose part changed (what that supervisor runs), which it also pushes to that supervisor;
* the ``timer`` executor (Storm's ``StormTimer``: fixed delay by default, a scenario setting) that runs
  ``mkAssignments`` every ``nimbus.monitor.freq.secs`` from the start; a Nimbus that does not lead skips it;
* supervisor liveness: a supervisor is alive while its ephemeral node exists and its last heartbeat (as read at
  the round) is at most ``nimbus.supervisor.timeout.secs`` old; the leader writes the changes it sees at each
  round;
* submissions (``submit_topology``), rebalances (``rebalance_topology``) and kills (``kill_topology``), answered
  only by the leader. A rebalance marks the topology rebalancing and, ``wait_s`` later
  (``topology.message.timeout.secs``), runs a round on the timer's thread that places all its executors afresh
  (Storm's ``doRebalance``: ``mkAssignments(topologyId)``); a kill marks it killed and removes it ``wait_s``
  later. A new leader finishes the rebalances and kills it inherits.

GC pauses and ``gc_storm`` come from :class:`~clusteremu.emulator.jvm.JvmAgent`: a pause stops the timer, the
session pings and the handling of requests. Faults: ``leader_kill`` (the Nimbus that believes it leads crashes)
and ``restart`` (crash, start again ``duration_s`` later).
"""
from __future__ import annotations

from typing import Any, Generator

from clusteremu.emulator.agent import AgentContext
from clusteremu.emulator.election import LeaderElection, MetadataSession, StoreProtocol
from clusteremu.emulator.jvm import JvmAgent
from clusteremu.emulator.messages import Message
from clusteremu.emulator.trace.kinds import declare
from clusteremu.strategies.storm.config import (
    NIMBUS_MONITOR_FREQ_SECS,
    NIMBUS_SUPERVISOR_TIMEOUT_SECS,
    TOPOLOGY_PRIORITY,
    TOPOLOGY_SCHEDULER_STRATEGY,
)
from clusteremu.strategies.storm.topology import Topology

from .assignments import Known, RoundOutcome, mk_assignments
from .lifecycle import restart_later
from .store import (
    ASSIGNMENTS_PREFIX,
    LEADER_PATH,
    NODE_ASSIGNMENTS_PREFIX,
    STORE,
    STORMS_PREFIX,
    SUPERVISORS_PREFIX,
    node_assignments_path,
    node_of_assignments_path,
)
from .topologies import build_topology, component_summary

__all__ = ["Nimbus", "ZK_SESSION_TIMEOUT", "KILL_WAIT"]

#: Storm keys the model reads beyond the scheduler's (``defaults.yaml`` values in :mod:`.model`)
ZK_SESSION_TIMEOUT = "storm.zookeeper.session.timeout"
KILL_WAIT = "topology.message.timeout.secs"

declare("nimbus_leader_elected", "This Nimbus won the leader latch; `previous` is the leader it knew of, or \"\".",
        __name__, previous="str")
declare("nimbus_leadership_lost", "This Nimbus stopped leading: its ZooKeeper session expired (`cause`).", __name__,
        cause="str")
declare("topology_submitted", "The leader Nimbus accepted a topology (`StormBase` written): `topology` its id, "
        "`topology_name`, `user` (topology.submitter.user), `priority` (topology.priority, 0 most important), "
        "`strategy` (topology.scheduler.strategy), `executors`, `components` `[{id, type, parallelism, inputs}]` "
        "(the inputs are the topology's edges), what its executors request: `cpu` (% of a core), `memory_mb`, "
        "`generic` (by name).",
        __name__, topology="str", topology_name="str", user="str", priority="int", strategy="str", executors="int",
        components="list", cpu="float", memory_mb="float", generic="dict")
declare("topology_killed", "The leader Nimbus marked a topology killed; it keeps its workers until it is removed "
        "`wait_s` later.", __name__, topology="str", topology_name="str", user="str", wait_s="float")
declare("topology_rebalancing", "The leader Nimbus accepted a rebalance of a topology: its executors are placed "
        "afresh `wait_s` later.", __name__, topology="str", topology_name="str", user="str", wait_s="float")
declare("topology_removed", "The leader Nimbus removed a killed topology and its assignment.", __name__,
        topology="str", topology_name="str", user="str")
declare("supervisor_alive", "The leader Nimbus sees supervisor `supervisor` alive (`cause`: `registered` — its "
        "node appeared —, `heartbeat_resumed` — its node stayed and its heartbeats came back —, `leader_start` — "
        "the first view of a new leader). Written at a scheduling round.", __name__,
        supervisor="str", host="str", rack="str", cause="str")
declare("supervisor_dead", "The leader Nimbus deems supervisor `supervisor` dead at a scheduling round (`cause`: "
        "`node_deleted` — its ZooKeeper session expired — or `heartbeat_timeout` — its last heartbeat is older "
        "than nimbus.supervisor.timeout.secs); `silent_s` seconds since its last heartbeat this Nimbus saw (-1: none); "
        "`hosted` the topologies that had executors on it in the assignments as the round found them, "
        "`hosted_executors` how many executors.",
        __name__, supervisor="str", cause="str", silent_s="float", hosted="list", hosted_executors="int")


class Nimbus(JvmAgent):
    kind = "nimbus"

    def __init__(self, name: str, ctx: AgentContext) -> None:
        super().__init__(name, ctx)
        self.boots = 0  # outlives a restart of the process
        self.submitted = 0  # Nimbus's submittedCount, part of a topology id

    # -- start ----------------------------------------------------------------------------------------------
    def on_start(self) -> None:
        p = self.params
        self.conf: dict[str, Any] = p["config"]
        self.boots += 1
        self.store = MetadataSession(self, StoreProtocol(STORE), timeout_s=self.conf[ZK_SESSION_TIMEOUT] / 1000.0,
                                     op_timeout_s=p["op_timeout_s"], on_lost=self._session_lost, lease=True)
        self.election = LeaderElection(self.store, LEADER_PATH, on_elected=self._elected)
        self.storms: dict[str, dict[str, Any]] = {}
        self.assignments: dict[str, dict[str, Any]] = {}
        self.node_parts: dict[str, dict[str, Any]] = {}  # supervisor -> {topology id: its workers there}
        self.sup_info: dict[str, dict[str, Any]] = {}
        self.sup_mzxid: dict[str, int] = {}  # supervisor -> its node's last write (ZooKeeper's Stat.mzxid)
        self.capacity: dict[str, tuple[int, tuple]] = {}  # supervisor -> (mzxid, its part of the round key)
        self.last_heartbeat: dict[str, float] = {}  # kept after a node goes: how long a dead one was silent
        self.statuses: dict[str, str] = {}
        self.cache: dict[str, Topology] = {}  # the scheduler's view of each topology, built once
        self.view: dict[str, bool] | None = None  # supervisor id -> alive, as the leader last wrote it
        self.view_nodes: set[str] = set()  # the supervisors' nodes at the leader's last round
        self.leading = False
        self.rounds = 0
        self.changes = 0  # bumped at every change of storms or assignments: a round's inputs changed
        self.memo: tuple[Any, dict[str, str], RoundOutcome] | None = None  # the last round: inputs, statuses, out
        self.parts_version = 0  # bumped at every change of node_parts seen through the watch
        self.published: tuple[int, int] | None = None  # (changes, parts_version) at the last full publication
        self.timer = self.executor("timer")
        self.timer.schedule_periodic(p["timer_mode"], self._monitor, 0.0, float(self.conf[NIMBUS_MONITOR_FREQ_SECS]),
                                     name="mk-assignments")
        self.start_gc(p["gc"])
        self.spawn(self._boot())

    def _boot(self) -> Generator:
        """Open the session, read and watch the cluster state, then join the leader latch."""
        while not (yield from self.store.open()):
            yield from self.sleep(self.params["op_timeout_s"])
        for prefix in (STORMS_PREFIX, ASSIGNMENTS_PREFIX, NODE_ASSIGNMENTS_PREFIX):
            r = yield from self.store.op("watch", {"prefix": prefix})
            if r is None:
                return  # the session is gone already; _session_lost starts again
            for path, data in r["nodes"].items():
                self._apply(path, "created", data)
        yield from self.election.run()

    @property
    def is_leader(self) -> bool:
        return self.leading and self.election.is_leader

    def _elected(self, previous: str) -> None:
        self.leading = True
        self.view = None
        self.published = None
        self.emit("nimbus_leader_elected", previous=previous)
        for tid, base in sorted(self.storms.items()):  # a new leader finishes the kills and rebalances it inherits
            if base["status"] == "killed":
                self.spawn(self._remove_later(tid, max(0.0, base["remove_at"] - self.now)))
            elif base["status"] == "rebalancing":
                self._rebalance_later(tid, max(0.0, base["rebalance_at"] - self.now))

    def _session_lost(self) -> None:
        if self.leading:
            self.leading = False
            self.emit("nimbus_leadership_lost", cause="session_expired")
        self.election.forget()
        self.spawn(self._boot())

    # -- ZooKeeper view -------------------------------------------------------------------------------------
    def on_message(self, msg: Message) -> Generator | None:
        kind = msg.kind
        if kind == "notify":
            b = msg.body
            if b["path"] == LEADER_PATH:
                self.election.on_notify(b["change"], b["data"])
                if self.leading and not self.election.is_leader:
                    self.leading = False
                    self.emit("nimbus_leadership_lost", cause="leader_node_changed")
            else:
                self._apply(b["path"], b["change"], b["data"])
            return None
        if kind == "submit_topology":
            return self._submit(msg)
        if kind == "kill_topology":
            return self._kill(msg)
        if kind == "rebalance_topology":
            return self._rebalance(msg)
        return None

    def _apply(self, path: str, change: str, data: Any) -> None:
        if path.startswith(NODE_ASSIGNMENTS_PREFIX):
            node = node_of_assignments_path(path)
            if change == "deleted":
                self.node_parts.pop(node, None)
            else:
                self.node_parts[node] = data["parts"]
            self.parts_version += 1
            return
        for prefix, table in ((STORMS_PREFIX, self.storms), (ASSIGNMENTS_PREFIX, self.assignments)):
            if path.startswith(prefix):
                key = path[len(prefix):]
                if change == "deleted":
                    table.pop(key, None)
                    self.changes += 1
                    if table is self.storms:
                        self.cache.pop(key, None)
                        self.statuses.pop(key, None)
                else:
                    table[key] = data
                    self.changes += 1
                return

    # -- scheduling -----------------------------------------------------------------------------------------
    def _monitor(self) -> Generator | None:
        """The ``mkAssignments`` timer task: only the leader schedules."""
        if not self.is_leader:
            return None
        return self._mk_assignments()

    def _alive(self) -> dict[str, dict[str, Any]]:
        """The supervisors deemed alive now; the changes since the last round are written to the trace."""
        timeout = float(self.conf[NIMBUS_SUPERVISOR_TIMEOUT_SECS])
        now = self.now
        alive = {s: info for s, info in sorted(self.sup_info.items()) if now - info["time"] <= timeout}
        first = self.view is None
        view = self.view or {}
        if not first and alive.keys() == view.keys() and self.sup_info.keys() == self.view_nodes:
            return alive  # the same supervisors alive, the same nodes: nothing to write
        for sid in sorted(set(view) | set(self.sup_info)):
            was, is_ = view.get(sid, False), sid in alive
            if is_ and (first or not was):
                info = alive[sid]
                cause = "leader_start" if first else "heartbeat_resumed" if sid in self.view_nodes else "registered"
                self.emit("supervisor_alive", supervisor=sid, host=info["host"], rack=info["rack"] or "", cause=cause)
            elif was and not is_:
                last = self.last_heartbeat.get(sid)
                hosted = {tid: sum(len(w[5]) for w in a["workers"] if w[0] == sid)
                          for tid, a in sorted(self.assignments.items())}
                self.emit("supervisor_dead", supervisor=sid,
                          cause="heartbeat_timeout" if sid in self.sup_info else "node_deleted",
                          silent_s=-1.0 if last is None else now - last,
                          hosted=[tid for tid, n in hosted.items() if n], hosted_executors=sum(hosted.values()))
        self.view = {s: True for s in alive}
        self.view_nodes = set(self.sup_info)
        return alive

    def _read_supervisors(self) -> Generator[Any, Any, bool]:
        """Read every ``SupervisorInfo`` (Storm's ``allSupervisorInfo`` at the start of ``mkAssignments``): one
        read per round rather than a watch, so that a heartbeat costs ZooKeeper one write and no notification;
        False when the session is gone."""
        r = yield from self.store.op("list", {"prefix": SUPERVISORS_PREFIX, "stat": True})
        if r is None:
            return False
        n = len(SUPERVISORS_PREFIX)
        self.sup_info = {path[n:]: data for path, data in r["nodes"].items()}
        self.sup_mzxid = {path[n:]: z for path, z in r["mzxid"].items()}
        for sid, info in self.sup_info.items():
            self.last_heartbeat[sid] = info["time"]
        return True

    def _mk_assignments(self, scratch: str | None = None) -> Generator:
        if not (yield from self._read_supervisors()) or not self.is_leader:
            return
        self.rounds += 1
        alive = self._alive()
        out = self._unchanged_round(alive, scratch)
        if out is None:
            key = self._round_key(alive, scratch)
            statuses = self.statuses
            out = mk_assignments(Known(alive, self.storms, self.assignments, statuses, self.cache), self.conf,
                                 self.now, self.rounds, scratch)
            self.memo = (key, statuses, out)
        self.statuses = out.statuses
        for kind, fields in out.events:
            self.emit(kind, **fields)
        for tid, data in out.writes.items():  # local copy first: the watch echoes the same data back
            if data is None:
                self.assignments.pop(tid, None)
                self.changes += 1
            else:
                self.assignments[tid] = data
                self.changes += 1
        for tid, data in sorted(out.writes.items()):
            if data is None:
                r = yield from self.store.op("delete", {"path": ASSIGNMENTS_PREFIX + tid})
            else:
                r = yield from self.store.op("set", {"path": ASSIGNMENTS_PREFIX + tid, "data": data,
                                                     "ephemeral": False})
            if r is None:
                return  # session lost mid-way: the next leader reads what was written
        yield from self._publish_node_parts()

    def _round_key(self, alive: dict[str, dict[str, Any]], scratch: str | None) -> tuple:
        """What a round reads besides the statuses: the topologies and assignments (by their change count), the
        live supervisors' capacities (not their heartbeat times) and the rebalanced topology. A supervisor's part
        is computed again only when its node was rewritten since (its ``mzxid`` moved)."""
        capacity, mzxid, parts = self.capacity, self.sup_mzxid, []
        for sid, info in alive.items():
            c = capacity.get(sid)
            if c is None or c[0] != mzxid[sid]:
                c = capacity[sid] = (mzxid[sid], (sid, info["host"], info["rack"], info["cpu"], info["memory_mb"],
                                                  tuple(sorted(info["generic"].items())), tuple(info["ports"])))
            parts.append(c[1])
        return (self.changes, scratch, tuple(parts))

    def _unchanged_round(self, alive: dict[str, dict[str, Any]], scratch: str | None) -> RoundOutcome | None:
        """The outcome of this round when it is the last round's again, else None. ``mk_assignments`` is a pure
        function of the round's inputs (the virtual time enters only through topology uptimes, which the priority
        strategies compare with each other only, so a shift leaves the order as it was); when the last round
        changed nothing (no write, the same statuses) and nothing else changed since, this round would compute
        the same outcome: its events are the same but for the round number."""
        if self.memo is None or scratch is not None:
            return None
        key, statuses, out = self.memo
        if out.writes or out.statuses != statuses or statuses != self.statuses or key != self._round_key(alive, None):
            return None
        n = self.rounds
        return RoundOutcome({}, out.statuses, [(kind, {**fields, "round": n}) for kind, fields in out.events])

    def _publish_node_parts(self) -> Generator:
        """Write, then push, the part of every supervisor whose part of the assignments changed; ``at`` (the write
        time) lets a supervisor tell a newer part from an older one that arrives late. The parts are a function
        of the assignments and of the parts known: when neither changed since the last full pass, none did."""
        key = (self.changes, self.parts_version)
        if self.published == key:
            return
        parts: dict[str, dict[str, Any]] = {}
        for tid, data in sorted(self.assignments.items()):
            for node, port, cpu, on_heap, off_heap, execs in data["workers"]:
                parts.setdefault(node, {}).setdefault(tid, []).append([port, cpu, on_heap, off_heap, execs])
        for node in sorted(set(parts) | set(self.node_parts)):
            new = parts.get(node, {})
            if new == self.node_parts.get(node, {}):
                continue
            self.node_parts[node] = new
            data = {"at": self.now, "parts": new}
            r = yield from self.store.op("set", {"path": node_assignments_path(node), "data": data,
                                                 "ephemeral": False})
            if r is None:
                return
            self.send(node, "assignments", data)
        if (self.changes, self.parts_version) == key:
            self.published = key
    # -- submissions and kills ------------------------------------------------------------------------------
    def _not_leader(self, msg: Message) -> bool:
        if self.is_leader:
            return False
        self.reply(msg, {"ok": False, "error": "not_leader", "leader": self.election.leader or ""})
        return True

    def _by_name(self, name: str) -> str | None:
        for tid, base in sorted(self.storms.items()):
            if base["name"] == name:
                return tid
        return None

    def _submit(self, msg: Message) -> Generator:
        if self._not_leader(msg):
            return
        b = msg.body
        existing = self._by_name(b["name"])
        if existing is not None:
            self.reply(msg, {"ok": False, "error": "already_alive", "topology": existing})
            return
        self.submitted += 1
        launch = int(self.now)
        tid = f"{b['name']}-{self.submitted}-{launch}"
        base = {"id": tid, "name": b["name"], "user": b["user"], "launch_secs": launch, "status": "active",
                "remove_at": 0.0, "rebalance_at": 0.0, "conf": b["conf"], "components": b["components"]}
        td = build_topology(base, self.conf)  # what the scheduler will see (also checks it)
        r = yield from self.store.op("create", {"path": STORMS_PREFIX + tid, "data": base, "ephemeral": False})
        if r is None or not r["ok"]:
            self.reply(msg, {"ok": False, "error": "store"})
            return
        self.storms[tid] = base
        self.changes += 1
        total = td.total_request()
        self.emit("topology_submitted", topology=tid, topology_name=td.name, user=td.user or "",
                  priority=td.conf[TOPOLOGY_PRIORITY],
                  strategy=td.conf[TOPOLOGY_SCHEDULER_STRATEGY], executors=len(td.executors),
                  components=component_summary(base), cpu=td.total_requested_cpu(),
                  memory_mb=td.total_requested_memory(), generic=dict(sorted(total.generic.items())))
        self.reply(msg, {"ok": True, "topology": tid})

    def _kill(self, msg: Message) -> Generator:
        if self._not_leader(msg):
            return
        tid = self._by_name(msg.body["name"])
        if tid is None:
            self.reply(msg, {"ok": False, "error": "not_alive"})
            return
        base = self.storms[tid]
        if base["status"] == "killed":
            self.reply(msg, {"ok": True, "topology": tid})
            return
        wait = msg.body["wait_s"]
        if wait is None:
            wait = float(self.conf[KILL_WAIT])
        base = {**base, "status": "killed", "remove_at": self.now + wait}
        r = yield from self.store.op("set", {"path": STORMS_PREFIX + tid, "data": base, "ephemeral": False})
        if r is None:
            self.reply(msg, {"ok": False, "error": "store"})
            return
        self.storms[tid] = base
        self.changes += 1
        self.emit("topology_killed", topology=tid, topology_name=base["name"], user=base["user"], wait_s=float(wait))
        self.reply(msg, {"ok": True, "topology": tid})
        yield from self._remove_later(tid, wait)

    def _rebalance(self, msg: Message) -> Generator:
        if self._not_leader(msg):
            return
        tid = self._by_name(msg.body["name"])
        if tid is None or self.storms[tid]["status"] == "killed":
            self.reply(msg, {"ok": False, "error": "not_alive"})
            return
        base = self.storms[tid]
        if base["status"] == "rebalancing":
            self.reply(msg, {"ok": True, "topology": tid})
            return
        wait = msg.body["wait_s"]
        if wait is None:
            wait = float(self.conf[KILL_WAIT])
        base = {**base, "status": "rebalancing", "rebalance_at": self.now + wait}
        r = yield from self.store.op("set", {"path": STORMS_PREFIX + tid, "data": base, "ephemeral": False})
        if r is None:
            self.reply(msg, {"ok": False, "error": "store"})
            return
        self.storms[tid] = base
        self.changes += 1
        self.emit("topology_rebalancing", topology=tid, topology_name=base["name"], user=base["user"],
                  wait_s=float(wait))
        self.reply(msg, {"ok": True, "topology": tid})
        self._rebalance_later(tid, wait)

    def _rebalance_later(self, tid: str, wait: float) -> None:
        # on the timer's thread, as Storm's delayed REBALANCE event: never inside another round
        self.timer.schedule(lambda: self._do_rebalance(tid), wait, name="rebalance")

    def _do_rebalance(self, tid: str) -> Generator | None:
        base = self.storms.get(tid)
        if base is None or base["status"] != "rebalancing" or not self.is_leader:
            return None
        return self._rebalance_round(tid, {**base, "status": "active"})

    def _rebalance_round(self, tid: str, base: dict[str, Any]) -> Generator:
        r = yield from self.store.op("set", {"path": STORMS_PREFIX + tid, "data": base, "ephemeral": False})
        if r is None:
            return
        self.storms[tid] = base
        self.changes += 1
        yield from self._mk_assignments(scratch=tid)

    def _remove_later(self, tid: str, wait: float) -> Generator:
        yield from self.sleep(wait)
        base = self.storms.get(tid)
        if base is None or not self.is_leader:
            return
        r = yield from self.store.op("delete", {"path": STORMS_PREFIX + tid})
        if r is None:
            return
        self.storms.pop(tid, None)
        self.changes += 1
        self.cache.pop(tid, None)
        self.statuses.pop(tid, None)
        self.emit("topology_removed", topology=tid, topology_name=base["name"], user=base["user"])
        if tid in self.assignments:
            self.assignments.pop(tid)
            self.changes += 1
            r = yield from self.store.op("delete", {"path": ASSIGNMENTS_PREFIX + tid})
            if r is not None:
                yield from self._publish_node_parts()

    # -- faults ---------------------------------------------------------------------------------------------
    def on_fault(self, kind: str, spec: dict[str, Any]) -> None:
        """``leader_kill``: crash if this Nimbus leads; ``restart``: crash now, start ``duration_s`` later; the
        JVM's and the kernel's kinds otherwise."""
        if kind == "leader_kill":
            if self.alive and self.is_leader:
                self.crash("leader_kill")
        elif kind == "restart":
            restart_later(self, spec["duration_s"])
        else:
            super().on_fault(kind, spec)
