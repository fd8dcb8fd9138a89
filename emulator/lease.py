"""Leases: a periodic keep-alive, or a periodic read, declared once instead of sent every period.

A client that keeps contact with a server every ``period_s`` (a ZooKeeper session's pings, a heartbeat that only
says "still alive") costs the real system one request and one reply per period; emulated one by one, 500 clients
are most of a run. A lease keeps the *effect* of those messages exact at every virtual time while sending none of
them in steady state:

* the client declares once, with one real message (a *beat*), that it keeps contact every ``period_s`` from an
  anchor time; from then on the server knows in closed form when the last keep-alive reached it:
  ``anchor + k·period`` for the largest such time not after now (:meth:`LeaseTable.last`);
* whatever would stop the real keep-alives stops the lease at the same virtual time: the client's kernel side
  watches for it and sends the server a *stop notice* carrying the last keep-alive that got through;
* when keep-alives resume, a real beat re-anchors the lease.

Components:

* :data:`LEASE_BEAT`, :data:`LEASE_NOTICE`, :data:`LEASE_STATE` (client → server), :data:`LEASE_ACK`,
  :data:`LEASE_DATA`, :data:`LEASE_LOST` (server → client): the message kinds. The three notices are the kernel's
  bookkeeping, not an agent's action (:meth:`~.agent.Agent.send_notice`): sent even while the agent is paused or
  down, delivered after the link's *minimum* latency whatever the network's conditions
  (:data:`~.network.NOTICE_KINDS`).
* :class:`Lease`: the client side, one per (client, key); the forms :data:`KEEPALIVE` and :data:`POLL`; the
  option ``keep_grid`` (a fixed-rate task's grid through pauses).
* :class:`LeaseTable`: the server side, a table the server agent holds (the kernel's
  :class:`~.metadata_store.MetadataStore` does); :func:`cancel_scope` ends a client's leases of one scope.
* :func:`publish` and :meth:`LeaseTable.read_at`: keep-alives with content (below); :func:`grid_at_or_after`:
  a fixed-rate grid's next time, with the leases' arithmetic.

What stops a lease, and when (``g`` is the first keep-alive time the real client would miss):

* a stop-the-world pause of the client (the gate's close listener): at ``g``, if the pause still holds, the
  notice says the last keep-alive was the one before ``g``; when the pause ends a real beat re-anchors at that
  time (the real client's overdue timer fires then too). A pause that ends before ``g`` costs nothing. Where the
  closed form resumes after that beat is the option ``keep_grid``: by default on ``pause_end + k·period`` (a
  fixed-delay task's next run is a period after the overdue one); with ``keep_grid=True`` on the lease's
  original grid (a fixed-rate task runs what is overdue at the pause's end, however many runs that is, all at
  that instant, then keeps ``origin + k·period``). The re-anchoring beat is then a keep-alive off the grid: the
  server's last keep-alive is the later of it and the last grid time, a stop notice before the next grid time
  says it was that beat, and a poll's delivery goes at the first grid time not before the change.
* a crash or stop of the client: at once, the notice also ends the lease; so does :meth:`Lease.end` (the client
  stops keeping contact with that server while it runs on).
* a network condition (partition, drop, delay) on the client → server link (:meth:`~.network.NetworkModel.
  condition_windows`): at the first keep-alive time inside the condition the notice stops the closed form, and
  while the condition lasts every period's keep-alive is a *real* beat, routed by the network model like any
  message — so a partition loses it, a drop loses it with the condition's probability (the sender's own network
  stream draws, as it would for the real keep-alive), a delay delays it. The lease evaluates nothing itself:
  events happen only while a fault is on, none in steady state. The first keep-alive time after the conditions
  end sends a real beat that puts the lease back in closed form.
* a crash of the *server*: its kernel side tells every client (:data:`LEASE_LOST`), whose keep-alives are real
  beats from then on until the server answers one (after a restart it answers "expired" for a scope it no longer
  knows, as a restarted ZooKeeper answers a session it lost).

Why a notice is always in time: it is sent at ``g`` (or the crash) and arrives ``L`` later (the link's minimum
latency, milliseconds), whereas any decision that depends on the missing keep-alive — a session expiry, a
heartbeat timeout — needs at least a whole timeout (seconds, longer than the period) without contact after
``g - period``. A notice is also always ahead of the real beat that follows it (sent later, no faster).

The :data:`POLL` form is a periodic read whose reply matters only when the data changed: the server, when the
target changes, delivers the new data (:data:`LEASE_DATA`) at the client's next poll time (the first
``anchor + k·period`` not before the change), unless the lease is stopped by then; a real beat of a poll lease
(start, resume, or a poll during a condition) is answered with the data, as the real read would be. A delivery
names the anchor it was computed on: one that reaches a client whose lease stopped or re-anchored since (its stop
notice crossed the delivery) is dropped, the real beat that re-anchored it having answered already.

Keep-alives with content. A periodic message whose content is the client's state at its send time (an offset
persisted every few seconds) is a lease too when the server can compute that content from a description of the
client's state that changes more rarely than the period: the client publishes the description (:func:`publish`)
whenever it changes (a :data:`LEASE_STATE` notice, naming the lease's key, even before the lease is declared),
and the server asks :meth:`LeaseTable.read_at` for the last keep-alive whose content it can know now, with the
description in force at that keep-alive's time. "Can know" is causal: a keep-alive made at ``s`` would reach the
server no sooner than ``s + L`` (``L`` the link's minimum latency), and every description published up to ``s``
has reached it by then (a notice takes exactly ``L``), so ``read_at`` returns the last keep-alive made before
``now - L``. The real message would have taken a latency draw ``>= L``: its content is seen up to that draw minus
``L`` earlier (milliseconds) than one by one.

Accuracy: the server counts a keep-alive at its send time, on a grid that does not drift; a real client's pings
drift by their round trip each cycle and count when they arrive. A decision taken on the lease's last contact
(e.g. ZooKeeper's expiry, checked every tick) therefore differs from the one-by-one model by at most one period
plus one check interval; a pause that ends before the timeout never stops a session under either model, one
longer than the timeout plus a period always does.
"""
from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Callable, Iterable, Mapping

