"""A callback at a virtual time, as the cheapest entry of a SimPy queue.

The kernel's own timers (a message's delivery, a call's expiry, an executor's next run, the store's processing
time, an agent's sleep) need no event object: nothing chains on them or reads their value. :func:`call_later` and
:func:`pause` put the same queue entry ``env.timeout(delay)`` would put — (time, normal priority, the environment's
next event id) — so they run in the same order among every other event, with an object that has only what
``Environment.step`` and a waiting process read of an event: its callbacks, that it succeeded and its value
(None). A 1,000-broker hour runs millions of them.
"""
from __future__ import annotations

from heapq import heappush
from typing import Any, Callable

import simpy
from simpy.events import NORMAL, URGENT

__all__ = ["Timer", "call_at", "call_later", "call_first", "pause"]


class Timer:
    """A due callback in an environment's queue; ``callbacks`` is None once it ran (as for a SimPy event)."""

    __slots__ = ("callbacks",)
    _ok = True  # what Environment.step checks of every event it has processed
    _value = None  # what a process that waited on it is resumed with

    def __init__(self, callback: Callable[[Any], None] | None = None) -> None:
        self.callbacks: list[Callable[[Any], None]] | None = [] if callback is None else [callback]


def call_later(env: simpy.Environment, delay: float, callback: Callable[[Any], None]) -> Timer:
    """Call ``callback(timer)`` after ``delay`` seconds (>= 0), exactly where ``env.timeout(delay)``'s callbacks
    would run: the same time (``now + delay``, the same float), priority and place in the event sequence."""
    if delay < 0:
        raise ValueError(f"negative delay {delay}")
    timer = Timer(callback)
    heappush(env._queue, (env._now + delay, NORMAL, next(env._eid), timer))
    return timer


def call_at(env: simpy.Environment, t: float, callback: Callable[[Any], None]) -> Timer:
    """Call ``callback(timer)`` at exactly ``t`` (not before now): for a timer whose time was computed as another
    timer's would have been (``call_later`` from an earlier instant), which ``now + (t - now)`` need not equal."""
    if t < env._now:
        raise ValueError(f"time {t} is before now ({env._now})")
    timer = Timer(callback)
    heappush(env._queue, (t, NORMAL, next(env._eid), timer))
    return timer


def call_first(env: simpy.Environment, callback: Callable[[Any], None]) -> Timer:
    """Call ``callback(timer)`` now, where a process started now would take its first step: ``env.process``
    schedules that step as an urgent event, ahead of the normal ones due at the same time."""
    timer = Timer(callback)
    heappush(env._queue, (env._now, URGENT, next(env._eid), timer))
    return timer


def pause(env: simpy.Environment, delay: float) -> Timer:
    """What a process yields to wait ``delay`` seconds (>= 0): ``env.timeout(delay)`` without its value, in the
    same place of the event sequence (the sleeps of 1,000 brokers' heartbeats and samplers)."""
    if delay < 0:
        raise ValueError(f"negative delay {delay}")
    timer = Timer()
    heappush(env._queue, (env._now + delay, NORMAL, next(env._eid), timer))
    return timer
