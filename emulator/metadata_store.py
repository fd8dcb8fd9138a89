"""A metadata store agent (ZooKeeper-like): nodes, ephemeral nodes bound to sessions, session expiry, watches.

Any system whose processes coordinate through ZooKeeper (Pulsar's brokers, Storm's Nimbus and supervisors) runs
one of these as an agent; the client side is :mod:`.election` (sessions, leader election). Params:

* ``op_latency_s``: the processing time of every operation; ``tick_s``: how often sessions are checked;
* ``leader_paths``: the paths whose deletion empties a leadership (``leader_vacant`` is written then).

Requests arrive as calls (``Agent.call``) and are answered after ``op_latency_s`` of processing. A ``list`` with
``stat`` true also answers each node's ``mzxid`` (the store's write count at its last write, ZooKeeper's
``Stat.mzxid``). A session
expires when its client has sent nothing (ping or operation) for the session timeout; the store checks every
``tick_s`` (ZooKeeper's tick), deletes the session's ephemeral nodes and notifies the watchers. The client learns
of the expiry on its next request, as a ZooKeeper client does on reconnecting. The ``store_latency`` fault slows
every operation for a while.

Leases (:mod:`.lease`, opt-in by the client): the store holds a :class:`~.lease.LeaseTable` whose scopes are its
sessions. A keep-alive lease in a session's scope is contact with the session (a session whose lease is in closed
form is not even checked at the tick: it cannot expire; one whose lease stopped expires by the same rule, on the
lease's last keep-alive); a keep-alive lease on a node with a ``field`` makes every read of that node see the field
at the lease's last keep-alive (a heartbeat's time); a poll lease on a node gets the node's data at the client's
next poll time after every change. A session's leases end with it.
"""
from __future__ import annotations

from typing import Any, Generator

from .agent import Agent
from .lease import LeaseTable
from .messages import Message
from .timer import call_later
from .trace.kinds import declare

__all__ = ["MetadataStore"]

declare("store_session_expired", "The store expired a client's session (no heartbeat for the session timeout); its "
        "ephemeral nodes are deleted.", __name__, session="str", owner="str", silent_s="float")
declare("leader_vacant", "The leader node was deleted (the leader's session expired or it resigned): no leader "
        "until the next `leader_elected`.", __name__, previous="str")
declare("store_latency_changed", "The metadata store's operation latency changed (a `store_latency` fault began "
        "or ended).", __name__, op_latency_ms="float")