from .agent import Agent
from .messages import Message
from .network import NOTICE_KINDS

__all__ = ["KEEPALIVE", "LEASE_ACK", "LEASE_BEAT", "LEASE_DATA", "LEASE_LOST", "LEASE_NOTICE", "LEASE_STATE", "POLL",
           "Lease", "LeaseTable", "cancel_scope", "grid_at_or_after", "publish"]

LEASE_BEAT = "lease_beat"
LEASE_NOTICE = "lease_notice"
LEASE_ACK = "lease_ack"
LEASE_DATA = "lease_data"
LEASE_LOST = "lease_lost"
LEASE_STATE = "lease_state"

assert {LEASE_NOTICE, LEASE_LOST, LEASE_STATE} <= NOTICE_KINDS  # the network delivers them as notices

#: a lease whose keep-alives are contact (the server answers "when did it last reach me")
KEEPALIVE = "keepalive"
#: a lease whose keep-alives are reads of ``target`` (the server delivers the data when it changed)
POLL = "poll"

_EPS = 1e-9  # slack of the grid arithmetic: a time computed as anchor + k·period is on the grid
_published_at = itemgetter(0)  # a published state's time: (time, state)


def _k_at_or_after(anchor: float, period: float, t: float) -> int:
    return max(0, math.ceil((t - anchor) / period - _EPS))


def grid_at_or_after(origin: float, period: float, t: float) -> float:
    """The first time ``origin + k·period`` (k >= 0) at or after ``t``, with the grid arithmetic's slack: a
    fixed-rate task's next run, as the leases compute their keep-alives."""
    return origin + _k_at_or_after(origin, period, t) * period


def _next_k(anchor: float, period: float, t: float) -> int:
    """The first keep-alive at or after ``t`` that is not the anchor's own (a real beat, sent already): so a
    notice always leaves at least a period after the beat it follows, and cannot overtake it."""
    return max(1, _k_at_or_after(anchor, period, t))


def _k_at_or_before(anchor: float, period: float, t: float) -> int:
    return math.floor((t - anchor) / period + _EPS)


# -- the client side ------------------------------------------------------------------------------------------
def _clients(agent: Agent) -> dict[str, "Lease"]:
    """The agent's leases by key; the first call registers the lease replies' handlers on the agent."""
    leases = agent.__dict__.get("_leases")
    if leases is None:
        leases = agent.__dict__["_leases"] = {}

        def route(msg: Message) -> None:
            lease = leases.get(msg.body["lease"])
            if lease is not None and lease.server == msg.src:
                lease._on_server(msg)

        for kind in (LEASE_ACK, LEASE_DATA, LEASE_LOST):
            agent.handle_kind(kind, route)
    return leases


