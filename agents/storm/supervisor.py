"""A Storm supervisor: a JVM agent that heartbeats its ``SupervisorInfo`` to ZooKeeper and runs the workers the
leader Nimbus assigns to it.

Components of :class:`Supervisor`:

* ``store``: its ZooKeeper session (``storm.zookeeper.session.timeout``); its ephemeral node
  ``/storm/supervisors/<id>`` carries the ``SupervisorInfo`` (host, rack, capacity —
  ``supervisor.cpu.capacity``, ``supervisor.memory.capacity.mb``, ``supervisor.resources.map``, the slots'
  ports — the heartbeat time and what its workers use). When the session expires the node goes; the supervisor
  opens a new session and registers again, its workers still running.
* the heartbeat (Storm's ``SupervisorHeartbeat`` every ``supervisor.heartbeat.frequency.secs``) rewrites the
  node. Its only steady-state effect is the node's ``time`` (and the session's last contact), so it is a kernel
  :class:`~clusteremu.emulator.lease.Lease` on that field in the session's scope: Nimbus reads the time of the last
  heartbeat the store would have received, and a pause, a crash or a network fault stops it when it would stop
  the real heartbeats. The ``SupervisorInfo`` itself is written at the first heartbeat after what it reports (its
  workers) changed. The heartbeats are on a fixed grid from the registration, whatever ``timer_mode``: a
  fixed-delay timer's drift (a write's round trip per beat) is below the lease's bound (one period);
* ``ReadClusterState``: its part of the assignments, pushed by the leader Nimbus when it changes (Storm 2.x's
  ``sendSupervisorAssignments``) and read from ZooKeeper (:func:`~.store.node_assignments_path`) at start and
  every 10 s (Storm's ``SynchronizeAssignments``), a poll lease: the store delivers the part at the first of
  those reads after it changed, so a supervisor that missed a push (a partition, a dropped message) catches up.
  On every change it kills the workers no longer assigned to it and launches the new ones, which run after
  ``worker_launch_s``. A worker carries its load as the CPU and memory its assignment charges it.

A crash is a host crash: the workers go with the supervisor. GC pauses and ``gc_storm`` stop the heartbeats and
the assignment handling (:class:`~clusteremu.emulator.jvm.JvmAgent`); ``restart`` crashes it and starts it again.
A ``rolling_restart`` (:class:`~clusteremu.agents.common.lifecycle.RollingRestarts`) stops it gracefully
(:meth:`Supervisor.shutdown`): the daemon closes its ZooKeeper session, so its node goes at once, and exits; its
workers are processes of their own and keep running. Started again, it takes its part of the assignments and
keeps the workers still assigned to it, killing the others.
"""
from __future__ import annotations

from typing import Any, Generator

from clusteremu.agents.common.lifecycle import ROLLING_RESTART, TURN, RollingRestarts
from clusteremu.emulator.agent import AgentContext
from clusteremu.emulator.election import MetadataSession, StoreProtocol
from clusteremu.emulator.jvm import JvmAgent
from clusteremu.emulator.lease import POLL
from clusteremu.emulator.messages import Message
from clusteremu.emulator.trace.kinds import declare
from clusteremu.strategies.storm.config import SUPERVISOR_HEARTBEAT_FREQUENCY_SECS

from .lifecycle import restart_later
from .nimbus import ZK_SESSION_TIMEOUT
from .random_workload import draw_capacity
from .store import STORE, SUPERVISORS_PREFIX, node_assignments_path

__all__ = ["SYNC_PERIOD_S", "Supervisor"]

#: Storm's ``SynchronizeAssignments`` period (hard-coded in ``Supervisor.launch``)
SYNC_PERIOD_S = 10.0

declare("supervisor_registered", "The supervisor opened a ZooKeeper session and created its node (`cause`: "
        "`start`, `restart` — the process started again —, `session_expired` — registering again after its "
        "session expired).", __name__,
        session="str", cause="str")
declare("supervisor_heartbeat", "The supervisor rewrote its `SupervisorInfo` at heartbeat `n` of its registration "
        "because what it reports changed since it last wrote it: `slots_used` workers, `cpu_used` (% of a core) and "
        "`memory_used_mb` charged to them. The heartbeats in between only keep the node's time (a lease); they are "
        "not traced.", __name__,
        n="int", slots_used="int", cpu_used="float", memory_used_mb="float")
declare("supervisor_stopping", "The supervisor daemon stops gracefully (`cause`: `rolling_restart`): it closes its "
        "ZooKeeper session (its node goes at once) and exits; its `running_workers` keep running.", __name__,
        cause="str", running_workers="int")
declare("supervisor_rolling_restart_done", "The last supervisor of a rolling restart is back (`supervisors`: how "
        "many were restarted).", __name__, supervisors="int")
