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

Idle runs. A fixed-rate task whose runs do nothing while what it reads stays the same (a load-report check that
finds nothing to write, 1,000 brokers every 5 s) may say so: :meth:`ScheduledTask.skip_until` during a run
skips its runs due before a time, and :meth:`ScheduledTask.wake`, called by whatever changes what the task reads,
brings back the first skipped run that the one thread would not have run yet — a run due after the change, or
one due before it that waits behind a busy task or a pause (Java runs overdue runs late, not never). The runs
that are skipped are the ones that would have found nothing to do, so the agent's events are those of the
one-by-one runs, at the same times and in the same order on the thread. A pause that begins while a task
skips brings its next run back too, so that the thread meets the pause when the one-by-one runs would have;
``skip_until(t, idle=True)`` says more of the skipped runs — they return without a generator (they hold the
thread for no time) and do nothing whenever they run before ``t``, late or not — so that only a pause that ends
at or after ``t`` brings one back (the run it delays could act then): after a shorter one the thread is idle
whether or not the delayed run ran, and a ``wake`` during a pause brings back the first run due since it began
(overdue, it runs at the pause's end in its place among the others, as the one-by-one run would).
"""
from __future__ import annotations

import heapq
import math
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from .timer import call_at, call_later

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
    executor: "ScheduledExecutor | None" = field(default=None, repr=False)
    skip_to: float = -math.inf  # set by skip_until during a run; applied when the run ends
    skip_idle: bool = False  # set by skip_until(idle=True) during a run
    idle_until: float = -math.inf  # while idle runs are skipped: they do nothing when run before this time
    skipped_from: int | None = None  # while runs are skipped: the index of the first skipped run

    def cancel(self) -> None:
        self.cancelled = True

    def due(self, k: int) -> float:
        """When run ``k`` (0 = the first) of a fixed-rate task is due: from the start, never accumulated."""
        return self.start + k * self.period

    def skip_until(self, t: float, idle: bool = False) -> None:
        """Called during a run of this fixed-rate task: its runs due before ``t`` would do nothing unless
        :meth:`wake` is called before them, so they are not run. A run due at or after ``t`` runs. ``idle``:
        those runs also return no generator (they hold the thread for no time) and do nothing whenever they run
        before ``t``, so that only a pause ending at or after ``t`` brings one back (see the module docs)."""
        if self.mode != FIXED_RATE:
            raise ValueError(f"{self.name}: only a fixed-rate task can skip its runs")
        if not math.isfinite(t):
            raise ValueError(f"{self.name}: skip_until needs a finite time, not {t}")
        self.skip_to = t
        self.skip_idle = idle

    def wake(self) -> None:
        """What the task reads changed now: bring back its first skipped run that has not (virtually) run yet."""
        if self.skipped_from is not None and self.executor is not None:
            self.executor._unskip(self)


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
        self._last_key: tuple[float, int] = (-math.inf, 0)  # the (due, seq) of the last run the thread took
        self._drained_at = -math.inf  # the last time the thread ran its due tasks
        self._skipping: dict[int, ScheduledTask] = {}  # seq -> a task whose runs are skipped
        self._listening = False  # a close listener on the gate while some task skips
        self.ambiguous_wakes = 0  # see _unskip

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
        self._skipping.clear()
        self._gen += 1

    @property
    def pending(self) -> int:
        return sum(1 for t, _, st in self._heap if not st.cancelled and t == st.time)

    def _submit(self, task: Callable[[], Any], mode: str, delay: float, period: float, name: str) -> ScheduledTask:
        if delay < 0 or (mode != ONE_SHOT and not period > 0):
            raise ValueError(f"bad schedule for {name or task!r}: delay={delay}, period={period}")
        now = self.agent.env.now
        self._seq += 1
        st = ScheduledTask(task, mode, period, now + delay, self._seq, name or getattr(task, "__name__", "task"),
                           executor=self)
        st.time = st.start
        if self._shutdown:
            st.cancelled = True
            return st
        heapq.heappush(self._heap, (st.time, st.seq, st))
        self._arm()
        return st

    # -- the thread ---------------------------------------------------------------------------------------
    def _arm(self, since: float | None = None) -> None:
        """Arm the thread's timer for the first due run; ``since``: the instant the one-by-one runs would have
        armed it at (a woken run's: the last run before it), when not now."""
        if self._busy or self._waiting_gate:
            return
        heap = self._heap
        while heap and heap[0][0] != heap[0][2].time:
            heapq.heappop(heap)  # superseded by a woken run
        if not heap:
            return
        t = heap[0][0]
        if t < self._armed_at:
            self._armed_at = t
            self._gen += 1
            gen = self._gen
            env = self.agent.env
            now = env._now
            # The one-by-one runs of a skipping task would re-arm the thread's timer at each of them: its time is
            # computed from the last of those before t, as theirs would be (the float sum can differ in the last
            # bit from one computed now).
            armed = now if since is None else since
            for st in self._skipping.values():
                armed = max(armed, self._last_due_before(st, t))
            if armed != now:
                call_at(env, max(now, armed + (t - armed)), lambda _ev: self._wake(gen))
            else:
                call_later(env, max(0.0, t - now), lambda _ev: self._wake(gen))

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
        self._drained_at = now
        heap = self._heap
        while heap and heap[0][0] <= now:
            t, seq, st = heapq.heappop(heap)
            if st.cancelled or t != st.time:
                continue  # cancelled, or superseded by a woken run
            self._last_key = (t, seq)
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
            if st.skip_to > st.time:
                self._skip(st)
        else:
            st.time = self.agent.env.now + st.period
        heapq.heappush(self._heap, (st.time, st.seq, st))

    # -- skipped runs -------------------------------------------------------------------------------------------
    def _skip(self, st: ScheduledTask) -> None:
        """Move ``st`` from its next run to its first run due at or after ``st.skip_to``."""
        first = st.runs
        k = self._first_due(st, first, sys.maxsize, st.skip_to)
        st.idle_until = st.skip_to if st.skip_idle else -math.inf
        st.skip_to = -math.inf
        st.skip_idle = False
        st.skipped_from = first
        st.runs = k
        st.time = st.due(k)
        self._skipping[st.seq] = st
        if not self._listening:
            self._listening = True
            self.agent.gate.add_close_listener(self._pause_began)

    def _unskip(self, st: ScheduledTask) -> None:
        """Bring ``st``'s skipped runs back from the first one the thread has not run yet (see ``wake``)."""
        if st.cancelled or self._shutdown:
            return
        k, end = st.skipped_from, st.runs
        now = self.agent.env._now
        gate = self.agent.gate
        if st.idle_until > -math.inf and not self._busy and gate.closed_since is not None:
            # In a pause its skipped runs stayed skipped through, the thread not busy: one due before the pause
            # began ran at its time (the thread was free and open); one due since is overdue, and runs at the
            # pause's end in its place among the other overdue runs.
            k = self._first_due(st, k, end, gate.closed_since)
        elif self._busy or self._waiting_gate:
            # The thread stopped at its last run: skipped runs ordered after it have not run.
            last = self._last_key
            k = self._first_due(st, k, end, last[0])
            while k < end and (st.due(k), st.seq) < last:
                k += 1
        else:
            # Idle and open: a run due before now ran at its time, one due later has not. One due exactly now ran
            # if the thread ran its due tasks now already; otherwise it is still to run (when another task is
            # due now too, in the same pass; when not, its own timer's place among this instant's events is not
            # known, counted in ``ambiguous_wakes``).
            k = self._first_due(st, k, end, now)
            if k < end and st.due(k) == now:
                if self._drained_at == now:
                    k += 1
                elif self._armed_at != now:
                    self.ambiguous_wakes += 1
        first, st.skipped_from = st.skipped_from, None
        self._skipping.pop(st.seq, None)
        if k >= end:
            return  # its next run is the one already scheduled
        st.runs = k
        st.time = st.due(k)
        heapq.heappush(self._heap, (st.time, st.seq, st))
        # the one-by-one runs would have armed the timer for it at their last pass before now
        self._arm(since=min(now, max(self._drained_at, st.due(k - 1) if k > first else -math.inf)))

    @staticmethod
    def _last_due_before(st: ScheduledTask, t: float) -> float:
        """The due time of ``st``'s last skipped run before ``t``, or -inf."""
        k = ScheduledExecutor._first_due(st, st.skipped_from, st.runs, t)  # the first not before t
        return st.due(k - 1) if k > st.skipped_from else -math.inf

    @staticmethod
    def _first_due(st: ScheduledTask, k: int, end: int, t: float) -> int:
        """The first run index in [k, end] whose due time is not before ``t`` (on the float grid)."""
        if end > k and st.due(k) < t:
            j = min(end, max(k + 1, math.ceil((t - st.start) / st.period)))
            while j > k + 1 and st.due(j - 1) >= t:
                j -= 1
            while j < end and st.due(j) < t:
                j += 1
            k = j
        return k

    def _pause_began(self) -> None:
        # The one-by-one runs would meet the pause at the first of them due from now: bring it back.
        until = self.agent.gate.closed_until
        # an idle task's run delayed to the pause's end does nothing unless that end is past its time
        for st in [st for st in self._skipping.values() if until is None or until >= st.idle_until]:
            self._unskip(st)
