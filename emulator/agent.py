"""The agent base (DESIGN.md principle 2).

An agent is the unit of state; its behaviour is SimPy processes on its worker's environment. Agents share no
objects: they interact only by messages (``send``), which the coordinator routes through the network model.
Each agent has its own keyed random generators, its own trace sequence numbers, a runnable gate that a
stop-the-world pause closes for all its processes at once, and JVM-like scheduled executors.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Generator, Protocol

import numpy as np
import simpy

from .executor import ScheduledExecutor
from .gate import RunnableGate
from .messages import Message
from .network import NetworkModel
from .rng import keyed_rng
from .timer import call_later, pause
from .trace.kinds import ROWS_KEY, check_kind


class Crash:
    """Interrupt cause that ends an agent's processes when it crashes or stops."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


class EventSink(Protocol):
    """Where an agent's events go: a worker's :class:`~.trace.batch.PackedEvents`, or a plain list in a bare
    test environment."""

    def append(self, event: tuple[float, str, int, str, dict[str, Any]], /) -> None: ...


@dataclass
class AgentContext:
    """What a worker hands each agent: the environment, the run seed, and sinks for messages and events."""

    env: simpy.Environment
    seed: int
    outbox: list[Message]
    #: the events ``(t, agent, seq, kind, fields)`` the agent emits, appended in its own order
    events: EventSink
    params: dict[str, Any]