declare("worker_launched", "A worker of `topology` runs on this supervisor's `port` (launched `worker_launch_s` "
        "after its assignment arrived) with `executors`, charged `cpu` (% of a core) and `memory_mb`.", __name__,
        topology="str", port="int", executors="int", cpu="float", memory_mb="float")
declare("worker_killed", "The supervisor killed its running worker of `topology` on `port` (`reason`: "
        "`unassigned` — no longer in the assignment — or `reassigned` — the slot's executors changed); a worker "
        "still starting is dropped without an event (it has no `worker_launched`).", __name__,
        topology="str", port="int", reason="str")


class Supervisor(JvmAgent):
    kind = "supervisor"

    def __init__(self, name: str, ctx: AgentContext) -> None:
        super().__init__(name, ctx)
        self.boots = 0  # outlives a restart of the process
        self.kept: dict[int, dict[str, Any]] = {}  # the workers left running by a graceful stop
        self.rolling = RollingRestarts(self, members=self._all_supervisors,
                                       on_done=lambda n: self.emit("supervisor_rolling_restart_done", supervisors=n))

    def on_start(self) -> None:
        self.boots += 1
        p = self.params
        if self.boots == 1:  # a random capacity is the host's: drawn once, on the supervisor's own stream
            cpu, mem = draw_capacity(self.rng("capacity"), p["random_capacity"]) if p.get("random_capacity") \
                else (None, None)
            self.cpu = p["cpu"] if cpu is None else cpu
            self.memory_mb = p["memory_mb"] if mem is None else mem
        self.conf: dict[str, Any] = p["config"]
        self.store = MetadataSession(self, StoreProtocol(STORE), timeout_s=self.conf[ZK_SESSION_TIMEOUT] / 1000.0,
                                     op_timeout_s=p["op_timeout_s"], on_lost=self._session_lost, lease=True)
        # port -> {topology, executors, cpu, memory_mb, running}; a graceful stop left its workers running
        self.workers: dict[int, dict[str, Any]] = self.kept
        self.kept = {}
        self.stopping: str | None = None  # the cause of a graceful stop in progress
        self.booted = self.env.event()
        self.assigned: dict[str, dict[int, dict[str, Any]]] = {}  # topology id -> its workers here, by port
        self.assigned_at = -1.0  # when the leader wrote the part held
        self.synced = False  # whether this run has taken a part yet
        self.written: tuple[int, float, float] | None = None  # what the node's SupervisorInfo reports
        self.heartbeat = None  # the heartbeat lease of the current session
        self.writing = False  # a write of a changed SupervisorInfo waits for the next heartbeat
        self.started = self.now
        self.path = SUPERVISORS_PREFIX + self.name
        self.assignments_path = node_assignments_path(self.name)
        self.start_gc(p["gc"])
        self.spawn(self._boot("start" if self.boots == 1 else "restart"))

    def _boot(self, cause: str) -> Generator:
        while not (yield from self.store.open()):
            yield from self.sleep(self.params["op_timeout_s"])
        report, info = self._report(), self.info()
        r = yield from self.store.op("create", {"path": self.path, "data": info, "ephemeral": True})
        if r is None or not self.store.is_open:
            return  # lost again meanwhile: registering starts over
        self.emit("supervisor_registered", session=self.store.id or "", cause=cause)
        self.written = report
        self.heartbeat = self.store.lease("heartbeat", float(self.conf[SUPERVISOR_HEARTBEAT_FREQUENCY_SECS]),
                                          target=self.path, field="time")
        if cause != "session_expired":
            self.booted.succeed()
            yield from self._resync()
            if not self.store.is_open:
                return
        self.store.lease("sync-assignments", SYNC_PERIOD_S, form=POLL, target=self.assignments_path,
                         on_reply=self._synced)
        self._report_changed()  # workers may have changed while registering

    def _session_lost(self) -> None:
        self.spawn(self._boot("session_expired"))

    # -- heartbeats -----------------------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """The ``SupervisorInfo`` written to ZooKeeper (``time`` in virtual seconds)."""
        p = self.params
        return {"id": self.name, "host": p["host"], "rack": p["rack"], "cpu": self.cpu, "memory_mb": self.memory_mb,
                "generic": p["generic"], "ports": p["ports"], "time": self.now, "uptime_s": self.now - self.started,
                "used_ports": sorted(self.workers), "cpu_used": self._used("cpu"),
                "memory_used_mb": self._used("memory_mb")}

    def _used(self, key: str) -> float:
        return float(sum(w[key] for _, w in sorted(self.workers.items())))

    def _report(self) -> tuple[int, float, float]:
        return len(self.workers), self._used("cpu"), self._used("memory_mb")

    def _report_changed(self) -> None:
        """What the supervisor reports may have changed: rewrite its node at the next heartbeat if it did."""
        if not self.writing and self.heartbeat is not None and self._report() != self.written:
            self.writing = True
            self.spawn(self._write_at_heartbeat(self.heartbeat))

    def _write_at_heartbeat(self, lease: Any) -> Generator:
        yield from self.sleep(lease.next_beat() - self.now)
        self.writing = False
        if lease is not self.heartbeat:
            self._report_changed()  # registered again meanwhile: at the new session's heartbeat
            return
        report = self._report()
        if not self.store.is_open or report == self.written:
            return  # registering again (the new node will carry a fresh SupervisorInfo), or nothing to say
        self.written = report
        self.emit("supervisor_heartbeat", n=lease.beats(), slots_used=report[0], cpu_used=report[1],
                  memory_used_mb=report[2])
        yield from self.store.op("set", {"path": self.path, "data": self.info(), "ephemeral": True})

    # -- assignments ----------------------------------------------------------------------------------------
    def on_message(self, msg: Message) -> Generator | None:
        if msg.kind == "assignments":
            self._take(msg.body)
        elif msg.kind == TURN:
            self.rolling.on_turn(msg.body)
        return None

    def _synced(self, body: dict[str, Any]) -> None:
        """The assignment poll's answer: the node's data, or the session's expiry (learnt by the session)."""
        if "data" in body:
            self._take(body["data"])

    def _resync(self) -> Generator:
        r = yield from self.store.op("get", {"path": self.assignments_path})
        if r is not None:
            self._take(r["data"])

    def _take(self, data: dict[str, Any] | None) -> None:
        """This supervisor's part of the assignments as the leader wrote it (``{"at", "parts": {topology id:
        [[port, cpu, onheap_mb, offheap_mb, executors], ...]}}``, None: never written); an older part than the one
        held is ignored; the workers follow when it changed."""
        if data is None or data["at"] < self.assigned_at:
            return
        self.assigned_at = data["at"]
        assigned = {tid: {port: {"topology": tid, "executors": [list(e) for e in execs], "cpu": cpu,
                                 "memory_mb": on_heap + off_heap}
                          for port, cpu, on_heap, off_heap, execs in rows}
                    for tid, rows in sorted(data["parts"].items())}
        if assigned != self.assigned or not self.synced:  # the first part of a run also settles kept workers
            self.synced = True
            self.assigned = assigned
            self._sync()

    def _desired(self) -> dict[int, dict[str, Any]]:
        out: dict[int, dict[str, Any]] = {}
        for _tid, part in sorted(self.assigned.items()):
            out.update(part)
        return out

    def _sync(self) -> None:
        """Kill the workers whose slot is no longer theirs, launch the newly assigned ones."""
        desired = self._desired()
        for port in sorted(self.workers):
            w = self.workers[port]
            d = desired.get(port)
            if d is not None and d["topology"] == w["topology"] and d["executors"] == w["executors"]:
                continue
            del self.workers[port]
            if w["running"]:  # one still starting is just not started
                self.emit("worker_killed", topology=w["topology"], port=port,
                          reason="unassigned" if d is None else "reassigned")
        for port, d in sorted(desired.items()):
            if port not in self.workers:
                self.workers[port] = {**d, "running": False}
                self.spawn(self._launch(port, self.workers[port]))
        self._report_changed()

    def _launch(self, port: int, worker: dict[str, Any]) -> Generator:
        yield from self.sleep(self.params["worker_launch_s"])
        if self.workers.get(port) is not worker:
            return  # killed or replaced before it started
        worker["running"] = True
        self.emit("worker_launched", topology=worker["topology"], port=port, executors=len(worker["executors"]),
                  cpu=worker["cpu"], memory_mb=worker["memory_mb"])

    # -- faults ---------------------------------------------------------------------------------------------
    def _all_supervisors(self) -> list[str]:
        return [f"supervisor-{i + 1}" for i in range(self.params["supervisors"])]

    def shutdown(self, cause: str) -> Generator:
        """A graceful stop of the daemon: close the ZooKeeper session (the node goes at once, so the leader sees
        the supervisor gone at its next round) and exit, leaving the workers running."""
        if not self.alive or self.stopping:
            return
        self.stopping = cause
        running = sum(1 for w in self.workers.values() if w["running"])
        self.emit("supervisor_stopping", cause=cause, running_workers=running)
        yield from self.store.close()
        self.kept = {port: w for port, w in sorted(self.workers.items()) if w["running"]}
        self.crash(cause)

    def on_fault(self, kind: str, spec: dict[str, Any]) -> None:
        """``restart``: crash now (the host: its workers go too), start again ``duration_s`` later;
        ``rolling_restart``: its turn in the operator's script; the JVM's and the kernel's kinds otherwise."""
        if kind == "restart":
            restart_later(self, spec["duration_s"])
        elif kind == ROLLING_RESTART:
            self.rolling.on_fault(spec)
        else:
            super().on_fault(kind, spec)
