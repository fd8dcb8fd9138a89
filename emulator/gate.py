"""The runnable gate: what a stop-the-world pause closes.

While the gate is closed none of the agent's processes run: timers wait, sleeps end late, inbound messages are
held. Pauses that overlap extend the closed period (a JVM cannot be "more" stopped).
"""
from __future__ import annotations

from typing import Callable, Generator

import simpy

from .timer import call_at


class RunnableGate:
    """Open, or closed until a virtual time; ``wait()`` yields until it is open."""

    __slots__ = ("env", "_reopened", "_until", "_since", "_close_listeners")

    def __init__(self, env: simpy.Environment) -> None:
        self.env = env
        self._reopened: simpy.Event | None = None
        self._until = 0.0
        self._since = 0.0
        # called when a pause begins or is extended: the lease's stop detection (a tuple, replaced on a change:
        # a listener may remove itself while they are called)
        self._close_listeners: tuple[Callable[[], None], ...] = ()

    @property
    def is_open(self) -> bool:
        return self._reopened is None

    @property
    def closed_until(self) -> float | None:
        """When the current pause ends, or None when open."""
        return None if self._reopened is None else self._until

    @property
    def closed_since(self) -> float | None:
        """When the current pause began (extensions included), or None when open."""
        return None if self._reopened is None else self._since

    def wait(self) -> Generator[simpy.Event, None, None]:
        """``yield from gate.wait()``: returns at once when open, else when the pause ends."""
        while self._reopened is not None:
            yield self._reopened

    def on_open(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` when the gate next opens (at once if it is open)."""
        if self._reopened is None:
            callback()
        else:
            self._reopened.callbacks.append(lambda _ev: callback())

    @property
    def close_listeners(self) -> tuple[Callable[[], None], ...]:
        """The close listeners, in the order they are called (the order they were added)."""
        return self._close_listeners

    def add_close_listener(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` whenever a pause begins or the one in force is extended (until removed);
        ``closed_until`` is then the pause's new end."""
        self._close_listeners += (callback,)

    def remove_close_listener(self, callback: Callable[[], None]) -> None:
        """Stop calling ``callback`` at pause begins (no error if it was not registered)."""
        listeners = self._close_listeners
        if callback in listeners:
            i = listeners.index(callback)
            self._close_listeners = listeners[:i] + listeners[i + 1:]

    def close_for(self, duration: float) -> bool:
        """Close the gate for ``duration`` seconds from now; True if this started a new pause."""
        env = self.env
        until = env._now + duration
        if self._reopened is not None:
            if until > self._until:
                self._until = until
                for callback in self._close_listeners:
                    callback()
            return False
        self._reopened = env.event()
        self._until = until
        self._since = env._now
        call_at(env, until, self._arm_reopen)
        for callback in self._close_listeners:
            callback()
        return True

    def _arm_reopen(self, _timer: object = None) -> None:
        # The pause may have been extended since it was armed: re-arm until the deadline holds.
        env = self.env
        if env._now < self._until:
            call_at(env, self._until, self._arm_reopen)
            return
        ev, self._reopened = self._reopened, None
        assert ev is not None
        callbacks = ev.callbacks
        if not callbacks:
            return  # nobody waits: nothing to run, and nobody can wait on it any more
        queue = env._queue
        if queue and queue[0][0] <= env._now:
            ev.succeed()  # something else is due at this instant: the reopening takes its place after it
            return
        # Nothing else is due now: the reopening's entry would be the very next one, so its callbacks run here,
        # as that step would run them (each young pause of each agent spares one entry).
        ev._ok, ev._value, ev.callbacks = True, None, None
        for callback in callbacks:
            callback(ev)
