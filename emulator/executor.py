"""A JVM-like ``ScheduledThreadPoolExecutor`` with one thread, in virtual time.

Java's semantics, exactly:

* ``schedule_at_fixed_rate(task, initial_delay, period)``: the n-th run is due at ``start + n * period`` whatever
  happened before; runs that are overdue (after a pause, or behind a slow task) fire back to back.
* ``schedule_with_fixed_delay(task, initial_delay, period)``: the next run is due ``period`` after the previous
  run *ended*.
* One thread: due tasks run one at a time in (due time, submission sequence) order, the order of Java's
  ``DelayedWorkQueue``; a task that takes virtual time (a generator) holds the thread.
* The agent's runnable gate stops the thread: nothing runs during a stop-the-world pause; at its end the overdue
  tasks run in that order.

A task is a callable; if it returns a generator, that generator runs as a SimPy process of the agent (it may
``yield from agent.sleep(...)``) and the thread is busy until it finishes.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from .timer import call_later

if TYPE_CHECKING:
    from .agent import Agent

FIXED_RATE = "fixed_rate"
FIXED_DELAY = "fixed_delay"
ONE_SHOT = "one_shot"
MODES = (FIXED_RATE, FIXED_DELAY)


@dataclass(eq=False)
class ScheduledTask:
    """A handle on a scheduled task (Java's ``ScheduledFuture``)."""

    task: Callable[[], Any]
    mode: str
    period: float
    start: float
    seq: int
    name: str
    time: float = 0.0
    runs: int = 0
    cancelled: bool = False
    last_started: float = field(default=-math.inf)

    def cancel(self) -> None:
        self.cancelled = True


class ScheduledExecutor:
    """One thread of scheduled tasks belonging to ``agent``."""

    def __init__(self, agent: "Agent", name: str = "executor") -> None:
        self.agent = agent
        self.name = name
        self._heap: list[tuple[float, int, ScheduledTask]] = []
        self._seq = 0
        self._busy = False
        self._armed_at = math.inf
        self._gen = 0  # bumped on shutdown and re-arm: stale wake-ups compare against it
        self._waiting_gate = False
        self._shutdown = False

    # -- submission ---------------------------------------------------------------------------------------
    def schedule_at_fixed_rate(
        self, task: Callable[[], Any], initial_delay: float, period: float, name: str = ""
    ) -> ScheduledTask:
        return self._submit(task, FIXED_RATE, initial_delay, period, name)

    def schedule_with_fixed_delay(
        self, task: Callable[[], Any], initial_delay: float, period: float, name: str = ""
    ) -> ScheduledTask:
        return self._submit(task, FIXED_DELAY, initial_delay, period, name)

    def schedule(self, task: Callable[[], Any], delay: float, name: str = "") -> ScheduledTask:
        """Run once after ``delay`` seconds."""
        return self._submit(task, ONE_SHOT, delay, 0.0, name)

    def schedule_periodic(
        self, mode: str, task: Callable[[], Any], initial_delay: float, period: float, name: str = ""
    ) -> ScheduledTask:
        """Either periodic mode by name (``fixed_rate`` or ``fixed_delay``): a scenario setting picks it."""
        if mode not in MODES:
            raise ValueError(f"unknown timer mode {mode!r}; expected one of {MODES}")
        return self._submit(task, mode, initial_delay, period, name)

    def shutdown(self) -> None:
        """Drop every task (the agent crashed or stopped)."""
        self._shutdown = True
        self._heap.clear()
        self._gen += 1

    @property
    def pending(self) -> int:
        return sum(1 for *_, st in self._heap if not st.cancelled)

    def _submit(self, task: Callable[[], Any], mode: str, delay: float, period: float, name: str) -> ScheduledTask:
        if delay < 0 or (mode != ONE_SHOT and not period > 0):
            raise ValueError(f"bad schedule for {name or task!r}: delay={delay}, period={period}")
        now = self.agent.env.now
        self._seq += 1
        st = ScheduledTask(task, mode, period, now + delay, self._seq, name or getattr(task, "__name__", "task"))
        st.time = st.start
        if self._shutdown:
            st.cancelled = True
            return st
        heapq.heappush(self._heap, (st.time, st.seq, st))
        self._arm()
        return st

    # -- the thread ---------------------------------------------------------------------------------------
    def _arm(self) -> None:
        if self._busy or self._waiting_gate or not self._heap:
            return
        t = self._heap[0][0]
        if t < self._armed_at:
            self._armed_at = t
            self._gen += 1
            gen = self._gen
            env = self.agent.env
            call_later(env, max(0.0, t - env._now), lambda _ev: self._wake(gen))

    def _wake(self, gen: int) -> None:
        if gen != self._gen:
            return  # superseded by an earlier deadline, or shut down
        self._armed_at = math.inf
        self._drain()

    def _drain(self) -> None:
        if self._shutdown:
            return
        gate = self.agent.gate
        if gate._reopened is not None:  # closed (is_open, read directly: 1,000 brokers' timers run through here)
            if not self._waiting_gate:
                self._waiting_gate = True
                gate.on_open(self._gate_opened)
            return
        now = self.agent.env._now
        heap = self._heap
        while heap and heap[0][0] <= now:
            _, _, st = heapq.heappop(heap)
            if st.cancelled:
                continue
            st.runs += 1
            st.last_started = now
            result = st.task()
            if result is not None and hasattr(result, "send"):
                self._busy = True
                proc = self.agent.spawn(result)
                proc.callbacks.append(lambda _ev, st=st: self._finished(st))
                return
            self._reschedule(st)
            if self._shutdown or gate._reopened is not None:  # the task itself may have crashed or paused the agent
                return self._drain()
        self._arm()

    def _gate_opened(self) -> None:
        self._waiting_gate = False
        self._armed_at = math.inf
        self._drain()

    def _finished(self, st: ScheduledTask) -> None:
        self._busy = False
        self._reschedule(st)
        self._armed_at = math.inf
        self._gen += 1
        self._drain()

    def _reschedule(self, st: ScheduledTask) -> None:
        if st.cancelled or st.mode == ONE_SHOT or self._shutdown:
            return
        if st.mode == FIXED_RATE:
            st.time = st.start + st.runs * st.period  # from the start, not accumulated: no float drift
        else:
            st.time = self.agent.env.now + st.period
        heapq.heappush(self._heap, (st.time, st.seq, st))
