"""JVM mechanics shared by every agent that models a Java process (a broker, a name server, a scheduler, ...).

The kernel's :class:`~.agent.Agent` already has the pieces a JVM is made of: the runnable gate that a
stop-the-world pause closes (:meth:`~.agent.Agent.stop_the_world`) and single-threaded scheduled executors with
Java's fixed-rate and fixed-delay semantics (:mod:`.executor`). This module adds what makes an agent behave like a
garbage-collected JVM, once, so that no model copies it:

* :class:`GcSettings`: the ``gc`` scenario table of a model (young and full collections), typed; its fields, their
  bounds and documentation are :data:`GC_FIELDS` (:class:`SettingSpec`), from which a model builds its schema
  table (the kernel imports no scenario code);
* :class:`JvmAgent`: an agent whose young and full collections pause it (exponential gaps, lognormal
  pause lengths, each kind on its own keyed random stream) and which understands the JVM fault kinds;
* :data:`JVM_FAULTS`: those fault kinds — ``gc_storm`` (a burst of stop-the-world pauses) — with
  :data:`GC_STORM_FIELDS`, :data:`JVM_FAULT_DEFAULTS` and :data:`JVM_FAULT_REQUIRED` for a model's ``[[faults]]``
  validation.

Cluster operations (scale out/in, rolling restarts) are not JVM mechanics: they are an operator's scripts over
processes, and belong above the kernel, with the systems that know how their processes stop and start.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Generator, Mapping

import simpy

from .agent import Agent
from .timer import call_first, call_later

__all__ = ["GC_FIELDS", "GC_STORM_FIELDS", "JVM_FAULTS", "JVM_FAULT_DEFAULTS", "JVM_FAULT_REQUIRED", "GcSettings",
           "JvmAgent", "SettingSpec"]


@dataclass(frozen=True)
class SettingSpec:
    """One setting of a scenario table or fault entry: its type (``float``, ``int``, ``str``), its bounds and
    what it means, described without the scenario schema's classes."""

    type: str
    doc: str
    gt: float | None = None
    ge: float | None = None


#: fault kinds every JVM agent handles in :meth:`JvmAgent.on_fault`
JVM_FAULTS = ("gc_storm",)

#: the fields of a ``gc_storm`` fault beyond the kernel's (``at``, ``duration_s``, ``agents``, ``label``)
GC_STORM_FIELDS: dict[str, SettingSpec] = {
    "every_s": SettingSpec("float", "gc_storm: mean gap between pauses (exponential)", gt=0),
    "pause_s": SettingSpec("float", "gc_storm: median pause length (lognormal)", gt=0),
    "sigma": SettingSpec("float", "gc_storm: lognormal sigma of the pause length (0.5)", ge=0),
}

#: per-kind defaults of the optional fault fields
JVM_FAULT_DEFAULTS: dict[str, dict[str, Any]] = {"gc_storm": {"sigma": 0.5}}

#: fields each JVM fault kind needs
JVM_FAULT_REQUIRED: dict[str, tuple[str, ...]] = {"gc_storm": ("duration_s", "every_s", "pause_s")}


@dataclass(frozen=True)
class GcSettings:
    """A JVM's garbage collections: young and full pauses at exponential gaps (a mean of 0 means none), with
    lognormal lengths of the given median and shape."""

    young_every_s: float = 0.0
    young_pause_ms: float = 30.0
    full_every_s: float = 0.0
    full_pause_s: float = 2.0
    sigma: float = 0.3

    @classmethod
    def of(cls, table: "GcSettings | Mapping[str, Any]") -> "GcSettings":
        """From a validated ``gc`` scenario table (or settings already typed)."""
        if isinstance(table, GcSettings):
            return table
        return cls(**{f.name: float(table[f.name]) for f in fields(cls)})


