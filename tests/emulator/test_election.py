"""Metadata-store sessions and leader elections (the kernel's client side), against a minimal ZooKeeper-like store
whose agent name, election path and message kinds are not Pulsar's: a Storm Nimbus would use them this way."""
from __future__ import annotations

import simpy

from clusteremu.emulator.agent import Agent, AgentContext
from clusteremu.emulator.election import LeaderElection, MetadataSession, StoreProtocol
from clusteremu.emulator.metadata_store import MetadataStore

LATENCY = 0.01
PROTOCOL = StoreProtocol("zookeeper", session_open="connect", ping="ping", session_close="close",
                         create="create", watch="watch", notify="watched")
PATH = "/nimbus/leader-lock"


class Store(Agent):
    """Sessions that expire after their timeout, ephemeral nodes and prefix watches; nothing else."""

    def on_start(self):
        self.nodes, self.sessions, self.watches = {}, {}, {}
        self.executor().schedule_with_fixed_delay(self._expire, 1.0, 1.0)

    def on_message(self, msg):
        body, p = msg.body, PROTOCOL
        sid = body.get("session")
        if sid is not None:
            if sid not in self.sessions:
                return self.reply(msg, {"expired": True})
            self.sessions[sid][1] = self.now
        if msg.kind == p.session_open:
            sid = f"{msg.src}#{len(self.sessions) + 1}"
            self.sessions[sid] = [body["timeout_s"], self.now]
            self.reply(msg, {"ok": True, "session": sid})
        elif msg.kind == p.create:
            if body["path"] in self.nodes:
                return self.reply(msg, {"ok": False, "data": self.nodes[body["path"]][0]})
            self.nodes[body["path"]] = (body["data"], sid)
            self._notify(body["path"], "created", body["data"])
            self.reply(msg, {"ok": True})
        elif msg.kind == p.watch:
            self.watches.setdefault(body["prefix"], []).append(msg.src)
            self.reply(msg, {"ok": True})
        else:
            if msg.kind == p.session_close:
                self._drop(sid)
            self.reply(msg, {"ok": True})

    def _expire(self):
        for sid in [s for s, (timeout, last) in self.sessions.items() if self.now - last > timeout]:
            self._drop(sid)

    def _drop(self, sid):
        del self.sessions[sid]
        for path in [p for p, (_d, owner) in self.nodes.items() if owner == sid]:
            del self.nodes[path]
            self._notify(path, "deleted", None)

    def _notify(self, path, change, data):
        for prefix, watchers in self.watches.items():
            if path.startswith(prefix):
                for w in watchers:
                    self.send(w, PROTOCOL.notify, {"path": path, "change": change, "data": data})


class Nimbus(Agent):
    """How a Storm Nimbus would elect its leader: a session, an election on its path, notifications routed."""

    def on_start(self):
        self.elected: list[tuple[float, str]] = []
        self.lost: list[float] = []
        self.protocol = self.params["protocol"]
        self.session = MetadataSession(self, self.protocol, timeout_s=3.0, op_timeout_s=2.0, on_lost=self._lost,
                                       lease=self.params.get("lease", False))
        self.election = LeaderElection(self.session, PATH,
                                       on_elected=lambda prev: self.elected.append((self.now, prev)))
        self.spawn(self._boot())

    def _boot(self):
        if (yield from self.session.open()):
            yield from self.election.run()

    def _lost(self):
        self.lost.append(self.now)
        self.election.forget()
        self.spawn(self._boot())

    def on_message(self, msg):
        if msg.kind == self.protocol.notify and msg.body["path"] == PATH:
            self.election.on_notify(msg.body["change"], msg.body["data"])


class Cluster:
    """Agents on one environment; every message arrives ``LATENCY`` after it is sent."""

    def __init__(self, names, store=Store, protocol=PROTOCOL, store_params=None, lease=False):
        self.env = simpy.Environment()
        self.outbox, self.events = [], []
        self.agents = {}
        self.sent = []
        for name in names:
            if name == protocol.store:
                self.agents[name] = store(name, AgentContext(self.env, 1, self.outbox, self.events, store_params or {}))
            else:
                self.agents[name] = Nimbus(name, AgentContext(self.env, 1, self.outbox, self.events,
                                                              {"protocol": protocol, "lease": lease}))
        for a in self.agents.values():
            a.start()
        self.env.process(self._route())

    def _route(self):
        while True:
            yield self.env.timeout(LATENCY / 2)
            out, self.outbox[:] = list(self.outbox), []
            for msg in out:
                self.sent.append(msg)
                dst = self.agents[msg.dst]
                self.env.timeout(LATENCY).callbacks.append(lambda _e, m=msg, d=dst: d.deliver(m))