def cancel_scope(agent: Agent, scope: str) -> None:
    """End, without a message, every lease of ``agent`` in ``scope`` (the server ended the scope already, e.g.
    the session expired or was closed)."""
    for lease in [l for l in _clients(agent).values() if l.scope == scope]:
        lease.cancel()


def publish(agent: Agent, server: str, key: str, state: Any) -> None:
    """Tell ``server`` that the keep-alives of ``agent``'s lease ``key`` made from now on carry ``state`` (see
    "Keep-alives with content" in the module docs; the lease need not be declared yet). ``state`` must be plain
    data (it crosses worker processes)."""
    agent.send_notice(server, LEASE_STATE, {"lease": key, "t": agent.now, "state": state})


class _PauseWatch:
    """One close listener of the gate for a run of an agent's leases started one after another, in that order.

    Every pause asks each lease whether it reaches the lease's next keep-alive, and almost never does (a young
    pause of tens of milliseconds, a keep-alive every few seconds). Leases of one grid (origin, period) have the
    same next keep-alive time, and many share one (one periodic task's keep-alives to each of several servers):
    the watch asks each grid once, and only the leases of a grid whose next keep-alive the pause
    reaches look further, in their starting order (:meth:`Lease._on_pause`; a lease that the grid's answer skips
    would have done nothing). The gate calls its listeners in the order they were added; a watch covers only
    leases added while it was the gate's last listener, so the leases' calls keep their places among the
    others' (an executor's)."""

    __slots__ = ("gate", "env", "leases", "_grids")

    def __init__(self, agent: Agent) -> None:
        self.gate = agent.gate
        self.env = agent.env
        self.leases: list[Lease] = []  # in starting order
        self._grids: list[tuple[float, float, list[Lease]]] | None = None  # by grid, built when a pause asks

    @staticmethod
    def of(agent: Agent) -> "_PauseWatch":
        """The watch a lease started now joins: the agent's last one while it is the gate's last listener."""
        watch = agent.__dict__.get("_lease_watch")
        listeners = agent.gate.close_listeners
        if watch is None or not listeners or listeners[-1] is not watch:
            watch = agent.__dict__["_lease_watch"] = _PauseWatch(agent)
            agent.gate.add_close_listener(watch)
        return watch

    def add(self, lease: "Lease") -> None:
        self.leases.append(lease)
        self._grids = None

    def remove(self, lease: "Lease") -> None:
        self.leases.remove(lease)
        self._grids = None
        if not self.leases:
            self.gate.remove_close_listener(self)

    def moved(self) -> None:
        """A lease's grid changed."""
        self._grids = None

    def __call__(self) -> None:
        grids = self._grids
        if grids is None:
            by: dict[tuple[float, float], list[Lease]] = {}
            for lease in self.leases:
                by.setdefault((lease.origin, lease.period_s), []).append(lease)
            grids = self._grids = [(o, p, ls) for (o, p), ls in by.items()]
        now, until = self.env._now, self.gate.closed_until
        reached: list[Lease] | None = None
        for origin, period, leases in grids:
            # Lease._on_pause's own test before its first-index floors (which only move the keep-alive later)
            if until is not None and until < grid_at_or_after(origin, period, now):
                continue
            reached = leases if reached is None else reached + leases
        if reached is not None:
            if len(reached) > 1 and len(grids) > 1:
                order = {id(lease): i for i, lease in enumerate(self.leases)}
                reached = sorted(reached, key=lambda lease: order[id(lease)])
            for lease in reached:
                lease._on_pause()