class Agent:
    """Base class of every modelled entity. Subclasses override ``on_start`` and ``on_message``."""

    kind: ClassVar[str] = "agent"

    def __init__(self, name: str, ctx: AgentContext) -> None:
        self.name = name
        self.env = ctx.env
        self.seed = ctx.seed
        self.params = ctx.params
        self.gate = RunnableGate(ctx.env)
        self.alive = False
        self._outbox = ctx.outbox
        self._events = ctx.events
        self._event_seq = 0
        self._msg_seq = 0
        self._rngs: dict[str, np.random.Generator] = {}
        self._procs: set[simpy.Process] = set()
        self._held: list[Message] = []
        self._executors: dict[str, ScheduledExecutor] = {}
        self._calls: dict[int, simpy.Event] = {}
        #: the run's network model (its links and scheduled conditions, read-only), when the worker attached it;
        #: None in bare unit-test environments (no conditions, no latencies known)
        self.network: NetworkModel | None = None
        self._kernel_handlers: dict[str, Callable[[Message], None]] = {}  # kernel components' message kinds
        self._crash_hooks: list[Callable[[], None]] = []  # this run's kernel components to tell of a crash
        self._end_hooks: list[Callable[[], None]] = []  # this run's last words at the run's end

    # -- life cycle ---------------------------------------------------------------------------------------
    @property
    def now(self) -> float:
        return self.env.now

    def start(self) -> None:
        """Called by the worker at the agent's start time."""
        self.alive = True
        self.emit("agent_started", agent_kind=self.kind)
        self.on_start()

    def on_start(self) -> None:
        """Start the agent's processes and timers."""

    def crash(self, reason: str = "crash") -> None:
        """Stop at once, without clean-up: every process ends, timers are dropped, inbound messages are lost."""
        if not self.alive:
            return
        self.alive = False
        self.emit("agent_stopped", reason=reason)
        hooks, self._crash_hooks = self._crash_hooks, []
        self._end_hooks = []
        for hook in hooks:
            hook()
        for ex in self._executors.values():
            ex.shutdown()
        self._executors.clear()
        self._held.clear()
        self._calls.clear()
        cause = Crash(reason)
        for p in list(self._procs):
            if p.is_alive and p is not self.env.active_process:
                p.interrupt(cause)

    def on_crash(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` when this run of the agent crashes or stops (once; hooks belong to one run)."""
        self._crash_hooks.append(hook)

    def at_end(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` when the run reaches its end (``until``) with this run of the agent alive, the clock
        standing at the end: the agent's last word, such as a count it kept instead of writing an event each time.
        Not called when the run fails, nor after a crash or stop (hooks belong to one run, like ``on_crash``'s).
        A hook may emit events; a message it sent would go nowhere (the run is over)."""
        self._end_hooks.append(hook)

    def end(self) -> None:
        """Called by the worker when the run reaches its end: the hooks of :meth:`at_end`, in their order."""
        if self.alive:
            hooks, self._end_hooks = self._end_hooks, []
            for hook in hooks:
                hook()

    def handle_kind(self, kind: str, handler: Callable[[Message], None]) -> None:
        """Deliver messages of ``kind`` to ``handler`` instead of ``on_message`` (a kernel component's protocol,
        such as a lease's); still held while a pause is in force, and dropped while the agent is down."""
        self._kernel_handlers[kind] = handler

    # -- processes ----------------------------------------------------------------------------------------
    def spawn(self, gen: Generator) -> simpy.Process:
        """Run ``gen`` as one of this agent's processes (ended by ``crash``)."""
        proc = self.env.process(self._guard(gen))
        self._procs.add(proc)
        proc.callbacks.append(lambda _ev: self._procs.discard(proc))
        return proc

    @staticmethod
    def _guard(gen: Generator) -> Generator:
        try:
            return (yield from gen)
        except simpy.Interrupt as irq:
            if isinstance(irq.cause, Crash):
                return None
            raise

    def sleep(self, delay: float) -> Generator[simpy.Event, None, None]:
        """``yield from self.sleep(d)``: at least ``d`` seconds, longer if a pause is in force when it ends."""
        if delay > 0:
            yield pause(self.env, delay)
        gate = self.gate
        while gate._reopened is not None:
            yield gate._reopened

    def runnable(self) -> Generator[simpy.Event, None, None]:
        """``yield from self.runnable()``: wait until no pause is in force."""
        return self.gate.wait()

    def executor(self, name: str = "executor") -> ScheduledExecutor:
        """The agent's single-threaded scheduled executor called ``name`` (created on first use)."""
        ex = self._executors.get(name)
        if ex is None:
            ex = self._executors[name] = ScheduledExecutor(self, name)
        return ex

    def stop_the_world(self, duration: float, cause: str = "gc") -> None:
        """Pause every process of this agent for ``duration`` seconds (a JVM stop-the-world pause)."""
        if not self.alive or duration <= 0:
            return
        self.emit("stw_pause", duration_s=float(duration), cause=cause)
        self.gate.close_for(duration)

    def on_fault(self, kind: str, spec: dict[str, Any]) -> None:
        """Apply a scheduled fault to this agent: the kernel knows ``pause`` and ``crash``; models add kinds."""
        if kind == "pause":
            self.stop_the_world(spec["duration_s"], cause="fault")
        elif kind == "crash":
            self.crash("fault")
        else:
            raise ValueError(f"{self.kind} agent {self.name} does not know the fault kind {kind!r}")

    # -- randomness ---------------------------------------------------------------------------------------
    def rng(self, purpose: str = "default") -> np.random.Generator:
        """A generator keyed by (run seed, agent name, purpose)."""
        g = self._rngs.get(purpose)
        if g is None:
            g = self._rngs[purpose] = keyed_rng(self.seed, self.name, purpose)
        return g

    # -- messages -----------------------------------------------------------------------------------------
    def send(self, dst: str, kind: str, body: Any = None) -> None:
        """Send a message; it arrives after the link's latency (at least the lookahead), or is dropped."""
        if not self.alive:
            return
        self._msg_seq += 1
        self._outbox.append(Message(self.name, dst, kind, body, self.env.now, self._msg_seq))

    def call(self, dst: str, kind: str, body: dict | None = None, timeout: float = 30.0) -> Generator:
        """``reply = yield from self.call(dst, kind, body, timeout)``: send a request, wait for the reply's body.

        Returns None when no reply arrived within ``timeout`` seconds (the request or the reply was lost, or the
        peer is down). The receiver answers with ``reply(msg, body)``.
        """
        self._msg_seq += 1
        call_id = self._msg_seq
        body = dict(body or {})
        body["_call"] = call_id
        if not self.alive:
            return None
        env = self.env
        self._outbox.append(Message(self.name, dst, kind, body, env._now, call_id))
        done = env.event()
        self._calls[call_id] = done
        call_later(env, timeout, lambda _ev: self._expire_call(call_id))
        result = yield done
        gate = self.gate  # self.runnable(), inlined: every call of every agent ends here
        while gate._reopened is not None:
            yield gate._reopened
        return result

    def call_then(self, dst: str, kind: str, body: dict | None, timeout: float,
                  then: Callable[[dict | None], None]) -> None:
        """:meth:`call` for a caller that is a chain of callbacks rather than a process: ``then(reply)`` (None
        on a timeout) runs at the instant and in the place among other events where the process waiting in
        ``call`` would resume — once no pause is in force. Nothing is sent while the agent is down, and ``then``
        is never called after a crash (as a process's ``call`` ends with it)."""
        self._msg_seq += 1
        call_id = self._msg_seq
        body = dict(body or {})
        body["_call"] = call_id
        if not self.alive:
            return
        env = self.env
        self._outbox.append(Message(self.name, dst, kind, body, env._now, call_id))
        self._calls[call_id] = _Continuation(self.gate, then)
        call_later(env, timeout, lambda _ev: self._expire_call(call_id))

    def _expire_call(self, call_id: int) -> None:
        ev = self._calls.pop(call_id, None)
        if ev is not None:
            ev.succeed(None)

    def reply(self, request: Message, body: dict | None = None) -> None:
        """Answer a request made with ``call``."""
        out = dict(body or {})
        out["_reply"] = request.body["_call"]
        self.send(request.src, request.kind + "_reply", out)

    def refuse(self, request: Message, body: dict | None = None) -> None:
        """Answer a ``call`` on behalf of the agent's *host* while the agent's process is down: the host's kernel
        refuses the connection at once (``send`` is the process's and does nothing while it is down). Only a
        request made with ``call`` can be refused."""
        self._msg_seq += 1
        out = dict(body or {})
        out["_reply"] = request.body["_call"]
        self._outbox.append(Message(self.name, request.src, request.kind + "_reply", out, self.env.now, self._msg_seq))

    def send_notice(self, dst: str, kind: str, body: Any = None) -> None:
        """Send a message on behalf of the agent's *kernel* rather than the agent: sent even while the agent is
        paused or down (the bookkeeping of a kernel component, e.g. a lease's stop notice). Its ``kind`` must be
        one of the network's notice kinds (:data:`~.network.NOTICE_KINDS`): those are delivered after the link's
        minimum latency, whatever the network's conditions, and draw nothing from its random streams."""
        self._msg_seq += 1
        self._outbox.append(Message(self.name, dst, kind, body, self.env.now, self._msg_seq))

    def deliver(self, msg: Message) -> None:
        """Called by the worker at the delivery time; held while a pause is in force."""
        if not self.alive:
            return
        if self.gate._reopened is not None:
            self._held.append(msg)
            if len(self._held) == 1:
                self.gate.on_open(self._release_held)
            return
        self._dispatch(msg)

    def _release_held(self) -> None:
        held, self._held = self._held, []
        for msg in held:
            if self.alive:
                self._dispatch(msg)

    def _dispatch(self, msg: Message) -> None:
        body = msg.body
        if type(body) is dict and "_reply" in body:
            ev = self._calls.pop(body["_reply"], None)
            if ev is not None:  # a late reply to a call that timed out is dropped
                ev.succeed(body)
            return
        if self._kernel_handlers:
            handler = self._kernel_handlers.get(msg.kind)
            if handler is not None:
                handler(msg)
                return
        result = self.on_message(msg)
        if result is not None:
            self.spawn(result)

    def on_message(self, msg: Message) -> Generator | None:
        """Handle one message; return a generator to handle it as a process that takes virtual time."""
        return None

    # -- trace --------------------------------------------------------------------------------------------
    def emit(self, kind: str, **fields: Any) -> None:
        """Append an event ``(t, agent, seq, kind, fields)`` to the trace; ``kind`` must be declared."""
        check_kind(kind)
        self._event_seq += 1
        self._events.append((self.env.now, self.name, self._event_seq, kind, fields))

    def emit_rows(self, kind: str, rows: dict[str, list], **fields: Any) -> None:
        """Append one record of a kind written in rows (its declaration's ``per_row``): ``rows`` maps each row field
        to its list, one item a row (all of one length); ``fields`` are the fields every row shares. Readers see
        one event per row."""
        check_kind(kind)
        lengths = {len(v) for v in rows.values()}
        if len(lengths) > 1:
            raise ValueError(f"{kind}: rows of unequal lengths ({', '.join(f'{k} {len(v)}' for k, v in rows.items())})")
        fields[ROWS_KEY] = rows
        self._event_seq += 1
        self._events.append((self.env.now, self.name, self._event_seq, kind, fields))


class _Continuation:
    """Where :meth:`Agent.call_then` waits: answered as a call's event is (``succeed``), it runs the callback
    when the gate is open, as a resumed process would check it first."""

    __slots__ = ("gate", "then")

    def __init__(self, gate: RunnableGate, then: Callable[[Any], None]) -> None:
        self.gate, self.then = gate, then

    def succeed(self, value: Any) -> None:
        self.gate.on_open(lambda: self.then(value))


AgentFactory = Callable[[str, AgentContext], Agent]
