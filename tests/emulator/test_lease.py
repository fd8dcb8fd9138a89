"""Kernel leases (:mod:`clusteremu.emulator.lease`): a keep-alive or a periodic read declared once, stopped by
what would stop the real messages at the same virtual time.

The cases are the real client's: ZooKeeper's session tests (a client silent for the session timeout is expired
at the tracker's next tick, one that resumes in time keeps its session, a client that reconnects after its
expiry is told so), and Storm's supervisor heartbeats (Nimbus reads the last heartbeat's time). Each fault is run
twice, against the one-by-one ping model and against the lease, and the expiries compared."""
from __future__ import annotations

import random

import pytest
import simpy

from clusteremu.emulator.agent import Agent, AgentContext
from clusteremu.emulator.election import MetadataSession, StoreProtocol
from clusteremu.emulator.lease import KEEPALIVE, LEASE_BEAT, POLL, Lease, LeaseTable, publish
from clusteremu.emulator.metadata_store import MetadataStore
from clusteremu.emulator.network import Condition, Latency, NetworkModel

TIMEOUT = 6.0  # the session timeout: pings (and the lease's keep-alives) every 2 s
PERIOD = TIMEOUT / 3.0
TICK = 1.0  # the store's session check
BOUND = PERIOD + TICK  # the lease's documented bound on an expiry's time


class Client(Agent):
    """An agent with one session (pings or a lease, by param) that records when it learns of an expiry."""

    def on_start(self):
        self.lost: list[float] = []
        self.session = MetadataSession(self, StoreProtocol("store"), TIMEOUT, op_timeout_s=2.0,
                                       on_lost=lambda: self.lost.append(self.now), lease=self.params["lease"])
        self.spawn(self.session.open())


class Poller(Agent):
    """A session with a poll lease on ``/x`` (every 10 s) and a keep-alive lease on ``/beat/<name>``'s time."""

    def on_start(self):
        self.seen: list[tuple[float, object]] = []
        self.session = MetadataSession(self, StoreProtocol("store"), 30.0, op_timeout_s=2.0, on_lost=lambda: None,
                                       lease=True)
        self.spawn(self._boot())

    def _boot(self):
        yield from self.session.open()
        yield from self.session.op("create", {"path": f"/beat/{self.name}", "data": {"time": self.now},
                                              "ephemeral": True})
        self.beat = self.session.lease("beat", 5.0, target=f"/beat/{self.name}", field="time")
        self.poll = self.session.lease("poll", 10.0, form=POLL, target="/x",
                                       on_reply=lambda body: self.seen.append((self.now, body.get("data"))))


class Writer(Agent):
    """Writes ``/x`` at the times of its ``writes`` param, reads ``/beat/poller`` when asked."""

    def on_start(self):
        self.session = MetadataSession(self, StoreProtocol("store"), 30.0, op_timeout_s=2.0, on_lost=lambda: None)
        self.read: list[tuple[float, object]] = []
        self.spawn(self._run())

    def _run(self):
        yield from self.session.open()
        for t, value in self.params["writes"]:
            yield from self.sleep(t - self.now)
            yield from self.session.op("set", {"path": "/x", "data": value, "ephemeral": False})

    def get(self, path):
        def go():
            r = yield from self.session.op("get", {"path": path})
            self.read.append((self.now, r["data"]))
        self.spawn(go())


class _Outbox(list):
    """The agents' outbox: the first message of a batch asks for routing."""

    def __init__(self, wake):
        super().__init__()
        self.wake = wake

    def append(self, msg):
        super().append(msg)
        self.wake()


