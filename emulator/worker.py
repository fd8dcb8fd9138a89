"""A worker: one SimPy environment advancing the agents placed on it, window by window.

The coordinator grants windows [T, end); the worker schedules the inbound messages due in it (already in
canonical delivery order), runs its environment to ``end``, writes the window's events to its own trace
segments, and hands back the messages its agents sent. It never sees another worker's agents.
"""
from __future__ import annotations

import gc
import math
from heapq import heappop, heappush
from pathlib import Path
from typing import Callable, Protocol

import simpy
from simpy.events import NORMAL

from . import collector
from .agent import Agent, AgentContext
from .faults import AgentFault
from .messages import Message
from .models import AgentSpec, resolve_factory
from .network import NetworkModel
from .timer import Timer
from .trace.batch import PackedEvents
from .trace.writer import DEFAULT_SEGMENT_BYTES, SegmentWriter, WriterSummary


#: Collector thresholds of a process that hosts a worker. SimPy allocates several objects per step and the agents
#: keep many long-lived ones; with CPython's defaults (700, 10, 10) collection took about a fifth of a run's wall
#: time (measured on the reconnect storm of ``benchmarks/transport_bench.py``). Almost nothing a run allocates is
#: cyclic garbage (a few hundred objects an hour), but most of it lives for seconds of virtual time (timers,
#: pending messages, trace records waiting for their batch): every such object a young collection passes on was
#: traversed again by the older generations' collections, every 20. Those now run every 1,000 young ones (10
#: million allocations), which halves collection time (rocketmq-large: 7.8 to 4.0 s an hour) at the same peak
#: memory. A larger young threshold costs more (its collections miss the cache). These thresholds govern the
#: agents' building and anything outside the windows; while windows run, :func:`.collector.windows` collects by
#: growth instead.
GC_THRESHOLDS = (10_000, 1_000, 10)


def _run_window(env: simpy.Environment, until: float) -> None:
    """Run every event due before ``until``, then stand the clock at ``until``.

    Stepped by hand rather than ``env.run(until=...)``: SimPy leaves its stop event in the queue, which would make
    ``peek()`` report the window's end instead of the next real event. The loop is ``Environment.step``'s, inlined
    (millions of steps an hour at scale); no StopSimulation is ever raised here."""
    queue = env._queue
    while queue and queue[0][0] < until:
        env._now, _, _, event = heappop(queue)
        callbacks, event.callbacks = event.callbacks, None
        for callback in callbacks:
            callback(event)
        if not event._ok and not hasattr(event, "_defused"):
            # a failed event nobody handled: crash the run, as Environment.step does
            exc = type(event._value)(*event._value.args)
            exc.__cause__ = event._value
            raise exc
    if env._now < until:
        env._now = until


def _deliver(timer: "_Delivery") -> None:
    timer.agent.deliver(timer.msg)


class _Delivery(Timer):
    """A message's delivery to its receiver, due in the current window (a :class:`~.timer.Timer`)."""

    __slots__ = ("msg", "agent")

    def __init__(self, msg: Message, agent: Agent) -> None:
        self.callbacks = [_deliver]
        self.msg, self.agent = msg, agent


