"""The client side of a ZooKeeper-like metadata store: a session with heartbeats, and a leader election on it.

A modelled system's metadata store (a ZooKeeper ensemble, say) is an agent: the kernel's
:class:`~.metadata_store.MetadataStore`, or a system's own; what its clients do is the same everywhere, so it
lives here once, parameterised by the store agent's name, the message kinds of its protocol (the defaults are the
kernel store's) and the election's path:

* :class:`StoreProtocol`: the store agent and the kinds of its requests (answered through ``Agent.call``) and
  of its watch notifications. A request carries its session; a reply ``{"expired": True}`` means the session is
  gone. ``session_open`` takes ``timeout_s`` and answers ``session``; ``create`` takes ``path``, ``data`` and
  ``ephemeral`` and answers ``ok`` (and, when the node exists, its ``data``); ``watch`` takes ``prefix``; a
  notification's body has ``path``, ``change`` (``created``, ``changed``, ``deleted``) and ``data``.
* :class:`MetadataSession`: open a session, ping it at a third of its timeout while idle (a pause stops the
  pings, as it stops a real client's), run operations on it, learn of its expiry (on a ping or an operation, as
  a ZooKeeper client does on reconnecting) and close it. What an expiry means to the agent (ephemeral nodes
  gone, leadership lost, reconnect or shut down) is the agent's callback. With ``lease=True`` the pings are a
  :class:`~.lease.Lease` in the session's scope instead (the store must hold a :class:`~.lease.LeaseTable`, as
  the kernel's does): no message in steady state, the same expiry within one ping period plus one store tick;
  the agent learns of an expiry on the real keep-alive that follows a pause or a network fault, or on an
  operation. :meth:`MetadataSession.lease` starts further leases in the session's scope; they end with it.
* :class:`LeaderElection`: the ephemeral-node election on one path: watch it, try to create it with the
  candidate's name; the winner leads until its session ends, the others learn the leader's name and contend
  again when the node is deleted. Winning is the agent's callback (it writes its own events).

Neither component emits events: the agent writes its own, with the kernel's kind for winning an election,
``leader_elected`` (declared here so that any system's trace can say who led when; ``Trace.leader_at`` reads it
with the store's ``leader_vacant``). Both run as the agent's (the session's pings as timer callbacks that step
exactly where a process would) and belong to one run of the agent (create them in ``on_start``), so a
stop-the-world pause or a crash of the agent stops them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Generator

from .agent import Agent
from .lease import KEEPALIVE, Lease, cancel_scope
from .timer import call_first, call_later
from .trace.kinds import declare

__all__ = ["LeaderElection", "MetadataSession", "StoreProtocol"]

declare("leader_elected", "This agent won a leader election; `previous` is the last leader or \"\".", __name__,
        previous="str")


@dataclass(frozen=True)
class StoreProtocol:
    """The metadata store agent ``store`` and the message kinds of its protocol (see the module docstring)."""

    store: str
    session_open: str = "session_open"
    ping: str = "ping"
    session_close: str = "session_close"
    create: str = "create"
    watch: str = "watch"
    notify: str = "notify"


class MetadataSession:
    """One agent's session on the metadata store (see the module docstring).

    ``on_lost`` is called once per session when the agent learns that it expired (``id`` is None by then).
    ``lease``: keep the session alive with a lease rather than pings (see the module docstring).
    """

    def __init__(self, agent: Agent, protocol: StoreProtocol, timeout_s: float, op_timeout_s: float,
                 on_lost: Callable[[], None], lease: bool = False) -> None:
        self.agent = agent
        self.protocol = protocol
        self.timeout_s = timeout_s
        self.op_timeout_s = op_timeout_s
        self.on_lost = on_lost
        self.uses_lease = lease
        self.id: str | None = None

    @property
    def is_open(self) -> bool:
        return self.id is not None

    def open(self) -> Generator[Any, Any, bool]:
        """``ok = yield from session.open()``: open a session and start its pings; False when the store did not
        answer within the session timeout."""
        a, timeout = self.agent, self.timeout_s
        r = yield from a.call(self.protocol.store, self.protocol.session_open, {"timeout_s": timeout},
                              timeout=timeout)
        if r is None:
            return False
        self.id = r["session"]
        if self.uses_lease:
            sid = self.id
            self.lease("session", timeout / 3.0, on_reply=lambda body: self._lease_reply(sid, body))
        else:
            _Pings(self, self.id, timeout)
        return True

    def lease(self, key: str, period_s: float, *, form: str = KEEPALIVE, target: str | None = None,
              field: str | None = None, on_reply: Callable[[dict[str, Any]], None] | None = None) -> Lease:
        """Start a lease with the store in this session's scope (``key`` unique among this agent's leases of the
        session; see :class:`~.lease.Lease` for the rest); it ends when the session does. The session must be
        open and its period shorter than the session timeout."""
        if self.id is None:
            raise RuntimeError(f"{self.agent.name}: a lease needs an open session")
        if form == KEEPALIVE and not period_s < self.timeout_s:
            raise ValueError(f"a keep-alive period ({period_s} s) must be shorter than the session timeout "
                             f"({self.timeout_s} s)")
        return Lease(self.agent, self.protocol.store, f"{key}@{self.id}", period_s, form=form, scope=self.id,
                     target=target, field=field, on_reply=on_reply).start()

    def _lease_reply(self, session: str, body: dict[str, Any]) -> None:
        if body.get("expired") and self.id == session:
            self.expired()

    def op(self, op: str, body: dict[str, Any]) -> Generator[Any, Any, dict | None]:
        """``reply = yield from session.op(kind, body)``: a request on this session; None when it timed out or
        the session expired (then ``on_lost`` was called)."""
        body = dict(body)
        body["session"] = self.id
        r = yield from self.agent.call(self.protocol.store, op, body, timeout=self.op_timeout_s)
        if r is not None and r.get("expired"):
            self.expired()
            return None
        return r

    def close(self) -> Generator[Any, Any, None]:
        """Close the session (its ephemeral nodes go at once) and forget it; ``on_lost`` is not called."""
        if self.id is not None:
            sid = self.id
            yield from self.op(self.protocol.session_close, {})
            cancel_scope(self.agent, sid)
        self.id = None

    def expired(self) -> None:
        """The session is gone: forget it and tell the agent (once)."""
        if self.id is None:
            return
        sid, self.id = self.id, None
        cancel_scope(self.agent, sid)
        self.on_lost()


class _Pings:
    """A session's pings: a ZooKeeper client pings at a third of the session timeout when idle, waits for the
    answer (or as long again), and a pause stops it. This is the agent's process that would sleep and ``call``
    in a loop, as timer callbacks: each step at the same instant and in the same place among the other events
    (its first sleep begins at an urgent event, as a process's first step does; it waits for the gate where the
    process would), without a process's own events (a thousand brokers ping every ten seconds). It ends with the
    session or the agent's run."""

    __slots__ = ("session", "sid", "period", "running")

    def __init__(self, session: MetadataSession, sid: str, timeout: float) -> None:
        self.session, self.sid, self.period = session, sid, timeout / 3.0
        self.running = True
        session.agent.on_crash(self._stop)
        call_first(session.agent.env, self._sleep)

    def _stop(self) -> None:
        self.running = False

    def _sleep(self, _event: object = None) -> None:
        if self.running and self.session.id == self.sid:
            call_later(self.session.agent.env, self.period, self._woke)
        else:
            self.running = False

    def _woke(self, _event: object = None) -> None:
        if not self.running:
            return
        session = self.session
        gate = session.agent.gate
        if gate._reopened is not None:  # paused: carry on when it ends, as a sleeping process would
            gate._reopened.callbacks.append(self._woke)
            return
        if session.id != self.sid:
            self.running = False
            return
        session.agent.call_then(session.protocol.store, session.protocol.ping, {"session": self.sid}, self.period,
                                self._answered)

    def _answered(self, reply: dict | None) -> None:
        if not self.running:
            return
        if reply is not None and reply.get("expired") and self.session.id == self.sid:
            self.running = False
            self.session.expired()
            return
        self._sleep()