class Net:
    """Agents on one environment, their messages routed by the kernel's network model (conditions included),
    as the coordinator routes them: in (send time, sender, sequence) order, delivered at the drawn time."""

    def __init__(self, agents: dict, conditions=(), latency=Latency("uniform", 0.002, max_s=0.004)):
        self.env = simpy.Environment()
        self.outbox, self.events, self.sent = _Outbox(self._wake), [], []
        self._pending = False
        self.net = NetworkModel(11, latency, agents=list(agents))
        for c in conditions:
            self.net.add_condition(c)
        self.agents = {}
        for name, (cls, params) in agents.items():
            a = self.agents[name] = cls(name, AgentContext(self.env, 5, self.outbox, self.events, params))
            a.network = self.net
            a.start()

    def _wake(self):
        # route what was sent within half a lookahead: nothing sent can be due before then
        if not self._pending:
            self._pending = True
            self.env.timeout(self.net.lookahead / 2).callbacks.append(self._route)

    def _route(self, _ev):
        self._pending = False
        out = sorted(self.outbox, key=lambda m: (m.sent_t, m.src, m.seq))
        self.outbox.clear()
        for msg in out:
            self.sent.append(msg)
            if self.net.route(msg):
                dst = self.agents[msg.dst]
                ev = self.env.timeout(msg.deliver_t - self.env.now)
                ev.callbacks.append(lambda _e, m=msg, d=dst: d.deliver(m))

    def run(self, until):
        self.env.run(until=until)
        return self

    def expiries(self, owner="client"):
        return [e[0] for e in self.events if e[1] == "store" and e[3] == "store_session_expired"
                and e[4]["owner"] == owner]


STORE = (MetadataStore, {"op_latency_s": 0.001, "tick_s": TICK, "leader_paths": []})


def session_run(lease: bool, fault=None, conditions=(), until=120.0) -> Net:
    """A store and a client that opens its session at 0; ``fault(client)`` is applied at 40.3 s."""
    n = Net({"store": STORE, "client": (Client, {"lease": lease})}, conditions)
    if fault is not None:
        n.env.timeout(40.3).callbacks.append(lambda _e: fault(n.agents["client"]))
    return n.run(until)


def test_a_lease_sends_nothing_in_steady_state_and_the_store_knows_the_last_keep_alive():
    n = session_run(lease=True, until=600.0)
    client = [m.kind for m in n.sent if m.src == "client"]
    assert client == ["session_open", LEASE_BEAT]  # one declaration, then no message for ten minutes
    pings = [m for m in session_run(lease=False, until=600.0).sent if m.kind == "ping"]
    assert len(pings) > 250  # what the ping model sends meanwhile
    store, sid = n.agents["store"], n.agents["client"].session.id
    last = store.leases.scope_last(sid)
    assert n.env.now - PERIOD < last <= n.env.now
    anchor = next(m.sent_t for m in n.sent if m.kind == LEASE_BEAT)
    assert (last - anchor) / PERIOD == pytest.approx(round((last - anchor) / PERIOD))  # on the grid
    assert not n.expiries()


# (what happens to the client at 40.3 s, whether the session expires); the pause lengths straddle the
# documented bounds: up to the timeout less one period never expires, over the timeout plus a tick always does
FAULTS = [
    ("pause 0.5 s", lambda c: c.stop_the_world(0.5), False),
    ("pause 3.9 s", lambda c: c.stop_the_world(TIMEOUT - PERIOD - 0.1), False),
    ("pause 7.2 s", lambda c: c.stop_the_world(TIMEOUT + TICK + 0.2), True),
    ("pause 30 s", lambda c: c.stop_the_world(30.0), True),
    ("two overlapping pauses", lambda c: (c.stop_the_world(3.0), c.env.timeout(2.0).callbacks.append(
        lambda _e: c.stop_the_world(8.0))), True),
    ("crash", lambda c: c.crash(), True),
]


@pytest.mark.parametrize("name, fault, expires", FAULTS, ids=[f[0] for f in FAULTS])
def test_a_fault_of_the_client_expires_the_session_as_the_pings_would(name, fault, expires):
    pings, lease = session_run(False, fault), session_run(True, fault)
    if not expires:
        assert pings.expiries() == lease.expiries() == []
        assert pings.agents["client"].lost == lease.agents["client"].lost == []
        return
    (tp,), (tl,) = pings.expiries(), lease.expiries()
    assert tp > 40.3 + TIMEOUT - PERIOD - 0.1 and abs(tl - tp) <= BOUND
    if name != "crash":  # after the pause the client learns of it, on its next ping or on the resuming beat
        assert len(lease.agents["client"].lost) == len(pings.agents["client"].lost) == 1
        assert abs(lease.agents["client"].lost[0] - pings.agents["client"].lost[0]) <= BOUND


# network conditions on the client's link: (name, condition, whether the session expires)
CONDITIONS = [
    ("partition 20 s", Condition("partition", 40.3, 60.3, ("client",), ("store",)), True),
    ("partition 3 s", Condition("partition", 40.3, 43.3, ("client",), ("store",)), False),
    ("drop all 20 s", Condition("drop", 40.3, 60.3, ("client",), ("store",), probability=1.0), True),
    ("delay 0.5 s for 30 s", Condition("delay", 40.3, 70.3, ("client",), ("store",), extra_s=0.5), False),
    ("partition elsewhere", Condition("partition", 40.3, 90.0, ("other",), ("store",)), False),
]


