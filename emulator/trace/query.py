"""Queries over a finished run: select, count, intervals, and the state of the cluster at a time.

``Trace(run)`` reads a run's events once into memory (canonical order) and indexes them by kind, with their times
in numpy arrays, so that many queries on one run cost a binary search and a scan of the matching kind rather
than a pass over the segment files. ``trace_of(run)`` returns the same ``Trace`` for the same ``Run`` object, so
helpers that take a run (the assertions of :mod:`clusteremu.emulator.testing`) share one load.

Filters, the same in every query:

* ``kind``: a kind name, several, or None for every kind.
* ``entity``: an agent name or a glob (``"broker-*"``); an event matches when its ``agent`` or one of its
  entity fields (:func:`entity_fields`: those the registered systems declare, e.g. Pulsar's ``bundle``,
  ``topic``, ``owner``, ``broker`` and the heartbeat model's ``member``, and the kernel's ``session``, ``src``,
  ``dst``) matches. So ``entity="member-2"`` finds the member's own events, the monitor's events about
  it and the network's drops of its messages. For anything narrower, use ``where``.
* ``within``: ``(start, end)`` in virtual seconds, both ends included; either may be None (open).
* ``where``: a predicate on the :class:`~clusteremu.emulator.trace.reader.Event`.

Per-entity grouping (intervals, ``same_entity``) uses one key per event, :func:`entity_of`: its first field among
:func:`entity_keys` (``member``, ``bundle``, ``topic``, ``owner`` with the built-in systems), else its agent — the monitor's heartbeat
receipts group by member, a broker's load reports by broker.
"""
from __future__ import annotations

import bisect
import fnmatch
import functools
import math
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, Union

import numpy as np

from .. import systems
from .reader import Event, Run, open_run

#: Fields of the kernel's own events that an ``entity=`` filter looks at (``src``/``dst``: the network's dropped
#: messages; ``session``: a store session).
KERNEL_ENTITY_FIELDS = ("session", "src", "dst")


def entity_keys(model: str | None = None) -> tuple[str, ...]:
    """Fields naming the entity an event is about, in the order that picks an event's grouping key: the
    ``entity_keys`` of system ``model``, or, for None or a model not registered here, of every registered system
    (systems in name order)."""
    return _entity_keys(model, systems.generation())


def entity_fields(model: str | None = None) -> tuple[str, ...]:
    """Fields an ``entity=`` filter looks at besides ``agent``: :func:`entity_keys`, the system's (or every
    system's) other ``entity_fields``, and the kernel's own."""
    return _entity_fields(model, systems.generation())


@functools.lru_cache(maxsize=64)
def _entity_keys(model: str | None, _generation: int) -> tuple[str, ...]:
    found = systems.systems()
    chosen = [found[model]] if model in found else list(found.values())
    keys: list[str] = []
    for sys_ in chosen:
        keys += [k for k in sys_.entity_keys if k not in keys]
    return tuple(keys)


@functools.lru_cache(maxsize=64)
def _entity_fields(model: str | None, _generation: int) -> tuple[str, ...]:
    found = systems.systems()
    chosen = [found[model]] if model in found else list(found.values())
    fields = list(entity_keys(model))
    for sys_ in chosen:
        fields += [f for f in sys_.entity_fields if f not in fields]
    return tuple(fields + [f for f in KERNEL_ENTITY_FIELDS if f not in fields])


Kinds = Union[str, Iterable[str], None]
Window = Union[tuple[Union[float, None], Union[float, None]], None]
Predicate = Callable[[Event], bool]
RunLike = Union["Trace", Run, str, Path]


def entity_of(ev: Event, keys: Sequence[str] | None = None) -> str:
    """The key that groups ``ev`` per entity: its first field among ``keys`` (default: :func:`entity_keys` of
    every system; a :class:`Trace` passes its own system's), else its agent."""
    fields = ev.fields
    for name in entity_keys() if keys is None else keys:
        v = fields.get(name)
        if isinstance(v, str) and v:
            return v
    return ev.agent