class Lease:
    """The client side of one lease (see the module docstring).

    ``server`` is the server agent, ``key`` names the lease among the client's (unique per client), ``scope`` an
    optional grouping the server understands (the kernel's store: a session id; the lease ends with it),
    ``target`` and ``field`` what the lease refers to on the server (a :data:`POLL` lease reads ``target``; a
    :data:`KEEPALIVE` lease with a ``field`` keeps that field of ``target`` at its last keep-alive time).
    ``on_reply(body)`` gets the server's answers: :data:`LEASE_ACK` bodies (``{"ok": True}`` or
    ``{"expired": True}``, after which the lease is over) and :data:`LEASE_DATA` bodies (``{"data": ...}``).
    ``keep_grid``: after a pause's re-anchoring beat the keep-alives resume on the original grid, as a
    fixed-rate task's runs do (default: on a grid anchored on that beat, as a fixed-delay task's do);
    ``origin`` (with ``keep_grid``): that grid's origin, when the declaration is not on it (a fixed-rate task's
    overdue run after a pause, or a run of another task on its behalf); default: the declaration's time.
    The lease belongs to one run of the client agent (a crash ends it).
    """

    def __init__(self, agent: Agent, server: str, key: str, period_s: float, *, form: str = KEEPALIVE,
                 scope: str | None = None, target: str | None = None, field: str | None = None,
                 on_reply: Callable[[dict[str, Any]], None] | None = None, keep_grid: bool = False,
                 origin: float | None = None) -> None:
        if not period_s > 0:
            raise ValueError(f"a lease needs a period > 0, got {period_s}")
        if form not in (KEEPALIVE, POLL):
            raise ValueError(f"unknown lease form {form!r}")
        if origin is not None and not keep_grid:
            raise ValueError("a lease's grid origin needs keep_grid")
        self.agent = agent
        self.server = server
        self.key = key
        self.period_s = float(period_s)
        self.form = form
        self.scope = scope
        self.target = target
        self.field = field
        self.on_reply = on_reply
        self.keep_grid = keep_grid
        self._grid_origin = origin
        #: ``new``, ``closed`` (the server computes the keep-alives), ``explicit`` (every keep-alive is a real
        #: beat: a condition on the link, or the server was lost), ``stopped`` (paused), ``ended``
        self.state = "new"
        #: the time of the real beat the closed form was declared with (names it in notices and deliveries)
        self.anchor = 0.0
        #: the keep-alive grid's origin: ``anchor``, or with ``keep_grid`` the one kept through re-anchorings
        self.origin = 0.0
        self._k0 = 1  # the first grid index after the anchor's beat
        net = agent.network
        self._windows = net.condition_windows(agent.name, server) if net is not None else []
        self._forced = False  # real beats until the server answers one (it crashed)
        self._epoch = 0  # the one armed timer is valid while this is unchanged
        self._armed_k: int | None = None
        self._made_before = -1  # keep-alives made before the current anchor (the declaration is not counted)
        self._watch: _PauseWatch | None = None  # the gate's listener that asks it at pauses (once started)

    # -- what the client asks -------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.state in ("closed", "explicit")

    def next_beat(self, t: float | None = None) -> float:
        """The first keep-alive time at or after ``t`` (default now) since the current anchor."""
        t = self.agent.now if t is None else t
        k = _k_at_or_after(self.origin, self.period_s, t)
        return self.anchor if k < self._k0 else self._grid(k)  # the anchor's beat, or a grid time after it

    def beats(self, t: float | None = None) -> int:
        """How many keep-alives the client has made up to ``t`` (default now), the declaration not counted."""
        if not self.running:
            return max(0, self._made_before)
        t = self.agent.now if t is None else t
        return self._made_before + self._made_since(_k_at_or_before(self.origin, self.period_s, t) + 1)

    # -- life cycle -----------------------------------------------------------------------------------------
    def start(self) -> "Lease":
        """Declare the lease with a real beat now (the first keep-alive) and start watching what stops it."""
        if self.state != "new":
            raise RuntimeError(f"lease {self.key!r} of {self.agent.name} was started already")
        a = self.agent
        leases = _clients(a)
        old = leases.get(self.key)
        if old is not None:
            old.cancel()
        leases[self.key] = self
        self._watch = _PauseWatch.of(a)
        self._watch.add(self)
        a.on_crash(self._on_crash)
        self._anchor_now()
        return self

    def end(self) -> None:
        """End the lease and tell the server (the client stops keeping contact with it, e.g. it no longer talks to
        that server): the server keeps the last keep-alive made, as after a crash."""
        if self.state in ("new", "ended"):
            return
        last = self._last_before(_k_at_or_before(self.origin, self.period_s, self.agent.now) + 1) \
            if self.state == "closed" else None
        self._notice(last, end=True)
        self.cancel()

    def cancel(self) -> None:
        """End the lease on this side only (the server has ended it already, or will with its scope)."""
        if self.state == "ended":
            return
        self.state = "ended"
        self._epoch += 1
        if self._watch is not None:
            self._watch.remove(self)
            self._watch = None
        leases = _clients(self.agent)
        if leases.get(self.key) is self:
            del leases[self.key]

    # -- internals ------------------------------------------------------------------------------------------
    def _active(self, t: float) -> bool:
        return any(s <= t < e for s, e in self._windows)

    def _grid(self, k: int) -> float:
        return self.origin + k * self.period_s

    def _next_k(self, t: float) -> int:
        """The first grid keep-alive at or after ``t`` that is not the anchor's beat (see :func:`_next_k`)."""
        return max(self._k0, _k_at_or_after(self.origin, self.period_s, t))

    def _last_before(self, k: int) -> float:
        """The last keep-alive made before grid keep-alive ``k``: the previous grid time, or the anchor's beat."""
        return self.anchor if k <= self._k0 else self._grid(k - 1)

    def _made_since(self, k: int) -> int:
        """Keep-alives made since the anchor before grid keep-alive ``k``: its beat and the grid's after it."""
        return 1 + max(0, k - self._k0)

    def _set_anchor(self, t: float, regrid: bool) -> None:
        self.anchor = t
        if regrid or not self.keep_grid:
            self.origin = t if self._grid_origin is None or not regrid else min(self._grid_origin, t)
            if self._watch is not None:
                self._watch.moved()
        self._k0 = 1 if self.origin == t else _k_at_or_before(self.origin, self.period_s, t) + 1

    def _beat(self, t: float, explicit: bool) -> None:
        body = {"lease": self.key, "t": t, "period": self.period_s, "explicit": explicit, "form": self.form,
                "scope": self.scope, "target": self.target, "field": self.field}
        if self.origin != t and not explicit:
            body["origin"] = self.origin  # a kept grid (keep_grid): the server computes the keep-alives on it
        self.agent.send(self.server, LEASE_BEAT, body)

    def _notice(self, last: float | None, end: bool = False) -> None:
        self.agent.send_notice(self.server, LEASE_NOTICE, {"lease": self.key, "anchor": self.anchor,
                                                            "last": last, "end": end})

    def _anchor_now(self) -> None:
        """A real beat now, and the keep-alive grid anchored on it (or, with ``keep_grid``, kept)."""
        now = self.agent.now
        if self.state in ("closed", "explicit", "stopped"):
            self._made_before = self.beats()
        self._set_anchor(now, regrid=self.state == "new")
        explicit = self._forced or self._active(now)
        self.state = "explicit" if explicit else "closed"
        self._beat(now, explicit)
        self._plan()

    def _arm(self, k: int) -> None:
        self._epoch += 1
        self._armed_k = k
        epoch = self._epoch
        ev = self.agent.env.timeout(max(0.0, self._grid(k) - self.agent.now))
        ev.callbacks.append(lambda _ev: self._tick(epoch, k))

    def _plan(self) -> None:
        """Arm the one timer this state needs: the next keep-alive when they are real, else the first keep-alive
        time inside the next condition on the link (none: nothing happens until a pause or a crash)."""
        self._armed_k = None
        self._epoch += 1
        now = self.agent.now
        if self.state == "explicit":
            self._arm(max(self._k0, _k_at_or_before(self.origin, self.period_s, now) + 1))
        elif self.state == "closed":
            for start, end in self._windows:
                if end > now:
                    k = self._next_k(max(start, now))
                    if self._grid(k) < end:  # a condition between two keep-alives touches none of them
                        self._arm(k)
                        return

    def _on_pause(self) -> None:
        """A pause began or was extended: look at the first keep-alive it could miss (none if it ends first).
        Asked by the lease's :class:`_PauseWatch` when the pause reaches its grid's next keep-alive."""
        if self.state != "closed" or not self.agent.alive:
            return  # real beats check the gate at each keep-alive themselves
        k = self._next_k(self.agent.now)
        until = self.agent.gate.closed_until
        if until is not None and until < self._grid(k):
            return  # over before the next keep-alive is due: nothing missed
        if self._armed_k is None or k < self._armed_k:
            self._arm(k)

    def _tick(self, epoch: int, k: int) -> None:
        """Keep-alive time ``k``: one that something may stop, or a real one."""
        if epoch != self._epoch or not self.running or not self.agent.alive:
            return
        self._armed_k = None
        gate = self.agent.gate
        if not gate.is_open:
            # missed: the server learns that the last keep-alive was the one before
            if self.state == "closed":
                self._notice(self._last_before(k))
            self._made_before += self._made_since(k)  # the anchor's beat and the grid's up to k - 1 were made
            self.state = "stopped"
            self._epoch += 1
            epoch = self._epoch
            gate.on_open(lambda: self._resume(epoch))
            return
        t = self._grid(k)
        if self._forced or self._active(t):
            if self.state == "closed":
                self._notice(self._last_before(k))
                self.state = "explicit"
            self._beat(t, explicit=True)
        elif self.state == "explicit":
            # the conditions are over: a real beat puts the lease back in closed form on this keep-alive
            self._made_before += self._made_since(k)
            self._set_anchor(t, regrid=False)
            self.state = "closed"
            self._beat(t, explicit=False)
        self._plan()

    def _resume(self, epoch: int) -> None:
        if epoch == self._epoch and self.state == "stopped" and self.agent.alive:
            self._anchor_now()

    def _on_crash(self) -> None:
        self.end()

    def _on_server(self, msg: Message) -> None:
        body = msg.body
        if msg.kind == LEASE_LOST:
            # the server crashed: it computes nothing for us any more; real beats until it answers one
            self._forced = True
            if self.state == "closed":
                self.state = "explicit"
                self._plan()
            return
        if "anchor" in body and (body["anchor"] != self.anchor or not self.running):
            return  # a delivery for a poll the client did not make (it stopped before; a real beat answers)
        if body.get("expired"):
            self.cancel()
        elif self._forced:
            self._forced = False  # the next keep-alive outside a condition goes back to closed form
        if self.on_reply is not None:
            self.on_reply(body)