@pytest.mark.parametrize("name, condition, expires", CONDITIONS, ids=[c[0] for c in CONDITIONS])
def test_a_network_fault_on_the_link_expires_the_session_as_the_pings_would(name, condition, expires):
    pings, lease = session_run(False, conditions=[condition]), session_run(True, conditions=[condition])
    if not expires:
        assert pings.expiries() == lease.expiries() == []
        assert lease.agents["client"].lost == []
    else:
        (tp,), (tl,) = pings.expiries(), lease.expiries()
        assert abs(tl - tp) <= BOUND
        # after the partition both learn that the session is gone: on the first ping, on the first real beat
        (lp,), (ll,) = pings.agents["client"].lost, lease.agents["client"].lost
        assert condition.end <= ll and abs(ll - lp) <= BOUND
    # the lease's messages happen only while the fault is on (and its declaration): none in steady state
    beats = [m.sent_t for m in lease.sent if m.src == "client" and m.kind == LEASE_BEAT]
    extra = [t for t in beats[1:] if not condition.start <= t <= condition.end + PERIOD]
    assert extra == [] or expires  # an expired session opens no new one here, so nothing follows either


def test_a_probabilistic_drop_is_drawn_by_the_network_for_each_keep_alive_while_it_lasts():
    drop = Condition("drop", 40.3, 80.3, ("client",), ("store",), probability=0.3)
    n = session_run(True, conditions=[drop])
    assert n.expiries() == []  # (this seed never loses three in a row)
    during = [m for m in n.sent if m.kind == LEASE_BEAT and 40.3 <= m.sent_t < 80.3]
    assert len(during) == 20  # one real keep-alive per period, no more
    assert all(b.sent_t - a.sent_t == pytest.approx(PERIOD) for a, b in zip(during, during[1:]))
    routed = [m for m in during if m.deliver_t > 0]
    assert 0 < len(routed) < len(during)  # some lost, some through: the network drew for each
    after = [m.sent_t for m in n.sent if m.kind == LEASE_BEAT and m.sent_t > 80.3]
    assert len(after) == 1 and after[0] <= 80.3 + PERIOD  # back in closed form at the first keep-alive after


def test_the_client_learns_that_a_crashed_store_lost_its_session_after_the_restart():
    outcomes = []
    for lease in (False, True):
        n = Net({"store": STORE, "client": (Client, {"lease": lease})})
        store = n.agents["store"]
        n.env.timeout(30.0).callbacks.append(lambda _e: store.crash())
        n.env.timeout(45.0).callbacks.append(lambda _e: store.start())
        n.run(80.0)
        outcomes.append(n.agents["client"].lost)
    (tp,), (tl,) = outcomes
    assert 45.0 <= tl and abs(tl - tp) <= BOUND


def poll_run(fault=None, conditions=(), writes=((12.3, "a"), (47.0, "b")), until=100.0) -> Net:
    n = Net({"store": STORE, "poller": (Poller, {}), "writer": (Writer, {"writes": list(writes)})}, conditions)
    if fault is not None:
        n.env.timeout(40.3).callbacks.append(lambda _e: fault(n.agents["poller"]))
    return n.run(until)


def next_poll(n: Net, t: float) -> float:
    poll = n.agents["poller"].poll
    return poll.next_beat(t)


def test_a_poll_lease_delivers_a_change_at_the_next_poll_and_nothing_else():
    n = poll_run()
    seen = n.agents["poller"].seen
    # the declaration's answer (nothing written yet), then each value once, a round trip after the poll that
    # first sees it
    assert seen[0][1] is None
    assert [v for _t, v in seen[1:]] == ["a", "b"]
    for (t, _v), written in zip(seen[1:], (12.3, 47.0)):
        assert 0 < t - next_poll(n, written) < 0.02
    polls = [m for m in n.sent if m.src == "poller" and m.kind == LEASE_BEAT]
    assert len(polls) == 3  # the declarations (session, heartbeat, poll): no poll is a message


