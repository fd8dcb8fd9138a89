"""Storm's views over a trace, computed from its events only: who leads, which supervisors the leader deems alive,
a topology's workers at any virtual time, and the per-topology and per-user measures an analysis starts from. A
test or an analysis reaches them as ``trace.views`` of a Storm run (see
:attr:`clusteremu.emulator.trace.query.Trace.views`).

* :class:`StormViews`: ``leader_at``, ``alive_supervisors_at``, ``workers_at``, ``time_to_schedule``,
  ``scheduling_failures``, ``evictions_by_user``.
"""
from __future__ import annotations

import bisect
from typing import Any

from clusteremu.emulator.trace.query import Trace

__all__ = ["StormViews"]


class StormViews:
    """Views of a Storm run (see the module docstring); each history is built once, then answered by bisection."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self._leaders: tuple[list[float], list[str | None]] | None = None
        self._workers: dict[str, tuple[list[float], list[list[dict[str, Any]]]]] | None = None
        self._alive: tuple[list[float], list[frozenset[str]]] | None = None

    # -- leadership ---------------------------------------------------------------------------------------------
    def leader_at(self, t: float) -> str | None:
        """The Nimbus leading at ``t`` (events at ``t`` applied): the agent of the latest ``nimbus_leader_elected``;
        None after the store's ``leader_vacant``, the leader's ``nimbus_leadership_lost`` or its crash."""
        if self._leaders is None:
            times: list[float] = []
            who: list[str | None] = []
            current: str | None = None
            for e in self.trace.select(("nimbus_leader_elected", "nimbus_leadership_lost", "leader_vacant",
                                        "agent_stopped")):
                if e.kind == "nimbus_leader_elected":
                    current = e.agent
                elif e.kind == "leader_vacant" or e.agent == current:
                    current = None
                else:
                    continue
                times.append(e.t)
                who.append(current)
            self._leaders = (times, who)
        times, who = self._leaders
        i = bisect.bisect_right(times, t)
        return who[i - 1] if i else None

    # -- supervisors --------------------------------------------------------------------------------------------
    def alive_supervisors_at(self, t: float) -> frozenset[str]:
        """The supervisors the leader deemed alive at its last round at or before ``t`` (its ``supervisor_alive``
        and ``supervisor_dead`` events; a new leader's ``leader_start`` view replaces the old leader's)."""
        if self._alive is None:
            times: list[float] = []
            sets: list[frozenset[str]] = []
            alive: set[str] = set()
            leader = None
            for e in self.trace.select(("supervisor_alive", "supervisor_dead")):
                if e.kind == "supervisor_alive" and e.cause == "leader_start" and e.agent != leader:
                    leader, alive = e.agent, set()
                if e.kind == "supervisor_alive":
                    alive.add(e.supervisor)
                else:
                    alive.discard(e.supervisor)
                if times and times[-1] == e.t:
                    sets[-1] = frozenset(alive)
                else:
                    times.append(e.t)
                    sets.append(frozenset(alive))
            self._alive = (times, sets)
        times, sets = self._alive
        i = bisect.bisect_right(times, t)
        return sets[i - 1] if i else frozenset()

    # -- assignments --------------------------------------------------------------------------------------------
    def workers_at(self, topology: str, t: float) -> list[dict[str, Any]]:
        """``topology``'s workers at ``t`` as its latest ``assignment_changed`` gave them (``{supervisor, host,
        rack, port, cpu, onheap_mb, offheap_mb, executors}``); empty before its first and after its removal."""
        if self._workers is None:
            hist: dict[str, tuple[list[float], list[list[dict[str, Any]]]]] = {}
            for e in self.trace.select(("assignment_changed", "topology_removed")):
                times, states = hist.setdefault(e.topology, ([], []))
                times.append(e.t)
                states.append(list(e.workers) if e.kind == "assignment_changed" else [])
            self._workers = hist
        times, states = self._workers.get(topology, ([], []))
        i = bisect.bisect_right(times, t)
        return states[i - 1] if i else []

    # -- measures -----------------------------------------------------------------------------------------------
    def time_to_schedule(self) -> dict[str, float | None]:
        """Seconds from each topology's ``topology_submitted`` to the first ``topology_round`` that found it
        fully scheduled (None: never), by topology id in submission order."""
        out: dict[str, float | None] = {e.topology: None for e in self.trace.select("topology_submitted")}
        submitted = {e.topology: e.t for e in self.trace.select("topology_submitted")}
        for e in self.trace.select("topology_round"):
            if e.fully_scheduled and out.get(e.topology, 0.0) is None:
                out[e.topology] = e.t - submitted[e.topology]
        return out

    def scheduling_failures(self) -> list[tuple[float, str, str]]:
        """``(t, topology, status)`` of every round that left a topology not fully scheduled."""
        return [(e.t, e.topology, e.status) for e in self.trace.select("topology_round") if not e.fully_scheduled]

    def evictions_by_user(self, rolled_back: bool = False) -> dict[str, int]:
        """Evictions per evicted topology's user (with ``rolled_back``, the undone ones too), users in name order."""
        out: dict[str, int] = {}
        for e in self.trace.select("topology_evicted"):
            if rolled_back or not e.rolled_back:
                out[e.user] = out.get(e.user, 0) + 1
        return dict(sorted(out.items()))