def matches_entity(ev: Event, entity: str, fields: Sequence[str] | None = None) -> bool:
    """True when ``ev``'s agent or one of its entity ``fields`` (default: :func:`entity_fields` of every system)
    equals ``entity`` (a glob if it has ``*?[``)."""
    if _is_glob(entity):
        ok = lambda v: isinstance(v, str) and fnmatch.fnmatchcase(v, entity)  # noqa: E731
    else:
        ok = lambda v: v == entity  # noqa: E731
    if ok(ev.agent):
        return True
    values = ev.fields
    return any(ok(values.get(name)) for name in (entity_fields() if fields is None else fields))


@dataclass(frozen=True)
class Interval:
    """Two successive events of one entity and the virtual time between them."""

    entity: str
    before: Event
    after: Event

    @property
    def seconds(self) -> float:
        return self.after.t - self.before.t


class Trace:
    """A finished run loaded for querying. ``run`` may be a :class:`Run`, a run directory or another ``Trace``.

    ``allow_partial`` marks a trace of an incomplete run as fit for assertions (:mod:`clusteremu.emulator.testing` refuses
    incomplete runs otherwise); queries work on any trace.
    """

    def __init__(self, run: RunLike, *, allow_partial: bool = False) -> None:
        self.allow_partial = allow_partial
        if isinstance(run, Trace):
            run = run.run
        self.run: Run = run if isinstance(run, Run) else open_run(run)
        self.events: tuple[Event, ...] = tuple(self.run.events())
        self.times = np.fromiter((e.t for e in self.events), dtype=float, count=len(self.events))
        by_kind: dict[str, list[int]] = {}
        for i, e in enumerate(self.events):
            by_kind.setdefault(e.kind, []).append(i)
        self._by_kind = {k: np.asarray(v, dtype=np.int64) for k, v in by_kind.items()}
        self._kind_times = {k: self.times[v] for k, v in self._by_kind.items()}
        self._position = {id(e): i for i, e in enumerate(self.events)}
        self._frames: dict[str, Any] = {}
        self._agent_index: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
        self._views: Any = None
        model = self.model
        #: the entity fields of the run's system (every system's when it is not registered here)
        self.entity_keys: tuple[str, ...] = entity_keys(model)
        self.entity_fields: tuple[str, ...] = entity_fields(model)
        self._leaders: tuple[list[float], list[str | None]] | None = None

    # -- identity -------------------------------------------------------------------------------------------
    @property
    def manifest(self) -> dict[str, Any]:
        return self.run.manifest

    @property
    def model(self) -> str | None:
        """The run's system (``scenario.model`` in its manifest), or None when the manifest does not say."""
        head = self.manifest.get("scenario", {}).get("scenario", {})
        model = head.get("model") if isinstance(head, dict) else None
        return model if isinstance(model, str) else None

    def entity_of(self, ev: Event) -> str:
        """The key that groups ``ev`` per entity in this run (:func:`entity_of` with the run's system's keys)."""
        return entity_of(ev, self.entity_keys)

    @property
    def complete(self) -> bool:
        """True when the run finished and every segment read back intact (see ``Run.complete``)."""
        return self.run.complete

    @property
    def end(self) -> float:
        """Virtual time the run was asked to reach (``until`` in the manifest), else the last event's time."""
        until = self.manifest.get("until")
        if isinstance(until, (int, float)):
            return float(until)
        return float(self.times[-1]) if len(self.times) else 0.0

    @property
    def kinds(self) -> dict[str, int]:
        """Every kind present in the trace and how many events it has."""
        return {k: len(v) for k, v in sorted(self._by_kind.items())}

    def __len__(self) -> int:
        return len(self.events)

    def __repr__(self) -> str:
        return f"Trace({str(self.run.dir)!r}, {len(self.events)} events)"

    # -- selection ------------------------------------------------------------------------------------------
    def select(
        self,
        kind: Kinds = None,
        *,
        entity: str | None = None,
        within: Window = None,
        where: Predicate | None = None,
    ) -> list[Event]:
        """The matching events in canonical order."""
        return [self.events[i] for i in self._indices(kind, entity, within, where)]

    def first(self, kind: Kinds = None, **filters: Any) -> Event | None:
        """The earliest matching event, or None (same filters as :meth:`select`)."""
        for i in self._indices(kind, **_filters(filters)):
            return self.events[i]
        return None

    def last(self, kind: Kinds = None, **filters: Any) -> Event | None:
        """The latest matching event, or None (same filters as :meth:`select`)."""
        found = self._indices(kind, **_filters(filters))
        return self.events[found[-1]] if found else None

    def count(self, kind: Kinds = None, **filters: Any) -> int:
        """How many events match (same filters as :meth:`select`)."""
        return len(self._indices(kind, **_filters(filters)))

    def times_of(self, kind: Kinds = None, **filters: Any) -> np.ndarray:
        """The virtual times of the matching events, as a float array."""
        return self.times[np.asarray(self._indices(kind, **_filters(filters)), dtype=np.int64)]

    def intervals(
        self,
        kind: Kinds,
        *,
        entity: str | None = None,
        within: Window = None,
        where: Predicate | None = None,
        by: str | Callable[[Event], Any] | None = None,
    ) -> list[Interval]:
        """Intervals between successive matching events of the same entity, in the order of their later event.

        ``by`` changes the grouping: a field name, a function of the event, or the default :func:`entity_of`.
        Only events inside ``within`` take part, so an interval never spans the window's edge.
        """
        key = self.entity_of if by is None else _grouping(by)
        last: dict[Any, Event] = {}
        out: list[Interval] = []
        for i in self._indices(kind, entity, within, where):
            ev = self.events[i]
            k = key(ev)
            prev = last.get(k)
            if prev is not None:
                out.append(Interval(str(k), prev, ev))
            last[k] = ev
        return out

    def positions(self, kind: Kinds = None, **filters: Any) -> list[int]:
        """Indices in :attr:`events` (canonical order) of the matching events (same filters as :meth:`select`)."""
        return self._indices(kind, **_filters(filters))

    def position(self, ev: Event) -> int:
        """Index of ``ev`` (an event of this trace) in canonical order."""
        try:
            return self._position[id(ev)]
        except KeyError:
            raise ValueError(f"{ev!r} is not an event of {self!r}") from None

    def around(self, ev: Event, before: int = 3, after: int = 3) -> list[Event]:
        """``ev`` with up to ``before``/``after`` events of any kind around it, in canonical order."""
        i = self.position(ev)
        return list(self.events[max(0, i - before) : i + after + 1])

    def frame(self, kind: str):
        """The events of one kind as a pandas DataFrame (t, agent, seq, kind and the kind's fields), cached."""
        df = self._frames.get(kind)
        if df is None:
            import pandas as pd

            rows = [e.as_dict() for e in self.select(kind)]
            df = pd.DataFrame.from_records(rows, columns=None if rows else ["t", "agent", "seq", "kind"])
            self._frames[kind] = df
        return df.copy()

    # -- state at a time --------------------------------------------------------------------------------------
    @property
    def views(self) -> Any:
        """The views of the run's system over this trace (the ``views`` class its :class:`~clusteremu.emulator.systems.System`
        names, e.g. Pulsar's ``owner_at``); ``LookupError`` when the run's system declares none."""
        if self._views is None:
            model = self.model
            try:
                target = systems.system(model).views
            except KeyError as err:
                raise LookupError(f"{self.run.dir}: {err.args[0]}") from None
            if target is None:
                raise LookupError(f"{self.run.dir}: the {model} system declares no trace views")
            self._views = systems.load(target)(self)
        return self._views

    def leader_at(self, t: float) -> str | None:
        """The leader broker at ``t`` (events at ``t`` applied): the agent of the latest ``leader_elected``,
        None after a ``leader_vacant`` or before any election."""
        times, leaders = self._leadership()
        i = bisect.bisect_right(times, t)
        return leaders[i - 1] if i else None

    def leader_changes(self) -> list[tuple[float, str | None]]:
        """The leadership history: (time, new leader or None when vacant), in order."""
        return list(zip(*self._leadership()))

    def latest(self, kind: str, agent: str, t: float) -> Event | None:
        """``agent``'s latest event of ``kind`` at or before ``t``."""
        times, idx = self._per_agent(kind).get(agent, (None, None))
        if times is None:
            return None
        i = int(np.searchsorted(times, t, side="right"))
        return self.events[idx[i - 1]] if i else None

    def latest_per_agent(self, kind: str, t: float) -> dict[str, Event]:
        """Every agent's latest event of ``kind`` at or before ``t``, agents in name order."""
        out = {}
        for agent in sorted(self._per_agent(kind)):
            ev = self.latest(kind, agent, t)
            if ev is not None:
                out[agent] = ev
        return out

    # -- internals --------------------------------------------------------------------------------------------
    def _indices(
        self,
        kind: Kinds = None,
        entity: str | None = None,
        within: Window = None,
        where: Predicate | None = None,
    ) -> list[int]:
        lo, hi = _window(within)
        if kind is None:
            a = int(np.searchsorted(self.times, lo, side="left"))
            b = int(np.searchsorted(self.times, hi, side="right"))
            candidates: Sequence[int] = range(a, b)
        else:
            parts = []
            for k in _kinds(kind):
                idx = self._by_kind.get(k)
                if idx is None:
                    continue
                kt = self._kind_times[k]
                a = int(np.searchsorted(kt, lo, side="left"))
                b = int(np.searchsorted(kt, hi, side="right"))
                parts.append(idx[a:b])
            if not parts:
                return []
            candidates = (np.sort(np.concatenate(parts)) if len(parts) > 1 else parts[0]).tolist()
        if entity is None and where is None:
            return list(candidates)
        events = self.events
        out = []
        for i in candidates:
            ev = events[i]
            if entity is not None and not matches_entity(ev, entity, self.entity_fields):
                continue
            if where is not None and not where(ev):
                continue
            out.append(i)
        return out

    def _per_agent(self, kind: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per agent, the times and event indices of its events of ``kind`` (built once per kind)."""
        cached = self._agent_index.get(kind)
        if cached is None:
            groups: dict[str, list[int]] = {}
            for i in self._by_kind.get(kind, ()):
                groups.setdefault(self.events[i].agent, []).append(int(i))
            cached = {a: (self.times[ix], np.asarray(ix, dtype=np.int64)) for a, ix in groups.items()}
            self._agent_index[kind] = cached
        return cached

    def _leadership(self) -> tuple[list[float], list[str | None]]:
        if self._leaders is None:
            times: list[float] = []
            leaders: list[str | None] = []
            for ev in self.select(("leader_elected", "leader_vacant")):
                who = ev.agent if ev.kind == "leader_elected" else None
                if times and times[-1] == ev.t:
                    leaders[-1] = who
                else:
                    times.append(ev.t)
                    leaders.append(who)
            self._leaders = (times, leaders)
        return self._leaders


_TRACES: "weakref.WeakKeyDictionary[Run, Trace]" = weakref.WeakKeyDictionary()


def trace_of(run: RunLike) -> Trace:
    """The :class:`Trace` of ``run``: loaded once per ``Run`` object and reused; a path is loaded afresh."""
    if isinstance(run, Trace):
        return run
    if isinstance(run, Run):
        tr = _TRACES.get(run)
        if tr is None:
            tr = _TRACES[run] = Trace(run)
        return tr
    return Trace(run)


# -- helpers --------------------------------------------------------------------------------------------------
def _kinds(kind: Kinds) -> tuple[str, ...]:
    if kind is None:
        return ()
    if isinstance(kind, str):
        return (kind,)
    return tuple(kind)


def _window(within: Window) -> tuple[float, float]:
    if within is None:
        return -math.inf, math.inf
    try:
        lo, hi = within
    except (TypeError, ValueError):
        raise TypeError(f"within must be (start, end) in seconds, either may be None; got {within!r}") from None
    return (-math.inf if lo is None else float(lo)), (math.inf if hi is None else float(hi))


def _filters(filters: dict[str, Any]) -> dict[str, Any]:
    unknown = set(filters) - {"entity", "within", "where"}
    if unknown:
        raise TypeError(f"unknown filter(s) {sorted(unknown)}; expected entity=, within=, where=")
    return filters


def _grouping(by: str | Callable[[Event], Any]) -> Callable[[Event], Any]:
    if callable(by):
        return by
    field = by
    return lambda ev: ev.agent if field == "agent" else ev.get(field)


def _is_glob(s: str) -> bool:
    return any(c in s for c in "*?[")