def test_a_paused_poller_sees_a_change_when_its_pause_ends_and_a_partitioned_one_after_the_partition():
    paused = poll_run(lambda p: p.stop_the_world(15.0))
    assert [v for _t, v in paused.agents["poller"].seen] == [None, "a", "b"]
    assert 55.3 <= paused.agents["poller"].seen[-1][0] < 55.4  # the resuming poll answers at once
    cut = poll_run(conditions=[Condition("partition", 40.3, 62.0, ("poller",), ("store",))])
    t, v = cut.agents["poller"].seen[-1]
    assert v == "b" and 62.0 <= t <= next_poll(cut, 62.0) + 0.02 and not cut.expiries("poller")


def test_a_keep_alive_lease_on_a_field_is_what_a_reader_sees_until_the_client_crashes():
    n = poll_run(until=1.0)
    w, p = n.agents["writer"], n.agents["poller"]
    beat = p.beat
    for t in (30.0, 61.7):
        n.env.timeout(t - n.env.now).callbacks.append(lambda _e: w.get("/beat/poller"))
        n.run(t + 1.0)
    n.env.timeout(70.0 - n.env.now).callbacks.append(lambda _e: p.crash())
    n.env.timeout(85.0 - n.env.now).callbacks.append(lambda _e: w.get("/beat/poller"))
    n.run(90.0)
    (t1, d1), (t2, d2), (t3, d3) = w.read
    for t, d in ((t1, d1), (t2, d2)):
        assert t - 5.0 < d["time"] <= t and (d["time"] - beat.anchor) / 5.0 == pytest.approx(
            round((d["time"] - beat.anchor) / 5.0))
    assert d3["time"] <= 70.0 and 70.0 - d3["time"] < 5.0  # the last keep-alive before the crash


def test_a_lease_refuses_a_period_that_is_not_positive():
    n = Net({"store": STORE})
    with pytest.raises(ValueError):
        Lease(n.agents["store"], "x", "k", 0.0)


def test_a_crash_at_the_very_time_of_the_declaration_still_stops_the_lease():
    # the end notice leaves with the link's minimum latency and overtakes the declaration (random latency): the
    # store must not take the late declaration for a lease that runs
    n = Net({"store": STORE, "client": (Agent, {})}, latency=Latency("uniform", 0.002, max_s=0.010))
    client = n.agents["client"]
    n.run(1.0)
    Lease(client, "store", "k", 2.0).start()
    client.crash()
    n.run(30.0)
    assert n.agents["store"].leases.last("client", "k") in (None, 1.0)


def test_ending_a_lease_while_the_client_runs_on_freezes_its_last_keep_alive_at_the_server():
    # the client stops keeping contact with that server (it no longer talks to it) but does not stop itself
    n = Net({"store": STORE, "client": (Agent, {})})
    client = n.agents["client"]
    n.run(1.0)
    lease = Lease(client, "store", "k", 2.0).start()
    n.run(10.4)
    lease.end()
    assert lease.state == "ended" and client.alive
    n.run(30.0)
    assert n.agents["store"].leases.last("client", "k") == pytest.approx(9.0)  # 1 + 4 periods: the last made
    assert [m.kind for m in n.sent if m.src == "client"] == [LEASE_BEAT, "lease_notice"]
    lease.end()  # ending twice is a no-op
    n.run(40.0)
    assert len([m for m in n.sent if m.src == "client"]) == 2


# -- keep_grid: the lease of a fixed-rate task ------------------------------------------------------------------
# A fixed-rate kernel timer (period 10 s, first run at 1.3 s) sends a real "tick" every run, or a real "read" of
# the server's ``x``; the lease client declares a keep_grid lease at its own timer's first run (1.3 s) and
# cancels the timer. Both clients get the same pauses and the same conditions on their link to the server, and
# the server's view of each is compared: the last keep-alive that reached it, the data the reader got and when.
GRID = 10.0
FIRST = 1.3


class GridServer(Agent):
    """Holds the leases, ``x`` (written by :meth:`write`) and each timer client's last tick that reached it."""

    def on_start(self):
        self.data = {}
        self.ticks = {}
        self.leases = LeaseTable(self, read=self.data.get)

    def on_message(self, msg):
        if msg.kind == "tick":
            self.ticks[msg.src] = max(self.ticks.get(msg.src, -1.0), msg.body["t"])
        elif msg.kind == "read":
            self.send(msg.src, "data", {"data": self.data.get("x")})

    def write(self, value):
        self.data["x"] = value
        self.leases.changed("x")