class Worker:
    def __init__(
        self,
        worker_id: int,
        seed: int,
        specs: list[AgentSpec],
        run_dir: str | Path,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
    ) -> None:
        self.worker_id = worker_id
        if gc.get_threshold()[0] < GC_THRESHOLDS[0]:
            gc.set_threshold(*GC_THRESHOLDS)
        self.env = simpy.Environment()
        self._outbox: list[Message] = []
        self._events = PackedEvents()  # packed as the agents emit them (trace/batch.py)
        self.writer = SegmentWriter(Path(run_dir) / "events", f"w{worker_id:03d}", segment_bytes)
        self.agents: dict[str, Agent] = {}
        for spec in specs:
            ctx = AgentContext(self.env, seed, self._outbox, self._events, spec.params)
            agent = resolve_factory(spec.factory)(spec.name, ctx)
            self.agents[spec.name] = agent
            start = self.env.timeout(spec.start_at)
            start.callbacks.append(lambda _ev, a=agent: a.start())

    def schedule_faults(self, faults: list[AgentFault]) -> None:
        """Arm the agent-level faults of the schedule that concern this worker's agents."""
        for f in faults:
            agent = self.agents.get(f.agent)
            if agent is None:
                continue
            ev = self.env.timeout(f.at - self.env.now)
            ev.callbacks.append(lambda _ev, a=agent, f=f: a.on_fault(f.kind, f.spec))

    def attach_network(self, network: NetworkModel) -> None:
        """Let this worker's agents read the run's network model (its links and scheduled conditions): a lease
        needs to know when the conditions on its link begin and end."""
        for agent in self.agents.values():
            agent.network = network

    @property
    def agent_names(self) -> list[str]:
        return list(self.agents)

    def next_time(self) -> float:
        """Virtual time of this worker's next event (inf when it has none)."""
        return self.env.peek()

    def advance(self, until: float, inbound: list[Message], since: float = 0.0) -> tuple[list[Message], float, int]:
        """Run the window up to ``until`` (exclusive); return (sent messages, next event time, events written).

        ``since`` is the end of the coordinator's previous window: a worker skipped while idle first moves its
        clock there, as if it had taken part in every window.
        """
        env = self.env
        if since > env._now:
            env._now = since
        for msg in inbound:
            self._schedule_delivery(msg)
        _run_window(env, until)
        n = len(self._events)
        self.writer.write_records(self._events.records)
        self._events.clear()
        out = self._outbox[:]
        self._outbox.clear()
        return out, env.peek(), n

    def _schedule_delivery(self, msg: Message) -> None:
        """``env.timeout(msg.deliver_t - now)``'s queue entry, with the message and its receiver for callback."""
        env = self.env
        now = env._now
        delay = msg.deliver_t - now
        if delay < 0:
            raise ValueError(f"message {msg.kind!r} to {msg.dst} due at {msg.deliver_t} before now ({now})")
        heappush(env._queue, (now + delay, NORMAL, next(env._eid), _Delivery(msg, self.agents[msg.dst])))

    def run_alone(
        self,
        until: float,
        lookahead: float,
        route: Callable[[Message], bool],
        after_window: Callable[[float], None],
        stats: "RunCounts",
        write_every: int = 8192,
    ) -> None:
        """Run every window up to ``until`` as the run's only worker, with no link in between.

        The windows are the coordinator's, one after another, exactly: each starts at the earliest event or
        delivery, lasts ``lookahead``, receives the deliveries due in it in canonical order at its start, from
        the previous window's end; what its agents sent is routed at its end (``route(msg)`` sets the delivery
        time, False when dropped; a sender's messages in its own order, which is all its random stream sees).
        ``after_window(end)`` is called after each window's routing; ``stats`` counts the windows, the messages
        routed, those dropped and the events written as they happen. Since every receiver is here, nothing needs
        to leave the worker between windows, which is what a window costs in the coordinator.
        Events are written in batches of at least ``write_every`` (windows are consecutive spans of time, so the
        writer's canonical order is the same whatever the batching); if the run fails or is interrupted, the
        events of every window that ended are written before the error goes on, as ``advance`` would have
        written them one window at a time.
        """
        env = self.env
        queue = env._queue
        outbox = self._outbox
        events = self._events
        write = self.writer.write_records
        pending: list[tuple[float, str, str, int, Message]] = []  # heap in canonical delivery order
        inf = math.inf
        ended = 0  # how many of ``events`` belong to windows that ended
        check_collector = collector.check
        try:
            with collector.windows():
                while True:
                    t_next = queue[0][0] if queue else inf
                    if pending and pending[0][0] < t_next:
                        t_next = pending[0][0]
                    if t_next >= until:  # inf included
                        break
                    end = min(t_next + lookahead, until)
                    # as Worker.advance(end, due, since): the clock stands at the previous window's end
                    while pending and pending[0][0] < end:
                        self._schedule_delivery(heappop(pending)[4])
                    _run_window(env, end)
                    stats.windows += 1
                    if outbox:
                        for msg in outbox:
                            stats.messages += 1
                            if route(msg):
                                heappush(pending, (msg.deliver_t, msg.dst, msg.src, msg.seq, msg))
                            else:
                                stats.dropped += 1
                        outbox.clear()
                    ended = len(events)
                    if ended >= write_every:
                        stats.events += ended
                        write(events.records)
                        events.clear()
                        ended = 0
                    after_window(end)
                    check_collector()
        except BaseException:
            del events[ended:]  # the failed window's, which advance would not have written either
            raise
        finally:
            stats.events += len(events)
            write(events.records)
            events.clear()

    def finish(self, until: float | None = None) -> WriterSummary:
        """Close the trace and return its summary. ``until``: the run reached its end there; first the clock
        stands at it and every live agent has its last word (:meth:`Agent.at_end`), written with the rest. A failed
        or interrupted run finishes without it."""
        if until is not None:
            env = self.env
            if env._now < until:
                env._now = until
            for agent in self.agents.values():
                agent.end()
            self._outbox.clear()
            self.writer.write_records(self._events.records)
            self._events.clear()
        return self.writer.close()


class RunCounts(Protocol):
    """What :meth:`Worker.run_alone` counts into (the coordinator's stats)."""

    windows: int
    messages: int
    dropped: int
    events: int