class MetadataStore(Agent):
    kind = "metadata-store"

    def on_start(self) -> None:
        self._life = object()  # this run of the store; requests in flight across a crash are dropped
        self.nodes: dict[str, tuple[Any, str | None]] = {}  # path -> (data, owning session or None)
        # ZooKeeper's transaction id: the run of the store (its epoch) in the high bits, its writes in the low ones,
        # so that it only grows, across restarts too
        self._epoch = self.__dict__.get("_epoch", 0) + 1
        self._zxid = self._epoch << 32
        self._mzxid: dict[str, int] = {}  # path -> the zxid of its last write (ZooKeeper's Stat.mzxid)
        # The paths under every prefix read so far (watch, list), kept in node order: a cluster of 100,000
        # bundles has as many ownership nodes, and a thousand brokers booting read the few other prefixes.
        self._under: dict[str, dict[str, None]] = {}
        self.sessions: dict[str, dict[str, Any]] = {}
        # the sessions the tick checks: all but those kept alive by a lease in closed form (creation order)
        self._checked: dict[str, None] = {}
        self.leases = LeaseTable(self, scope_alive=self.sessions.__contains__, read=self._read,
                                 on_scope_running=self._lease_running)
        self.ephemeral: dict[str, set[str]] = {}  # session -> its ephemeral paths
        self.watches: dict[str, set[str]] = {}  # path prefix -> watcher agents
        self._next_session = 0
        self.extra_latency_s: list[float] = []  # one entry per store_latency fault in force
        self._leader_paths = frozenset(self.params["leader_paths"])
        tick = self.params["tick_s"]
        self.executor().schedule_with_fixed_delay(self._expire_sessions, tick, tick, name="session-tracker")

    # -- requests -----------------------------------------------------------------------------------------
    def on_message(self, msg: Message) -> Generator | None:
        latency = self.op_latency_s()
        if latency > 0:
            # A timer rather than a process per request (a thousand brokers' pings and reports): handled after
            # the latency, or when a pause of the store ends, as ``sleep`` would; not after a crash.
            life = self._life
            call_later(self.env, latency, lambda _ev: self.gate.on_open(lambda: self._later(msg, life)))
        else:
            self._handle(msg)
        return None

    def op_latency_s(self) -> float:
        return self.params["op_latency_s"] + sum(self.extra_latency_s)

    def _later(self, msg: Message, life: object) -> None:
        if self.alive and self._life is life:
            self._handle(msg)

    # -- faults -------------------------------------------------------------------------------------------
    def on_fault(self, kind: str, spec: dict[str, Any]) -> None:
        """``store_latency``: every operation that arrives in [at, at + duration_s) takes ``extra_ms`` longer
        (a slow disk or a struggling ensemble); several such faults add up."""
        if kind == "store_latency":
            self.env.process(self._slow(spec["extra_ms"] / 1000.0, spec["duration_s"]))
        else:
            super().on_fault(kind, spec)

    def _slow(self, extra_s: float, duration_s: float) -> Generator:
        self.extra_latency_s.append(extra_s)
        self.emit("store_latency_changed", op_latency_ms=1000.0 * self.op_latency_s())
        yield self.env.timeout(duration_s)
        self.extra_latency_s.remove(extra_s)
        if self.alive:
            self.emit("store_latency_changed", op_latency_ms=1000.0 * self.op_latency_s())

    def _handle(self, msg: Message) -> None:
        body = msg.body
        session = body.get("session")
        if session is not None:
            s = self.sessions.get(session)
            if s is None:
                self.reply(msg, {"ok": False, "expired": True})
                return
            s["last"] = self.now
        op = msg.kind
        if op == "session_open":
            self._next_session += 1
            sid = f"{msg.src}#{self._next_session}"
            self.sessions[sid] = {"owner": msg.src, "timeout": body["timeout_s"], "last": self.now,
                                  "n": self._next_session}
            self._checked[sid] = None
            self.ephemeral[sid] = set()
            self.reply(msg, {"ok": True, "session": sid})
        elif op == "ping":
            self.reply(msg, {"ok": True})
        elif op == "create":
            path = body["path"]
            existing = self.nodes.get(path)
            if existing is not None:
                self.reply(msg, {"ok": False, "data": existing[0], "owner": existing[1]})
                return
            owner = session if body.get("ephemeral") else None
            self._put(path, body["data"], owner, "created")
            self.reply(msg, {"ok": True})
        elif op == "set":
            path = body["path"]
            existing = self.nodes.get(path)
            owner = existing[1] if existing is not None else (session if body.get("ephemeral") else None)
            self._put(path, body["data"], owner, "changed" if existing is not None else "created")
            self.reply(msg, {"ok": True})
        elif op == "get":
            node = self.nodes.get(body["path"])
            self.reply(msg, {"ok": node is not None, "data": None if node is None else self._read(body["path"]),
                             "owner": None if node is None else node[1]})
        elif op == "delete":
            existed = self._delete(body["path"])
            self.reply(msg, {"ok": existed})
        elif op == "watch":
            prefix = body["prefix"]
            self.watches.setdefault(prefix, set()).add(msg.src)
            snapshot = self._snapshot(prefix)
            self.reply(msg, {"ok": True, "nodes": snapshot})
        elif op == "list":
            # getChildren + getData without a watch: a one-off read of what lies under a prefix
            prefix = body["prefix"]
            snapshot = self._snapshot(prefix)
            if body.get("stat"):  # with each node's Stat.mzxid: a reader can tell a rewritten node at a glance
                mzxid = self._mzxid
                self.reply(msg, {"ok": True, "nodes": snapshot, "mzxid": {p: mzxid[p] for p in snapshot}})
            else:
                self.reply(msg, {"ok": True, "nodes": snapshot})
        elif op == "session_close":
            self._drop_session(session, expired=False)
            self.reply(msg, {"ok": True})

    # -- nodes and watches --------------------------------------------------------------------------------
    def _snapshot(self, prefix: str) -> dict[str, Any]:
        """{path: data} of the nodes under ``prefix``, in node order."""
        paths = self._under.get(prefix)
        if paths is None:
            paths = self._under[prefix] = {p: None for p in self.nodes if p.startswith(prefix)}
        nodes = self.nodes
        if self.leases.has_fields:
            return self.leases.view_all(paths, nodes)
        return {p: nodes[p][0] for p in paths}

    def _read(self, path: str) -> Any:
        """The data of ``path`` as a reader sees it now (None: no such node)."""
        node = self.nodes.get(path)
        return None if node is None else self.leases.view(path, node[0])

    def _put(self, path: str, data: Any, owner: str | None, change: str) -> None:
        if path not in self.nodes:
            for prefix, paths in self._under.items():
                if path.startswith(prefix):
                    paths[path] = None
        self.nodes[path] = (data, owner)
        self._zxid += 1
        self._mzxid[path] = self._zxid
        if owner is not None:
            self.ephemeral.setdefault(owner, set()).add(path)
        self._notify(path, change, data)
        self.leases.changed(path)

    def _delete(self, path: str) -> bool:
        node = self.nodes.pop(path, None)
        if node is None:
            return False
        del self._mzxid[path]
        for paths in self._under.values():
            paths.pop(path, None)
        if node[1] is not None:
            self.ephemeral.get(node[1], set()).discard(path)
        if path in self._leader_paths:
            self.emit("leader_vacant", previous=str(node[0]))
        self._notify(path, "deleted", None)
        self.leases.changed(path)
        return True

    def _notify(self, path: str, change: str, data: Any) -> None:
        for prefix, watchers in self.watches.items():
            if path.startswith(prefix):
                for w in sorted(watchers):
                    self.send(w, "notify", {"path": path, "change": change, "data": data})

    # -- sessions -----------------------------------------------------------------------------------------
    def _lease_running(self, sid: str, running: bool) -> None:
        if running:
            self._checked.pop(sid, None)
        elif sid in self.sessions:
            self._checked[sid] = None

    def _last_contact(self, sid: str) -> float:
        return max(self.sessions[sid]["last"], self.leases.scope_last(sid))

    def _expire_sessions(self) -> None:
        now = self.now
        sessions = self.sessions
        if self.leases.entries:
            silent = [s for s in self._checked if now - self._last_contact(s) > sessions[s]["timeout"]]
        else:
            silent = [s for s in self._checked if now - sessions[s]["last"] > sessions[s]["timeout"]]
        for sid in sorted(silent, key=lambda s: sessions[s]["n"]):  # creation order, as ZooKeeper's tracker
            self._drop_session(sid, expired=True)

    def _drop_session(self, sid: str | None, expired: bool) -> None:
        info = self.sessions.pop(sid, None) if sid is not None else None
        if info is None:
            return
        self._checked.pop(sid, None)
        last = max(info["last"], self.leases.scope_last(sid))
        self.leases.end_scope(sid)
        if expired:
            self.emit("store_session_expired", session=sid, owner=info["owner"], silent_s=self.now - last)
        for path in sorted(self.ephemeral.pop(sid, set())):
            self._delete(path)