class GridClient(Agent):
    """A fixed-rate task of period GRID: real ticks or reads (``lease`` False), or a lease declared at its first
    run (``keep_grid``: the option under test; ``form``: KEEPALIVE or POLL)."""

    def on_start(self):
        self.seen = []  # (time, data) of every answer to a read
        self.runs = []
        self.lease = None
        self.task = self.executor("t").schedule_at_fixed_rate(self._run, FIRST, GRID, name="grid")

    def _run(self):
        p = self.params
        self.runs.append(self.now)
        if not p["lease"]:
            self.send("server", "tick" if p["form"] == KEEPALIVE else "read", {"t": self.now})
            return
        self.task.cancel()
        self.lease = Lease(self, "server", "k", GRID, form=p["form"], target="x", keep_grid=p["keep_grid"],
                           origin=self.task.start if p.get("origin") else None,
                           on_reply=lambda body: self.seen.append((self.now, body.get("data")))).start()

    def on_message(self, msg):
        if msg.kind == "data":
            self.seen.append((self.now, msg.body["data"]))


def grid_run(pauses, conditions=(), form=KEEPALIVE, keep_grid=True, writes=(), until=120.0, origin=False) -> Net:
    """``timer`` (real runs) and ``lease`` under the same ``pauses`` ((start, length), ...) and ``conditions``."""
    conds = [Condition(c.kind, c.start, c.end, ("timer", "lease"), ("server",), probability=c.probability,
                       extra_s=c.extra_s) for c in conditions]
    n = Net({"server": (GridServer, {}),
             "timer": (GridClient, {"lease": False, "form": form}),
             "lease": (GridClient, {"lease": True, "form": form, "keep_grid": keep_grid, "origin": origin})}, conds)
    for start, length in pauses:
        for name in ("timer", "lease"):
            n.env.timeout(start).callbacks.append(lambda _e, a=n.agents[name], d=length: a.stop_the_world(d))
    server = n.agents["server"]
    for t, v in writes:
        n.env.timeout(t).callbacks.append(lambda _e, v=v: server.write(v))
    n.checks = []  # (time, the timer's last tick at the server, the lease's last keep-alive at the server)
    for i in range(int(until / 0.25)):
        t = 0.1 + 0.25 * i
        n.env.timeout(t).callbacks.append(lambda _e: n.checks.append(
            (n.env.now, server.ticks.get("timer"), server.leases.last("lease", "k"))))
    return n.run(until)


def grid_mismatches(n: Net) -> list:
    """The checks where the server's last keep-alive of the lease is not the timer's last tick, leaving out a
    check within a delivery (20 ms) after one of the timer's runs or a pause's end (the messages in flight)."""
    runs = n.agents["timer"].runs
    return [(t, tick, last) for t, tick, last in n.checks
            if tick is not None and last != pytest.approx(tick) and not any(0 <= t - r < 0.02 for r in runs)]


# (name, pauses, conditions): every pause holds the clients over at least one run of the grid; the last two add
# a second pause before the next run after the first one's end, and a partition after a re-anchoring
GRID_FAULTS = [
    ("short pause over one run", [(40.0, 3.5)], ()),
    ("long pause over three runs", [(40.0, 27.0)], ()),
    ("a second pause before the next run", [(40.0, 3.5), (48.0, 6.0)], ()),
    ("a partition after a pause", [(40.0, 3.5)], (Condition("partition", 55.0, 77.0, (), ()),)),
]


@pytest.mark.parametrize("name, pauses, conditions", GRID_FAULTS, ids=[f[0] for f in GRID_FAULTS])
def test_a_keep_grid_lease_keeps_contact_as_a_fixed_rate_timer_through_pauses(name, pauses, conditions):
    n = grid_run(pauses, conditions)
    timer = n.agents["timer"].runs
    assert len(timer) >= 11 and any(r % GRID != pytest.approx(FIRST) for r in timer)  # overdue runs happened
    assert len(n.checks) > 400 and grid_mismatches(n) == []
    # the lease's client sent real beats only at the pause's end and during the partition
    beats = [m.sent_t for m in n.sent if m.src == "lease" and m.kind == LEASE_BEAT]
    assert beats[0] == pytest.approx(FIRST)
    assert all(any(s <= t <= s + d for s, d in pauses) or any(c.start <= t <= c.end + GRID for c in conditions)
               for t in beats[1:])
    # the default re-anchors on the pause's end: the server's view leaves the timer's grid
    assert grid_mismatches(grid_run(pauses, conditions, keep_grid=False)) != []