# -- the server side ------------------------------------------------------------------------------------------
@dataclass
class _Entry:
    client: str
    key: str
    form: str
    period: float
    scope: str | None
    target: str | None
    field: str | None
    anchor: float = 0.0  # the declaring beat's time (names the closed form in notices and deliveries)
    origin: float = 0.0  # the keep-alive grid's origin (the anchor, unless the client keeps an older grid)
    running: bool = False  # closed form in force
    last: float = -math.inf  # the last keep-alive that reached the server, when not running
    ended: bool = False
    pending: float | None = None  # a poll's data delivery armed for this keep-alive time


def _last_keepalive(e: _Entry, now: float) -> float:
    """The last keep-alive of ``e`` that reached the server by ``now``: on the grid while in closed form (or the
    declaring beat, off a kept grid, until the grid's next time)."""
    if not e.running:
        return e.last
    t = e.origin + math.floor((now - e.origin) / e.period + _EPS) * e.period
    return t if t >= e.last else e.last


class LeaseTable:
    """The server side of the leases held with ``agent`` (see the module docstring); belongs to one run of it.

    ``scope_alive(scope)`` says whether a lease's scope still exists (a beat in a scope that does not is answered
    ``{"expired": True}``); ``read(target)`` is a :data:`POLL` lease's read; ``on_scope_running(scope, running)``
    is told when a scope gains its first, or loses its last, keep-alive lease in closed form (a session that has
    one cannot expire, so the server need not check it); ``on_state(client, key, state)`` is told each state a
    client publishes (:func:`publish`) when it arrives.
    """

    def __init__(self, agent: Agent, *, scope_alive: Callable[[str], bool] = lambda _s: True,
                 read: Callable[[str], Any] = lambda _t: None,
                 on_scope_running: Callable[[str, bool], None] | None = None,
                 on_state: Callable[[str, str, Any], None] | None = None) -> None:
        self.agent = agent
        self.scope_alive = scope_alive
        self.read = read
        self.on_scope_running = on_scope_running
        self.on_state = on_state
        #: (client, key) -> the states it published, oldest first: [(time, state)], pruned by read_at
        self._states: dict[tuple[str, str], list[tuple[float, Any]]] = {}
        self._lag: dict[str, float] = {}  # client -> the minimum latency of its link to the server
        self.entries: dict[tuple[str, str], _Entry] = {}
        self._by_scope: dict[str, dict[tuple[str, str], None]] = {}
        self._by_target: dict[str, dict[tuple[str, str], None]] = {}
        self._field_of: dict[str, _Entry] = {}  # target -> its keep-alive lease with a field (one per target)
        self._running_in: dict[str, int] = {}  # scope -> its keep-alive leases in closed form
        self._scopes_running = 0  # scopes with at least one of them
        # (client, key) -> the anchor an end notice closed: a beat of that anchor or older that arrives after
        # the notice (a crash at the very time of a real beat: the notice is faster) is stale
        self._closed: dict[tuple[str, str], float] = {}
        agent.handle_kind(LEASE_BEAT, self._on_beat)
        agent.handle_kind(LEASE_NOTICE, self._on_notice)
        agent.handle_kind(LEASE_STATE, self._on_state)
        agent.on_crash(self._on_crash)

    # -- what the server asks -------------------------------------------------------------------------------
    @property
    def has_fields(self) -> bool:
        """Whether some target has a keep-alive lease on one of its fields (reads need :meth:`view`)."""
        return bool(self._field_of)

    def last(self, client: str, key: str) -> float | None:
        """When the last keep-alive of ``client``'s lease ``key`` reached the server (None: no such lease)."""
        e = self.entries.get((client, key))
        return None if e is None else self._last(e)

    def _last(self, e: _Entry) -> float:
        return _last_keepalive(e, self.agent.now)

    def read_at(self, client: str, key: str) -> tuple[float, float, Any] | None:
        """The last keep-alive of ``client``'s lease ``key`` whose content the server can know now, and what it
        carries: ``(s, t, state)``, ``s`` its time and ``state`` the one published last at or before ``s`` (at
        ``t``); None when there is no such keep-alive or no state before it (see "Keep-alives with content").
        A keep-alive exactly ``L`` before now is not counted yet (its real message would be arriving now)."""
        lid = (client, key)
        e = self.entries.get(lid)
        if e is None:
            return None
        s = _last_keepalive(e, self.agent.now - self.min_latency(client) - _EPS)
        states = self._states.get(lid)
        if not states or s == -math.inf:
            return None
        # usually the last state published is the one: no search (a server reads each client's again and again)
        j = len(states) - 1 if states[-1][0] <= s else bisect_right(states, s, key=_published_at) - 1
        if j < 0:
            return None
        if j:
            del states[:j]  # older states govern no later keep-alive (the bound only grows)
        t, state = states[0]
        return s, t, state

    def last_published(self, client: str, key: str) -> float | None:
        """When ``client`` last published a state for its lease ``key`` (None: never)."""
        states = self._states.get((client, key))
        return states[-1][0] if states else None

    def min_latency(self, client: str) -> float:
        """The minimum latency of ``client``'s link to the server (what :meth:`read_at` counts a keep-alive late
        by)."""
        if client not in self._lag:
            net = self.agent.network
            self._lag[client] = net.latency_for(client, self.agent.name).min_s if net is not None else 0.0
        return self._lag[client]

    def scope_last(self, scope: str) -> float:
        """The last keep-alive of any keep-alive lease in ``scope`` (-inf: none)."""
        entries = self.entries
        return max((self._last(entries[i]) for i in self._by_scope.get(scope, ()) if entries[i].form == KEEPALIVE),
                   default=-math.inf)

    def scope_running(self, scope: str) -> bool:
        """Whether a keep-alive lease of ``scope`` is in closed form (its contact is at most a period old)."""
        return self._running_in.get(scope, 0) > 0

    @property
    def scopes_running(self) -> int:
        """How many scopes have a keep-alive lease in closed form (:meth:`scope_running`)."""
        return self._scopes_running

    def view(self, target: str, data: Any) -> Any:
        """``data`` of ``target`` as a reader sees it now: the ``field`` of the keep-alive lease on ``target``
        (the latest declared, if several) is its last keep-alive time if that is later than the written value."""
        e = self._field_of.get(target)
        if e is None or not isinstance(data, dict):
            return data
        t = _last_keepalive(e, self.agent.now)
        return {**data, e.field: t} if t > data.get(e.field, -math.inf) else data

    def view_all(self, targets: Iterable[str], nodes: Mapping[str, tuple]) -> dict[str, Any]:
        """``{target: view(target, nodes[target][0])}`` for many targets at once (a listing of a thousand
        heartbeats: the same values, computed without a call per target)."""
        field_of, now, out, floor = self._field_of, self.agent.now, {}, math.floor
        for target in targets:
            data = nodes[target][0]
            e = field_of.get(target)
            if e is not None and isinstance(data, dict):
                # _last_keepalive, inlined: this loop runs for every node of every listing
                if e.running:
                    t = e.origin + floor((now - e.origin) / e.period + _EPS) * e.period
                    if t < e.last:
                        t = e.last
                else:
                    t = e.last
                if t > data.get(e.field, -math.inf):
                    data = {**data, e.field: t}
            out[target] = data
        return out

    def changed(self, target: str) -> None:
        """``target`` changed now: every running poll lease on it gets the data at its next poll time."""
        ids = self._by_target.get(target)
        if not ids:
            return
        now = self.agent.now
        for i in list(ids):
            e = self.entries[i]
            if e.form != POLL or not e.running or e.ended:
                continue
            t = e.origin + _k_at_or_after(e.origin, e.period, now) * e.period
            if e.pending == t:
                continue  # the delivery armed for that poll reads the data when it goes
            e.pending = t
            anchor = e.anchor
            ev = self.agent.env.timeout(max(0.0, t - now))
            ev.callbacks.append(lambda _ev, e=e, anchor=anchor, t=t: self.agent.gate.on_open(
                lambda: self._deliver(e, anchor, t)))

    def end_scope(self, scope: str) -> None:
        """The scope is gone (a session expired or closed): its leases end with it."""
        for i in list(self._by_scope.get(scope, ())):
            self._remove(i)

    # -- messages -------------------------------------------------------------------------------------------
    def _on_beat(self, msg: Message) -> None:
        b = msg.body
        i = (msg.src, b["lease"])
        if i in self._closed and b["t"] <= self._closed[i]:
            return
        scope = b["scope"]
        a = self.agent
        if scope is not None and not self.scope_alive(scope):
            if i in self.entries:
                self._remove(i)
            a.send(msg.src, LEASE_ACK, {"lease": b["lease"], "ok": False, "expired": True})
            return
        e = self.entries.get(i)
        if e is not None and (e.scope != scope or e.target != b["target"]):
            self._remove(i)
            e = None
        if e is None:
            e = self.entries[i] = _Entry(msg.src, b["lease"], b["form"], b["period"], scope, b["target"], b["field"])
            if scope is not None:
                self._by_scope.setdefault(scope, {})[i] = None
            if e.target is not None:
                self._by_target.setdefault(e.target, {})[i] = None
                if e.form == KEEPALIVE and e.field is not None:
                    self._field_of[e.target] = e
        e.period, e.ended = b["period"], False
        t = b["t"]
        if b["explicit"]:
            e.last = max(self._last(e), t)
            self._set_running(e, False)
        else:
            e.anchor = e.last = t
            e.origin = b.get("origin", t)
            self._set_running(e, True)
        if e.form == POLL:
            a.send(msg.src, LEASE_DATA, {"lease": e.key, "data": self.read(e.target)})
        else:
            a.send(msg.src, LEASE_ACK, {"lease": e.key, "ok": True})

    def _on_notice(self, msg: Message) -> None:
        b = msg.body
        i = (msg.src, b["lease"])
        if b["end"]:
            self._closed[i] = b["anchor"]
        e = self.entries.get(i)
        if e is None:
            return
        if e.running and e.anchor == b["anchor"]:
            e.last = self._last(e) if b["last"] is None else b["last"]
            self._set_running(e, False)
        if b["end"]:
            e.ended = True

    def _on_state(self, msg: Message) -> None:
        b = msg.body
        self._states.setdefault((msg.src, b["lease"]), []).append((b["t"], b["state"]))
        if self.on_state is not None:
            self.on_state(msg.src, b["lease"], b["state"])

    def _deliver(self, e: _Entry, anchor: float, t: float) -> None:
        if self.entries.get((e.client, e.key)) is not e or e.pending != t:
            return
        e.pending = None
        if e.running and not e.ended and e.anchor == anchor:
            self.agent.send(e.client, LEASE_DATA, {"lease": e.key, "data": self.read(e.target), "anchor": anchor})

    def _on_crash(self) -> None:
        # the clients' connections reset: tell each (kernel bookkeeping, sent although the server is down)
        for (client, key), e in sorted(self.entries.items()):
            if not e.ended:
                self.agent.send_notice(client, LEASE_LOST, {"lease": key})

    # -- bookkeeping ----------------------------------------------------------------------------------------
    def _set_running(self, e: _Entry, running: bool) -> None:
        if e.running == running:
            return
        e.running = running
        if e.form != KEEPALIVE or e.scope is None:
            return
        n = self._running_in.get(e.scope, 0) + (1 if running else -1)
        self._running_in[e.scope] = n
        if n == (1 if running else 0):
            self._scopes_running += 1 if running else -1
            if self.on_scope_running is not None:
                self.on_scope_running(e.scope, running)

    def _remove(self, i: tuple[str, str]) -> None:
        e = self.entries[i]
        self._set_running(e, False)
        del self.entries[i]
        e.pending = None
        if e.scope is not None:
            ids = self._by_scope[e.scope]
            ids.pop(i, None)
            if not ids:
                del self._by_scope[e.scope]
                self._running_in.pop(e.scope, None)
        if e.target is not None:
            if self._field_of.get(e.target) is e:
                del self._field_of[e.target]
            ids = self._by_target[e.target]
            ids.pop(i, None)
            if not ids:
                del self._by_target[e.target]
