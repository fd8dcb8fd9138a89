"""CPython's cyclic garbage collector while windows run.

A run allocates millions of objects that live for seconds of virtual time (timers, messages in flight, trace
records waiting for their batch, a rebalance's views) and almost no cyclic garbage: a few hundred objects in an
hour of each built-in scale scenario. Reference counting frees everything else. The collector, started by
allocation counts, still traverses each of those medium-lived objects in its young collection and again in an
older generation's: about 4 s of a 42 s ``rocketmq-large`` hour with the worker's thresholds
(:data:`~.worker.GC_THRESHOLDS`), 7.8 s with the ones before them.

While windows run, :func:`windows` replaces that trigger with one on growth:

* the objects that exist when the windows start (the agents, the scenario), and those the first window built
  (where the agents start: their tables, leases and timers), are frozen (``gc.freeze``): no collection traverses
  them again;
* automatic collection is off; :func:`check`, called by the window loop after each window, runs a full collection of
  the objects allocated since once the tracked objects have grown by a quarter of those the last collection
  kept, and by at least :data:`MIN_GROWTH`. Cyclic garbage, which is never freed by reference counting, counts
  as growth, so it stays bounded by that share of the live objects, as CPython bounds its own full collections.

On leaving, the frozen objects are given back to the collector and its automatic trigger is restored, so a
process that runs several emulations (a test session) collects as before between them. A process that had frozen
objects of its own (``gc.freeze`` before forking) keeps them frozen: its runs freeze nothing. A ``windows()`` block
inside another uses the outer one's policy.

The collector never changes what a run does: a trace is the same whenever, and whether, garbage is collected.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

__all__ = ["MIN_GROWTH", "CollectorState", "check", "windows"]

#: tracked objects (net of those freed) allocated since the last collection below which none runs
MIN_GROWTH = 1_000_000

#: growth, as a share of the objects the last collection kept, that starts the next one
GROWTH_SHARE = 0.25


class CollectorState:
    """The policy in force: when the next collection runs and how many have run."""

    __slots__ = ("min_growth", "limit", "collections", "started", "freezes")

    def __init__(self, min_growth: int = MIN_GROWTH, freezes: bool = True) -> None:
        self.min_growth = min_growth
        #: whether the first window's end was checked (the agents' start-up state frozen)
        self.started = False
        #: whether this policy freezes (not when the process had frozen objects of its own: see :func:`windows`)
        self.freezes = freezes
        #: the growth (``gc.get_count()[0]``) past which :func:`check` collects
        self.limit = min_growth
        #: collections run so far
        self.collections = 0

    def collect(self) -> None:
        gc.collect()
        self.collections += 1
        # a share of what the collection kept (the frozen objects are not among them)
        self.limit = max(self.min_growth, int(len(gc.get_objects()) * GROWTH_SHARE))


_state: CollectorState | None = None


@contextmanager
def windows(min_growth: int | None = None) -> Iterator[CollectorState]:
    """Collect by growth (see the module's docs) while the block runs, at least ``min_growth`` tracked objects
    apart (:data:`MIN_GROWTH` when None); yields the policy's state."""
    global _state
    if _state is not None:  # nested: the outer block's policy holds
        yield _state
        return
    was_enabled = gc.isenabled()
    # Unfreezing gives back every frozen object: a process that froze its own (a forking server's start-up) keeps
    # them frozen, and its runs freeze nothing (collections then traverse everything they allocated).
    freezes = gc.get_freeze_count() == 0
    gc.disable()
    if freezes:
        gc.freeze()
    _state = state = CollectorState(MIN_GROWTH if min_growth is None else min_growth, freezes)
    try:
        yield state
    finally:
        _state = None
        if freezes:
            gc.unfreeze()
        if was_enabled:
            gc.enable()


def check() -> None:
    """After a window: run a collection if the growth since the last one calls for it; after the first one, freeze
    what it built instead (nothing outside :func:`windows`)."""
    state = _state
    if state is None:
        return
    if not state.started:
        state.started = True
        if state.freezes:
            gc.freeze()
    elif gc.get_count()[0] > state.limit:
        state.collect()