def test_a_keep_grid_poll_lease_delivers_at_the_runs_a_fixed_rate_reader_would_make():
    # a write during the pause (seen by the overdue run at its end), one between its end and the next run of the
    # grid, one while the client runs on the grid again
    writes = [(42.0, "a"), (52.0, "b"), (83.0, "c")]
    pauses = [(40.0, 7.5)]
    n = grid_run(pauses, form=POLL, writes=writes)

    def changes(seen):
        out, last = [], object()
        for t, v in seen:
            if v != last:
                out.append((t, v))
                last = v
        return out

    timer, lease = changes(n.agents["timer"].seen), changes(n.agents["lease"].seen)
    assert [v for _t, v in timer] == [v for _t, v in lease] == [None, "a", "b", "c"]
    assert all(abs(tl - tt) < 0.02 for (tt, _), (tl, _) in zip(timer, lease))
    assert 47.5 <= timer[1][0] < 47.52 and timer[2][0] == pytest.approx(61.3, abs=0.02)
    default = changes(grid_run(pauses, form=POLL, writes=writes, keep_grid=False).agents["lease"].seen)
    assert default[2][0] == pytest.approx(57.5, abs=0.02)  # re-anchored: a period after the pause's end


def test_a_lease_declared_by_an_overdue_run_keeps_the_grid_it_is_given():
    # a pause holds the first run (due at 1.3 s) until 4.5 s: the declaration is off the task's grid, whose origin
    # the lease is given; without it the keep-alives would follow the declaration (4.5 + k·10 s)
    pauses = [(1.0, 3.5), (40.0, 3.5)]
    n = grid_run(pauses, origin=True)
    assert n.agents["lease"].runs[0] == pytest.approx(4.5)
    assert len(n.checks) > 400 and grid_mismatches(n) == []
    assert grid_mismatches(grid_run(pauses)) != []
    with pytest.raises(ValueError, match="keep_grid"):
        Lease(n.agents["lease"], "server", "k2", GRID, origin=0.0)


class Publisher(Agent):
    """Declares a keep-alive lease every 2 s from 1 s and publishes its state at the times of its param."""

    def on_start(self):
        self.executor("t").schedule(lambda: Lease(self, "server", "k", 2.0).start(), 1.0)
        for t, state in self.params["states"]:
            self.executor("t").schedule(lambda state=state: publish(self, "server", "k", state), t)


def test_a_keep_alive_carries_the_state_published_last_before_it_once_its_message_could_have_arrived():
    # latency 2-4 ms: a keep-alive made at s counts from s + 2 ms; a state published at t has arrived by t + 2 ms
    n = Net({"server": (GridServer, {}), "client": (Publisher, {"states": [(0.5, "a"), (6.5, "b"), (6.9, "c")]})})
    table = n.agents["server"].leases
    reads = {}
    for t in (0.9, 5.5, 7.0015, 7.0025, 9.1, 9.2):
        n.env.timeout(t).callbacks.append(lambda _e, t=t: reads.__setitem__(t, table.read_at("client", "k")))
    n.run(10.0)
    assert reads[0.9] is None  # no lease yet
    assert reads[5.5] == (5.0, 0.5, "a")
    assert reads[7.0015] == (5.0, 0.5, "a")  # the keep-alive of 7 s could not have arrived yet
    assert reads[7.0025] == (7.0, 6.9, "c")  # the last state published before it
    assert reads[9.1] == reads[9.2] == (9.0, 6.9, "c")
    assert table.min_latency("client") == pytest.approx(0.002)
    assert table.read_at("client", "other") is None
    # the kernel sent the states as notices, after the link's minimum latency whatever its conditions
    assert [m.deliver_t - m.sent_t for m in n.sent if m.kind == "lease_state"] == pytest.approx([0.002] * 3)


class ScopedClient(Agent):
    """A keep-alive lease every 2 s from 1 s in the scope named by its param."""

    def on_start(self):
        self.executor("t").schedule(
            lambda: Lease(self, "server", "k", 2.0, scope=self.params["scope"]).start(), 1.0)