class LeaderElection:
    """The election on ``path`` through ``session``, with the agent's name as its candidacy.

    ``on_elected(previous)`` is called when this agent wins. ``previous`` is the leader this agent knew when its
    ``create`` was answered (or, contending after a deletion, the leader whose node was deleted), "" for none;
    a store that sends the notification of the new node before the reply (the kernel's does) makes it the
    winner's own name.
    ``may_contend()`` says whether the agent takes part when the leader's node is deleted (an agent that is
    stopping does not). ``leader`` is the leader as this agent knows it (None: unknown or vacant).
    """

    def __init__(self, session: MetadataSession, path: str, on_elected: Callable[[str], None],
                 may_contend: Callable[[], bool] = lambda: True) -> None:
        self.session = session
        self.path = path
        self.on_elected = on_elected
        self.may_contend = may_contend
        self.leader: str | None = None

    @property
    def is_leader(self) -> bool:
        return self.leader is not None and self.leader == self.session.agent.name

    def run(self) -> Generator:
        """``yield from election.run()``: watch the path, then contend once."""
        r = yield from self.session.op(self.session.protocol.watch, {"prefix": self.path})
        if r is None:
            return
        yield from self._contend(previous=None)

    def forget(self) -> None:
        """The session ended: whoever leads, this agent no longer knows (nor leads)."""
        self.leader = None

    def on_notify(self, change: str, data: Any) -> None:
        """A notification of the election's path: a new leader's name, or the node deleted (contend again)."""
        if change == "deleted":
            previous, self.leader = self.leader, None
            if self.session.is_open and self.may_contend():
                self.session.agent.spawn(self._contend_after(previous or ""))
        else:
            self.leader = data

    def _contend_after(self, previous: str) -> Generator:
        self.leader = None
        yield from self._contend(previous)

    def _contend(self, previous: str | None) -> Generator:
        """Create the ephemeral leader node; ``previous`` None: the leader known when the answer arrives."""
        name = self.session.agent.name
        r = yield from self.session.op(self.session.protocol.create, {"path": self.path, "data": name,
                                                                      "ephemeral": True})
        if r is None:
            return
        if r["ok"]:
            before = (self.leader or "") if previous is None else previous
            self.leader = name
            self.on_elected(before)
        else:
            self.leader = r["data"]
