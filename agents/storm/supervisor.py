"""A Storm supervisor: a JVM agent that heartbeats its ``SupervisorInfo`` to ZooKeeper and runs the workers the
leader Nimbus assigns to it.

Components of :class:`Supervisor`:

* ``store``: its ZooKeeper session (``storm.zookeeper.session.timeout``); its ephemeral node
  ``/storm/supervisors/<id>`` carries the ``SupervisorInfo`` (host, rack, capacity —
  ``supervisor.cpu.capacity``, ``supervisor.memory.capacity.mb``, ``supervisor.resources.map``, the slots'
  ports — the heartbeat time and what its workers use). When the session expires the node goes; the supervisor
  opens a new session and registers again, its workers still running.
* the ``heartbeatTimer`` executor (``SupervisorHeartbeat`` every ``supervisor.heartbeat.frequency.secs``; fixed
  delay like Storm's ``StormTimer``, or fixed rate: a scenario setting) rewrites the node;
* ``ReadClusterState``: its part of the assignments, pushed by the leader Nimbus when it changes (Storm 2.x's
  ``sendSupervisorAssignments``) and read from ZooKeeper (:func:`~.store.node_assignments_path`) at start and
  every 10 s by the ``eventTimer`` executor (Storm's ``SynchronizeAssignments``): a supervisor that missed a push
  (a partition, a dropped message) catches up. On every change it kills the workers no longer assigned to it
  and launches the new ones, which run after ``worker_launch_s``. A worker carries its load as the CPU and memory
  its assignment charges it.

A crash is a host crash: the workers go with the supervisor. GC pauses and ``gc_storm`` stop the heartbeats and
the assignment handling (:class:`~clusteremu.emulator.jvm.JvmAgent`); ``restart`` crashes it and starts it again.
"""
from __future__ import annotations

from typing import Any, Generator

from clusteremu.emulator.agent import AgentContext
from clusteremu.emulator.election import MetadataSession, StoreProtocol
from clusteremu.emulator.jvm import JvmAgent
from clusteremu.emulator.messages import Message
from clusteremu.emulator.trace.kinds import declare
from clusteremu.strategies.storm.config import SUPERVISOR_HEARTBEAT_FREQUENCY_SECS

from .lifecycle import restart_later
from .nimbus import ZK_SESSION_TIMEOUT
from .store import STORE, SUPERVISORS_PREFIX, node_assignments_path

__all__ = ["SYNC_PERIOD_S", "Supervisor"]

#: Storm's ``SynchronizeAssignments`` period (hard-coded in ``Supervisor.launch``)
SYNC_PERIOD_S = 10.0

declare("supervisor_registered", "The supervisor opened a ZooKeeper session and created its node (`cause`: "
        "`start`, `restart` — the process started again —, `session_expired` — registering again after its "
        "session expired).", __name__,
        session="str", cause="str")
declare("supervisor_heartbeat", "The supervisor wrote heartbeat `n` (its `SupervisorInfo`): `slots_used` workers, "
        "`cpu_used` (% of a core) and `memory_used_mb` charged to them.", __name__,
        n="int", slots_used="int", cpu_used="float", memory_used_mb="float")
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

    def on_start(self) -> None:
        self.boots += 1
        p = self.params
        self.conf: dict[str, Any] = p["config"]
        self.store = MetadataSession(self, StoreProtocol(STORE), timeout_s=self.conf[ZK_SESSION_TIMEOUT] / 1000.0,
                                     op_timeout_s=p["op_timeout_s"], on_lost=self._session_lost)
        self.workers: dict[int, dict[str, Any]] = {}  # port -> {topology, executors, cpu, memory_mb, running}
        self.assigned: dict[str, dict[int, dict[str, Any]]] = {}  # topology id -> its workers here, by port
        self.assigned_at = -1.0  # when the leader wrote the part held
        self.beats = 0
        self.started = self.now
        self.path = SUPERVISORS_PREFIX + self.name
        self.assignments_path = node_assignments_path(self.name)
        self.timer = self.executor("heartbeatTimer")
        self.start_gc(p["gc"])
        self.spawn(self._boot("start" if self.boots == 1 else "restart"))

    def _boot(self, cause: str) -> Generator:
        while not (yield from self.store.open()):
            yield from self.sleep(self.params["op_timeout_s"])
        r = yield from self.store.op("create", {"path": self.path, "data": self.info(), "ephemeral": True})
        if r is None:
            return
        self.emit("supervisor_registered", session=self.store.id or "", cause=cause)
        if cause != "session_expired":
            yield from self._resync()
            freq = float(self.conf[SUPERVISOR_HEARTBEAT_FREQUENCY_SECS])
            self.timer.schedule_periodic(self.params["timer_mode"], self._heartbeat, freq, freq, name="heartbeat")
            self.executor("eventTimer").schedule_periodic(self.params["timer_mode"], self._read_assignments,
                                                          SYNC_PERIOD_S, SYNC_PERIOD_S, name="sync-assignments")

    def _session_lost(self) -> None:
        self.spawn(self._boot("session_expired"))

    # -- heartbeats -----------------------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """The ``SupervisorInfo`` written to ZooKeeper (``time`` in virtual seconds)."""
        p = self.params
        return {"id": self.name, "host": p["host"], "rack": p["rack"], "cpu": p["cpu"], "memory_mb": p["memory_mb"],
                "generic": p["generic"], "ports": p["ports"], "time": self.now, "uptime_s": self.now - self.started,
                "used_ports": sorted(self.workers), "cpu_used": self._used("cpu"),
                "memory_used_mb": self._used("memory_mb")}

    def _used(self, key: str) -> float:
        return float(sum(w[key] for _, w in sorted(self.workers.items())))

    def _heartbeat(self) -> Generator | None:
        if not self.store.is_open:
            return None  # registering again: the new node carries a fresh SupervisorInfo
        self.beats += 1
        self.emit("supervisor_heartbeat", n=self.beats, slots_used=len(self.workers), cpu_used=self._used("cpu"),
                  memory_used_mb=self._used("memory_mb"))
        return self._write()

    def _write(self) -> Generator:
        yield from self.store.op("set", {"path": self.path, "data": self.info(), "ephemeral": True})

    # -- assignments ----------------------------------------------------------------------------------------
    def on_message(self, msg: Message) -> Generator | None:
        if msg.kind == "assignments":
            self._take(msg.body)
        return None

    def _read_assignments(self) -> Generator | None:
        return self._resync() if self.store.is_open else None

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
        if assigned != self.assigned:
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

    def _launch(self, port: int, worker: dict[str, Any]) -> Generator:
        yield from self.sleep(self.params["worker_launch_s"])
        if self.workers.get(port) is not worker:
            return  # killed or replaced before it started
        worker["running"] = True
        self.emit("worker_launched", topology=worker["topology"], port=port, executors=len(worker["executors"]),
                  cpu=worker["cpu"], memory_mb=worker["memory_mb"])

    # -- faults ---------------------------------------------------------------------------------------------
    def on_fault(self, kind: str, spec: dict[str, Any]) -> None:
        """``restart``: crash now (the host: its workers go too), start again ``duration_s`` later; the JVM's and
        the kernel's kinds otherwise."""
        if kind == "restart":
            restart_later(self, spec["duration_s"])
        else:
            super().on_fault(kind, spec)
