"""A client group: the producers and consumers of a share of the topics, as one agent.

Per topic: look the topic up through a broker of the service URL (the initial brokers: random at first, then
round robin, as Pulsar's resolver does; a stopped broker's host refuses at once), follow redirects (``maxLookupRedirects``,
resending with the last redirect's ``authoritative`` flag), connect to the broker that answered Connect; when
the connection is closed (unload, broker down), reconnect after Pulsar's back-off and look up again. A topic that
is connected has no process of its own, so clients of a million topics cost memory only when they move.
"""
from __future__ import annotations

from typing import Any, Generator

from clusteremu.emulator.agent import Agent
from clusteremu.emulator.messages import Message

from . import events  # noqa: F401


class Backoff:
    """Pulsar client's ``Backoff``: starts at ``initial_ms``, doubles up to ``max_ms``, and each delay is
    randomly shortened by up to 10 % so that clients do not retry in lockstep; ``reset`` on success."""

    def __init__(self, initial_ms: int, max_ms: int, rng) -> None:
        self.initial = initial_ms
        self.max = max_ms
        self.next_ms = initial_ms
        self.rng = rng

    def next(self) -> float:
        current = self.next_ms
        if current < self.max:
            self.next_ms = min(self.next_ms * 2, self.max)
        if current > 10:
            current -= int(self.rng.integers(0, current // 10))
        return max(self.initial, current) / 1000.0

    def reset(self) -> None:
        self.next_ms = self.initial


class Client(Agent):
    kind = "client"

    def on_start(self) -> None:
        p = self.params
        self.brokers: list[str] = p["brokers"]
        self.connected: dict[str, str] = {}
        self.down_since: dict[str, float] = {}
        self.backoffs: dict[str, Backoff] = {}
        self.host_index: dict[str, int] = {}  # per topic: the service URL resolver's position
        self.reconnecting: set[str] = set()
        self.ever_connected: set[str] = set(p.get("connected", {}))
        for topic, broker in p.get("connected", {}).items():
            self.connected[topic] = broker
        jitter = self.rng("start")
        for topic in p["topics"]:
            if topic not in self.connected:
                self.down_since[topic] = self.now
                self._start(topic, float(jitter.uniform(0, p["start_jitter_s"])))

    def _start(self, topic: str, delay: float) -> None:
        if topic in self.reconnecting:
            return
        self.reconnecting.add(topic)
        self.spawn(self._connect_loop(topic, delay))

    def on_message(self, msg: Message) -> None:
        if msg.kind == "close":
            topic = msg.body["topic"]
            if self.connected.get(topic) == msg.src:
                del self.connected[topic]
                self.down_since[topic] = self.now
                self.emit("topic_disconnected", topic=topic, broker=msg.src, reason=msg.body["reason"])
                target = msg.body.get("target")
                if target:  # a transfer names the new owner: connect there at once, without a lookup
                    self.spawn(self._direct(topic, target))
                else:  # ConnectionHandler.connectionClosed: wait backoff.next() (100 ms at first), then look up
                    wait = self._backoff(topic).next()
                    self.emit("reconnect_scheduled", topic=topic, attempt=0, backoff_s=wait)
                    self._start(topic, wait)

    def _backoff(self, topic: str) -> Backoff:
        b = self.backoffs.get(topic)
        if b is None:
            p = self.params
            b = self.backoffs[topic] = Backoff(p["initialBackoffIntervalMs"], p["maxBackoffIntervalMs"], self.rng("backoff"))
        return b

    def _connect_loop(self, topic: str, delay: float) -> Generator:
        if delay > 0:
            yield from self.sleep(delay)
        attempt = 0
        while True:
            broker, hops = yield from self._lookup(topic)
            if broker is not None and (yield from self._connect(topic, broker, hops)):
                self.reconnecting.discard(topic)
                self._backoff(topic).reset()
                return
            attempt += 1
            wait = self._backoff(topic).next()
            self.emit("reconnect_scheduled", topic=topic, attempt=attempt, backoff_s=wait)
            yield from self.sleep(wait)

    def _direct(self, topic: str, broker: str) -> Generator:
        self.reconnecting.add(topic)
        if (yield from self._connect(topic, broker, 0)):
            self.reconnecting.discard(topic)
            return
        self.reconnecting.discard(topic)
        self._start(topic, self._backoff(topic).next())

    def _resolve_host(self, topic: str) -> str:
        """``PulsarServiceNameResolver.resolveHost``: round robin over the service URL's hosts from a random
        first one. Each topic's producers and consumers stand for their own client instance, so each topic has
        its own position; a retry after a dead host therefore asks the next host, not a random one."""
        i = self.host_index.get(topic)
        i = int(self.rng("lookup").integers(len(self.brokers))) if i is None else (i + 1) % len(self.brokers)
        self.host_index[topic] = i
        return self.brokers[i]

    def _lookup(self, topic: str) -> Generator[Any, Any, tuple[str | None, int]]:
        """Follow the lookup protocol; return (broker to connect to or None on failure, hops taken)."""
        p = self.params
        target = self._resolve_host(topic)
        authoritative = False
        for hop in range(1, p["maxLookupRedirects"] + 2):
            r = yield from self.call(target, "lookup", {"topic": topic, "authoritative": authoritative},
                                     timeout=p["lookupTimeoutMs"] / 1000.0)
            if r is None:
                self.emit("lookup_hop", topic=topic, hop=hop, broker=target, response="timeout",
                          target="", authoritative=authoritative)
                return None, hop
            response = r["response"]
            self.emit("lookup_hop", topic=topic, hop=hop, broker=target, response=response,
                      target=r.get("target", ""), authoritative=r.get("authoritative", False))
            if response == "connect":
                return r["target"], hop
            if response != "redirect":
                return None, hop
            target, authoritative = r["target"], r["authoritative"]
        return None, p["maxLookupRedirects"] + 1

    def _connect(self, topic: str, broker: str, hops: int) -> Generator[Any, Any, bool]:
        r = yield from self.call(broker, "connect", {"topic": topic}, timeout=self.params["operationTimeoutMs"] / 1000.0)
        if r is None or not r["ok"]:
            return False
        self.connected[topic] = broker
        since = self.down_since.pop(topic, self.now)
        first = topic not in self.ever_connected
        self.ever_connected.add(topic)
        self.emit("topic_connected", topic=topic, broker=broker, hops=hops,
                  unavailable_s=0.0 if first else self.now - since)
        return True