def test_one_leader_and_the_others_learn_its_name():
    c = Cluster(["zookeeper", "nimbus-1", "nimbus-2", "nimbus-3"])
    c.env.run(until=20)
    leaders = [n for n in ("nimbus-1", "nimbus-2", "nimbus-3") if c.agents[n].election.is_leader]
    assert len(leaders) == 1
    assert all(c.agents[n].election.leader == leaders[0] for n in ("nimbus-1", "nimbus-2", "nimbus-3"))
    # elected once; ``previous`` is the leader known when the create was answered: the store's notification of
    # the new node travels with the reply and is delivered first, so it names the winner itself
    assert [prev for _t, prev in c.agents[leaders[0]].elected] == [leaders[0]]


def test_a_paused_leader_loses_its_session_and_another_takes_over():
    c = Cluster(["zookeeper", "nimbus-1", "nimbus-2"])
    c.env.run(until=5)
    first = next(n for n in ("nimbus-1", "nimbus-2") if c.agents[n].election.is_leader)
    other = "nimbus-2" if first == "nimbus-1" else "nimbus-1"
    c.agents[first].stop_the_world(10.0)  # longer than the session timeout: no pings
    c.env.run(until=30)
    assert c.agents[other].election.is_leader
    assert c.agents[other].elected[0][1] == first
    assert c.agents[first].lost  # it learns of the expiry after the pause, reconnects and follows
    assert c.agents[first].session.is_open and c.agents[first].election.leader == other


def test_the_kernels_metadata_store_speaks_the_default_protocol():
    protocol = StoreProtocol("zookeeper")
    c = Cluster(["zookeeper", "nimbus-1", "nimbus-2"], store=MetadataStore, protocol=protocol,
                store_params={"op_latency_s": 0.001, "tick_s": 1.0, "leader_paths": [PATH]})
    c.env.run(until=5)
    first = next(n for n in ("nimbus-1", "nimbus-2") if c.agents[n].election.is_leader)
    other = "nimbus-2" if first == "nimbus-1" else "nimbus-1"
    c.agents[first].crash()
    c.env.run(until=15)
    assert c.agents[other].election.is_leader and c.agents[other].elected[-1][1] == first
    kinds = [e[3] for e in c.events if e[1] == "zookeeper"]
    assert "store_session_expired" in kinds and "leader_vacant" in kinds


def test_a_session_kept_by_a_lease_sends_no_ping_and_a_paused_leader_still_loses_it():
    protocol = StoreProtocol("zookeeper")
    c = Cluster(["zookeeper", "nimbus-1", "nimbus-2"], store=MetadataStore, protocol=protocol, lease=True,
                store_params={"op_latency_s": 0.001, "tick_s": 1.0, "leader_paths": [PATH]})
    c.env.run(until=60)
    assert not [m for m in c.sent if m.kind == protocol.ping]  # a minute of sessions: not one ping
    first = next(n for n in ("nimbus-1", "nimbus-2") if c.agents[n].election.is_leader)
    other = "nimbus-2" if first == "nimbus-1" else "nimbus-1"
    c.agents[first].stop_the_world(10.0)  # longer than the session timeout: the lease stops at its next keep-alive
    c.env.run(until=90)
    assert c.agents[other].election.is_leader and c.agents[other].elected[-1][1] == first
    expired = [e for e in c.events if e[1] == "zookeeper" and e[3] == "store_session_expired"]
    assert len(expired) == 1 and 60 + 3.0 - 1.0 <= expired[0][0] <= 60 + 3.0 + 1.0 + 1.0
    assert c.agents[first].lost and 70 <= c.agents[first].lost[0] < 70.1  # its resuming keep-alive is told
    assert c.agents[first].session.is_open and c.agents[first].election.leader == other
