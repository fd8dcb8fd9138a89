"""The conservative-window loop as every worker of a mesh runs it (DESIGN.md principle 3, without a router).

Components:

* :class:`WindowLoop` — one worker's side of the windows: it runs its agents over [T, end), routes what they
  sent through its own copy of the network model, keeps the deliveries to its own agents and hands the others to
  an :class:`Exchange`, which returns the global next time and the messages the other workers routed to it.
* :class:`Exchange` — the per-window all-to-all: every worker sends each peer one frame (its candidate next time
  and the messages for that peer's agents) and waits for one frame from each peer. ``peers.ZmqExchange`` does it
  over ZeroMQ; :class:`SoloExchange` is the exchange of a mesh of one.
* :class:`LoopStats` — what a worker counted, summed by the coordinator.

Why it gives the coordinator's trace, event for event:

* Every worker computes the same window sequence: the next window starts at the minimum over the workers'
  candidates (each its next event, its earliest pending delivery and the earliest delivery it is sending), which
  is the coordinator's minimum over next events and pending deliveries; the end is ``min(start + L, until)``.
* The network model's draws are keyed by the sender and consumed in the sender's own message order, its
  conditions are functions of (send time, sender, receiver): so the sender's worker, routing its agents' messages
  in (send time, sender, sequence) order, sets the delivery times the coordinator would have set.
* A worker schedules the deliveries due in a window at its start, in canonical order (time, receiver, sender,
  sequence), from the previous window's end, as the coordinator's ``advance`` did.
* Dropped messages are reported as ``(send time, sender, fields)`` in routing order; the coordinator numbers
  them in (send time, sender) order, which is the order in which it would have found them.
"""
from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from .. import collector
from ..messages import Message
from ..network import NetworkModel
from ..worker import Worker


class Exchange(Protocol):
    """One worker's end of the per-window all-to-all exchange."""

    def __call__(self, window: int, candidate: float, outbound: list[list[list]]) -> tuple[float, list[list]]:
        """Send ``outbound[p]`` (``Message.to_wire`` lists) and ``candidate`` to every peer ``p`` for ``window``;
        return the minimum of all workers' candidates and the wire lists the peers sent to this worker."""


class SoloExchange:
    """The exchange of a mesh of one worker: nothing to send, its own candidate is the minimum.

    ``on_window(window)``, if given, is called after each window (progress notes)."""

    def __init__(self, on_window: Callable[[int], None] | None = None) -> None:
        self._on_window = on_window

    def __call__(self, window: int, candidate: float, outbound: list[list[list]]) -> tuple[float, list[list]]:
        if self._on_window is not None:
            self._on_window(window)
        return candidate, []


@dataclass
class LoopStats:
    """What one worker counted; the coordinator sums messages, drops and events over the workers."""

    windows: int = 0
    messages: int = 0
    dropped: int = 0
    events: int = 0
    virtual_time: float = 0.0
    #: the network's events about this worker's senders' messages, ``[t, sender, kind, fields]``, in routing order
    drops: list[list[Any]] = field(default_factory=list)
    #: mesh frames and bytes this worker sent (0 for a mesh of one)
    frames: int = 0
    bytes: int = 0
    #: wall seconds in its agents' windows, and in the exchanges (sending, then waiting for its peers' frames);
    #: the rest of the loop is routing and queueing
    advance_s: float = 0.0
    exchange_s: float = 0.0
    loop_s: float = 0.0
    #: peers its mesh inbox refused, by reason (tcp; ``transport.refused_peers`` in the manifest)
    refused: dict[str, int] = field(default_factory=dict)


class WindowLoop:
    """Runs ``worker``'s share of the windows up to ``until``; ``owner`` maps every agent of the run to its worker."""

    def __init__(self, worker: Worker, network: NetworkModel, owner: dict[str, int], me: int, n_workers: int,
                 until: float) -> None:
        self.worker = worker
        self.network = network
        self.owner = owner
        self.me = me
        self.n_workers = n_workers
        self.until = until
        self.stats = LoopStats()
        network.agents = set(owner)
        network._emit = self._dropped

    def _dropped(self, kind: str, t: float, **fields: Any) -> None:
        self.stats.drops.append([t, fields.get("src", ""), kind, fields])

    def run(self, exchange: Exchange) -> LoopStats:
        worker, stats, until, me = self.worker, self.stats, self.until, self.me
        L = self.network.lookahead
        route = self.network.route
        owner = self.owner
        from_wire = Message.from_wire
        heappush, heappop = heapq.heappush, heapq.heappop
        pending: list[tuple[tuple, Message]] = []  # deliveries to this worker's agents, by canonical key
        n = self.n_workers
        since = 0.0
        window = 0
        clock = time.perf_counter
        started = clock()
        advance_s = exchange_s = 0.0
        with collector.windows():
            t_next, inbound = exchange(window, worker.next_time(), [[] for _ in range(n)])
            while not (math.isinf(t_next) or t_next >= until):
                for w in inbound:
                    msg = from_wire(w)
                    heappush(pending, (msg.delivery_key, msg))
                end = min(t_next + L, until)
                due: list[Message] = []
                while pending and pending[0][0][0] < end:
                    due.append(heappop(pending)[1])
                t0 = clock()
                sent, candidate, n_events = worker.advance(end, due, since)
                advance_s += clock() - t0
                collector.check()
                stats.events += n_events
                stats.windows += 1
                stats.virtual_time = since = end
                outbound: list[list[list]] = [[] for _ in range(n)]
                if sent:
                    # No sort into (send time, sender, sequence) order: a route depends only on the message and its
                    # sender's generator, and a sender's messages are in the outbox in its own sequence order.
                    stats.messages += len(sent)
                    for msg in sent:
                        if not route(msg):
                            stats.dropped += 1
                            continue
                        dst = owner[msg.dst]
                        if dst == me:
                            heappush(pending, (msg.delivery_key, msg))
                        else:
                            outbound[dst].append(msg.to_wire())
                            if msg.deliver_t < candidate:
                                candidate = msg.deliver_t
                if pending and pending[0][0][0] < candidate:
                    candidate = pending[0][0][0]
                window += 1
                t0 = clock()
                t_next, inbound = exchange(window, candidate, outbound)
                exchange_s += clock() - t0
        stats.virtual_time = until
        stats.advance_s, stats.exchange_s, stats.loop_s = advance_s, exchange_s, clock() - started
        return stats