def test_the_server_counts_the_scopes_whose_keep_alives_are_in_closed_form():
    n = Net({"server": (GridServer, {}), "a": (ScopedClient, {"scope": "s1"}), "b": (ScopedClient, {"scope": "s2"}),
             "c": (ScopedClient, {"scope": "s2"})})
    table = n.agents["server"].leases
    counts = {}
    for t in (0.5, 2.0, 6.0, 8.0, 12.0):
        n.env.timeout(t).callbacks.append(lambda _e, t=t: counts.__setitem__(t, table.scopes_running))
    n.env.timeout(4.5).callbacks.append(lambda _e: n.agents["a"].stop_the_world(2.0))  # over its keep-alive at 5
    n.env.timeout(10.0).callbacks.append(lambda _e: n.agents["b"].crash())  # c keeps s2 in closed form
    n.env.timeout(11.0).callbacks.append(lambda _e: n.agents["c"].crash())
    n.run(14.0)
    assert counts == {0.5: 0, 2.0: 2, 6.0: 1, 8.0: 2, 12.0: 1}
    assert [table.scope_running(s) for s in ("s1", "s2")] == [True, False]


# -- many leases of one client, on a few grids: a pause asks each grid once -----------------------------------
class ManyLeases(Agent):
    """Three leases on one kept grid (a heartbeat to each of three servers), one on another kept grid, one
    re-anchored at every pause that stops it (the default), and, started after an executor's task began to
    listen for pauses, one more on the first grid (a later run of listeners)."""

    def on_start(self):
        self.leases = {}
        self.spawn(self._boot())

    def _boot(self):
        yield from self.sleep(1.0)
        for i in range(3):
            self.leases[f"hb{i}"] = Lease(self, "server", f"hb{i}", 3.0, keep_grid=True).start()
        yield from self.sleep(0.7)
        self.leases["route"] = Lease(self, "server", "route", 5.0, keep_grid=True).start()
        self.leases["moving"] = Lease(self, "server", "moving", 2.0).start()
        # a task whose runs skip ahead listens for pauses from its first run on
        self.idle = self.executor("t").schedule_at_fixed_rate(
            lambda: self.idle.skip_until(self.now + 50.0, idle=True), 0.4, 1.0, name="idle")
        yield from self.sleep(2.0)
        self.leases["late"] = Lease(self, "server", "late", 3.0, keep_grid=True, origin=1.0).start()


def test_every_lease_of_a_client_on_several_grids_is_stopped_by_the_pauses_that_reach_its_keep_alives():
    rng = random.Random(7)
    pauses, t = [], 6.0
    while t < 170.0:  # mostly short pauses that reach no keep-alive, a few long ones that reach some
        length = rng.choice([0.02, 0.05, 0.3, 1.2, 2.5, 4.0])
        pauses.append((t, length))
        t += length + rng.uniform(0.5, 4.0)
    n = Net({"server": (GridServer, {}), "client": (ManyLeases, {})})
    client, table = n.agents["client"], n.agents["server"].leases
    for start, length in pauses:
        n.env.timeout(start).callbacks.append(lambda _e, d=length: client.stop_the_world(d))
    checks = []  # (time, lease, the server's last keep-alive)
    for i in range(int(180.0 / 0.05)):
        n.env.timeout(6.0 + 0.05 * i).callbacks.append(lambda _e: checks.extend(
            (n.env.now, k, table.last("client", k)) for k in client.leases))
    n.run(180.0)
    assert len(client.gate.close_listeners) == 3  # the first five leases, the executor, the late one
    stopped = {m.body["lease"] for m in n.sent if m.src == "client" and m.kind == "lease_notice"}
    assert stopped == set(client.leases)  # every grid was reached by some pause
    # a notice leaves at the keep-alive a pause reached, inside that pause
    assert all(any(s <= m.sent_t < s + d for s, d in pauses) for m in n.sent if m.kind == "lease_notice")
    lag = 0.004  # a stop notice's latency, at most
    inside = 0
    for t, key, last in checks:
        for start, length in pauses:
            if start < t < start + length and last is not None and last > start:
                # nothing is made during a pause: a keep-alive the server counts inside it is one whose stop
                # notice is still on its way
                inside += 1
                assert last > t - lag, (t, key, last, start, length)
    assert inside  # the checks saw such keep-alives (the notices' latency), so they looked at the right times
