"""Cluster operations on a system's server processes (brokers, name servers, supervisors): the rolling restart.

A cluster operation is not a mechanism of the process (that is :mod:`clusteremu.emulator.jvm`) but an operator's
script over several of them; what it needs of each process is a graceful stop and a boot. Components:

* :class:`Restartable`: what a process offers the script (the agent's life cycle, a graceful ``shutdown`` and a
  ``booted`` event of its current run);
* :class:`RollingRestarts`: a process's part in ``rolling_restart`` faults: the members, in name order, in turn
  stop gracefully, stay down ``down_s``, boot, and once booted and ``gap_s`` later hand the turn to the next
  member by a message, so that each process knows only its own state (they may live on different workers);
* :func:`in_name_order`: the order of a rolling restart (``broker-2`` before ``broker-10``);
* :data:`ROLLING_RESTART_FIELDS` / :data:`ROLLING_RESTART_DEFAULTS`: the fault's ``[[faults]]`` fields and their
  per-kind defaults.
"""
from __future__ import annotations

import fnmatch
from typing import Any, Callable, Generator, Iterable, Protocol

import simpy

from clusteremu.scenarios.schema import Field

__all__ = ["ROLLING_RESTART", "ROLLING_RESTART_DEFAULTS", "ROLLING_RESTART_FIELDS", "TURN", "Restartable",
           "RollingRestarts", "in_name_order"]

#: the fault kind
ROLLING_RESTART = "rolling_restart"
#: the message that hands a rolling restart's turn to the next member
TURN = "rolling_restart_turn"

ROLLING_RESTART_FIELDS: dict[str, Field] = {
    "down_s": Field("float", default=None, ge=0, doc="rolling_restart: how long each member stays down (30)"),
    "gap_s": Field("float", default=None, ge=0, doc="rolling_restart: wait after a member is back (60)"),
}
ROLLING_RESTART_DEFAULTS: dict[str, Any] = {"down_s": 30.0, "gap_s": 60.0}


def in_name_order(names: Iterable[str]) -> list[str]:
    """Names in numeric order of their last ``-<n>`` part (``broker-2`` before ``broker-10``), then by name."""
    return sorted(names, key=lambda n: (int(n.rsplit("-", 1)[1]) if n.rsplit("-", 1)[-1].isdigit() else 0, n))


class Restartable(Protocol):
    """A process a rolling restart can take: an agent with a graceful stop and a boot it can wait for."""

    name: str
    env: simpy.Environment
    alive: bool
    #: the cause of a graceful stop in progress, or None
    stopping: str | None
    #: succeeds when the current run of the process has booted
    booted: simpy.Event

    def start(self) -> None: ...

    def shutdown(self, cause: str) -> Generator: ...

    def send(self, dst: str, kind: str, body: Any = None) -> None: ...


class RollingRestarts:
    """A process's part in rolling restarts (see the module docstring); it outlives the process's restarts.

    ``members`` are every process a restart's globs may match; ``on_done(n)`` is called on the last member once
    it is back (the system writes its own event).
    """

    def __init__(self, agent: Restartable, members: Callable[[], Iterable[str]],
                 on_done: Callable[[int], None]) -> None:
        self.agent = agent
        self.members = members
        self.on_done = on_done
        self.specs: dict[str, dict[str, Any]] = {}  # by key: at, label and globs

    def on_fault(self, spec: dict[str, Any]) -> None:
        """A ``rolling_restart`` fault that matches this process: remember it; the first member begins."""
        key = f"{spec['at']}:{spec['label']}:{','.join(spec['agents'])}"
        self.specs[key] = spec
        if self.order(spec)[0] == self.agent.name:
            self.agent.env.process(self._turn(key))

    def on_turn(self, body: dict[str, Any]) -> None:
        """The previous member handed over the turn (a :data:`TURN` message)."""
        if body["key"] in self.specs:
            self.agent.env.process(self._turn(body["key"]))

    def order(self, spec: dict[str, Any]) -> list[str]:
        """The members a rolling restart goes through, in the order it takes them."""
        return in_name_order(m for m in self.members() if any(fnmatch.fnmatchcase(m, g) for g in spec["agents"]))

    def _turn(self, key: str) -> Generator:
        """This process's turn. It runs as the operator's script, not as a process of the agent, so that
        stopping the agent does not end it."""
        a = self.agent
        spec = self.specs[key]
        if not a.alive or a.stopping:
            return  # a process that is down already: the script stops here (its turn message would be lost too)
        yield from a.shutdown(ROLLING_RESTART)
        yield a.env.timeout(spec["down_s"])
        a.start()
        # Waits for the boot to complete; if it never does, the script stops here, as an operator's would.
        yield a.booted
        order = self.order(spec)
        i = order.index(a.name)
        if i + 1 == len(order):
            self.on_done(len(order))
            return
        yield a.env.timeout(spec["gap_s"])
        a.send(order[i + 1], TURN, {"key": key})