#: the ``gc`` table's fields; their defaults are :class:`GcSettings`' (a model may override them in its table)
GC_FIELDS: dict[str, SettingSpec] = {
    "young_every_s": SettingSpec("float", "mean time between young pauses; 0 = none", ge=0),
    "young_pause_ms": SettingSpec("float", "median young pause", gt=0),
    "full_every_s": SettingSpec("float", "mean time between full pauses; 0 = none", ge=0),
    "full_pause_s": SettingSpec("float", "median full pause", gt=0),
    "sigma": SettingSpec("float", "lognormal shape of pause lengths", ge=0),
}


class JvmAgent(Agent):
    """An agent that is a JVM: garbage-collection pauses and the JVM fault kinds.

    A subclass calls :meth:`start_gc` from ``on_start`` (where in its start-up order it likes: the first
    steps of the collections' timers are queued there) and passes unknown fault kinds to ``super().on_fault``.
    """

    def start_gc(self, gc: GcSettings | Mapping[str, Any]) -> None:
        """Start the young collections' pauses, then the full collections' (those with a mean gap > 0)."""
        s = GcSettings.of(gc)
        if s.young_every_s > 0:
            _Collections(self, "young", s.young_every_s, s.young_pause_ms / 1000.0, s.sigma)
        if s.full_every_s > 0:
            _Collections(self, "full", s.full_every_s, s.full_pause_s, s.sigma)

    def gc_storm(self, spec: Mapping[str, Any]) -> Generator[simpy.Event, None, None]:
        """Stop-the-world pauses starting in [at, at + duration_s): exponential gaps of mean ``every_s``,
        lognormal lengths of median ``pause_s``. Its own keyed stream, so other draws do not shift it."""
        rng = self.rng(f"gc_storm@{spec['at']}:{spec['label']}")
        end = spec["at"] + spec["duration_s"]
        t = self.now
        while True:
            t += float(rng.exponential(spec["every_s"]))
            if t >= end:
                return
            yield self.env.timeout(t - self.now)  # the storm's clock is not stopped by its own pauses
            self.stop_the_world(float(spec["pause_s"] * rng.lognormal(0.0, spec["sigma"])), cause="gc_storm")

    def on_fault(self, kind: str, spec: dict[str, Any]) -> None:
        """``gc_storm`` (see :meth:`gc_storm`); the kernel's ``pause`` and ``crash`` otherwise."""
        if kind == "gc_storm":
            self.spawn(self.gc_storm(spec))
        else:
            super().on_fault(kind, spec)


class _Collections:
    """One kind of collection's pauses for one run of a JVM agent: exponential gaps of allocation time (they only
    elapse while the JVM runs), then a lognormal stop-the-world pause, on the kind's own keyed stream so that other
    draws of the agent never shift its pauses.

    A chain of timers rather than a process (a young pause of each of thousands of agents every half minute): the
    timers take the
    queue places the process's steps would (its first step an urgent entry now, each gap a timer, a gap that ends
    in a pause waits in the gate's callbacks), so the pauses run in the same order among every other event. A
    crash or stop of the agent ends the chain, as it would end the process."""

    __slots__ = ("agent", "env", "cause", "every_s", "median_s", "sigma", "rng", "ended")

    def __init__(self, agent: JvmAgent, kind: str, every_s: float, median_s: float, sigma: float) -> None:
        self.agent, self.env = agent, agent.env
        self.cause = f"gc-{kind}"
        self.every_s, self.median_s, self.sigma = every_s, median_s, sigma
        self.rng = agent.rng(self.cause)
        self.ended = False
        agent.on_crash(self._end)
        call_first(self.env, self._allocate)

    def _end(self) -> None:
        self.ended = True

    def _allocate(self, _timer: object = None) -> None:
        if self.ended:
            return
        gap = float(self.rng.exponential(self.every_s))
        if gap > 0:
            call_later(self.env, gap, self._collect)
        else:
            self._collect()

    def _collect(self, _event: object = None) -> None:
        if self.ended:
            return
        gate = self.agent.gate
        if not gate.is_open:  # the gap ran out during a pause: the collection waits for the JVM to run
            gate.on_open(self._collect)
            return
        self.agent.stop_the_world(float(self.median_s * self.rng.lognormal(0.0, self.sigma)), cause=self.cause)
        self._allocate()
