"""A worker: one SimPy environment advancing the agents placed on it, window by window.

The coordinator grants windows [T, end); the worker schedules the inbound messages due in it (already in
canonical delivery order), runs its environment to ``end``, writes the window's events to its own trace
segments, and hands back the messages its agents sent. It never sees another worker's agents.
"""
from __future__ import annotations

import gc
from heapq import heappop, heappush
from pathlib import Path

import simpy
from simpy.events import NORMAL

from .agent import Agent, AgentContext
from .faults import AgentFault
from .messages import Message
from .models import AgentSpec, resolve_factory
from .network import NetworkModel
from .timer import Timer
from .trace.writer import DEFAULT_SEGMENT_BYTES, SegmentWriter, WriterSummary


#: Collector thresholds of a process that hosts a worker. SimPy allocates several objects per step and the agents
#: keep many long-lived ones; with CPython's defaults (700, 10, 10) collection took about a fifth of a run's wall
#: time (measured on the reconnect storm of ``benchmarks/transport_bench.py``). Garbage is only collected later.
GC_THRESHOLDS = (10_000, 20, 20)


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
        self._events: list[tuple] = []
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
        now = env._now
        queue = env._queue
        agents = self.agents
        for msg in inbound:
            # env.timeout(msg.deliver_t - now)'s queue entry, with the message and its receiver for callback
            delay = msg.deliver_t - now
            if delay < 0:
                raise ValueError(f"message {msg.kind!r} to {msg.dst} due at {msg.deliver_t} before now ({now})")
            heappush(queue, (now + delay, NORMAL, next(env._eid), _Delivery(msg, agents[msg.dst])))
        # Step by hand rather than env.run(until=...): SimPy leaves its stop event in the queue, which would
        # make peek() report the window's end instead of the next real event. The loop is Environment.step's,
        # inlined (millions of steps an hour at scale); no StopSimulation is ever raised here.
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
        env._now = max(env._now, until)
        n = len(self._events)
        self.writer.write(self._events)
        self._events.clear()
        out = self._outbox[:]
        self._outbox.clear()
        return out, env.peek(), n

    def finish(self) -> WriterSummary:
        return self.writer.close()
