"""Queries over a finished run: select, count, intervals, and the state of the cluster at a time.

``Trace(run)`` reads a run's events once into memory (canonical order) and indexes them by kind, with their times
in numpy arrays, so that many queries on one run cost a binary search and a scan of the matching kind rather
than a pass over the segment files. ``trace_of(run)`` returns the same ``Trace`` for the same ``Run`` object, so
helpers that take a run (the assertions of :mod:`clusteremu.emulator.testing`) share one load.

Filters, the same in every query:

* ``kind``: a kind name, several, or None for every kind.
* ``entity``: an agent name or a glob (``"broker-*"``); an event matches when its ``agent`` or one of its
  entity fields (:data:`ENTITY_FIELDS`: ``member``, ``bundle``, ``topic``, ``owner``, ``session``, ``broker``,
  ``src``, ``dst``) matches. So ``entity="member-2"`` finds the member's own events, the monitor's events about
  it and the network's drops of its messages. For anything narrower, use ``where``.
* ``within``: ``(start, end)`` in virtual seconds, both ends included; either may be None (open).
* ``where``: a predicate on the :class:`~clusteremu.emulator.trace.reader.Event`.

Per-entity grouping (intervals, ``same_entity``) uses one key per event, :func:`entity_of`: its first field among
:data:`ENTITY_KEYS` (``member``, ``bundle``, ``topic``, ``owner``), else its agent — the monitor's heartbeat
receipts group by member, a broker's load reports by broker.
"""
from __future__ import annotations

import bisect
import fnmatch
import math
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, Union

import numpy as np

from .reader import Event, Run, open_run

#: Fields naming the entity an event is about, in the order that picks an event's grouping key.
ENTITY_KEYS = ("member", "bundle", "topic", "owner")
#: Fields an ``entity=`` filter looks at besides ``agent`` (``src``/``dst``: the network's dropped messages).
ENTITY_FIELDS = ENTITY_KEYS + ("session", "broker", "src", "dst")

Kinds = Union[str, Iterable[str], None]
Window = Union[tuple[Union[float, None], Union[float, None]], None]
Predicate = Callable[[Event], bool]
RunLike = Union["Trace", Run, str, Path]


def entity_of(ev: Event) -> str:
    """The key that groups ``ev`` per entity: its first field among :data:`ENTITY_KEYS`, else its agent."""
    fields = ev.fields
    for name in ENTITY_KEYS:
        v = fields.get(name)
        if isinstance(v, str) and v:
            return v
    return ev.agent


def matches_entity(ev: Event, entity: str) -> bool:
    """True when ``ev``'s agent or one of its :data:`ENTITY_FIELDS` equals ``entity`` (a glob if it has ``*?[``)."""
    if _is_glob(entity):
        ok = lambda v: isinstance(v, str) and fnmatch.fnmatchcase(v, entity)  # noqa: E731
    else:
        ok = lambda v: v == entity  # noqa: E731
    if ok(ev.agent):
        return True
    fields = ev.fields
    return any(ok(fields.get(name)) for name in ENTITY_FIELDS)


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
        self._owners: dict[str, tuple[list[float], list[str | None]]] | None = None
        self._leaders: tuple[list[float], list[str | None]] | None = None

    # -- identity -------------------------------------------------------------------------------------------
    @property
    def manifest(self) -> dict[str, Any]:
        return self.run.manifest

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
        key = _grouping(by)
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
    def owner_at(self, bundle: str, t: float) -> str | None:
        """The broker owning ``bundle`` at ``t`` (events at ``t`` applied), or None.

        ``bundle_owned`` makes its agent the owner. The owner stops owning at its own ``bundle_unloaded`` of the
        bundle, or when the store's ``store_session_expired`` names it as ``owner`` (its ephemeral ownership nodes are
        deleted). A broker's ``bundle_unloaded`` of a bundle another broker already owns changes nothing. A
        crashed broker still owns its bundles until its session expires, as it does in the store.
        """
        times, owners = self._ownership().get(bundle, ([], []))
        i = bisect.bisect_right(times, t)
        return owners[i - 1] if i else None

    def owners_at(self, t: float) -> dict[str, str]:
        """Every owned bundle at ``t`` and its owner."""
        out = {}
        for bundle in self._ownership():
            owner = self.owner_at(bundle, t)
            if owner is not None:
                out[bundle] = owner
        return dict(sorted(out.items()))

    def ownership_changes(self, bundle: str) -> list[tuple[float, str | None]]:
        """The ownership history of ``bundle``: (time, new owner or None), in order."""
        times, owners = self._ownership().get(bundle, ([], []))
        return list(zip(times, owners))

    def leader_at(self, t: float) -> str | None:
        """The leader broker at ``t`` (events at ``t`` applied): the agent of the latest ``leader_elected``,
        None after a ``leader_vacant`` or before any election."""
        times, leaders = self._leadership()
        i = bisect.bisect_right(times, t)
        return leaders[i - 1] if i else None

    def leader_changes(self) -> list[tuple[float, str | None]]:
        """The leadership history: (time, new leader or None when vacant), in order."""
        return list(zip(*self._leadership()))

    def last_report(self, broker: str, t: float) -> Event | None:
        """``broker``'s latest ``load_report`` at or before ``t``."""
        times, idx = self._per_agent("load_report").get(broker, (None, None))
        if times is None:
            return None
        i = int(np.searchsorted(times, t, side="right"))
        return self.events[idx[i - 1]] if i else None

    def reports_at(self, t: float) -> dict[str, Event]:
        """Every broker's latest ``load_report`` at or before ``t``."""
        out = {}
        for broker in sorted(self._per_agent("load_report")):
            ev = self.last_report(broker, t)
            if ev is not None:
                out[broker] = ev
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
            if entity is not None and not matches_entity(ev, entity):
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

    def _ownership(self) -> dict[str, tuple[list[float], list[str | None]]]:
        if self._owners is None:
            current: dict[str, str | None] = {}
            history: dict[str, tuple[list[float], list[str | None]]] = {}

            def change(bundle: str, t: float, owner: str | None) -> None:
                current[bundle] = owner
                times, owners = history.setdefault(bundle, ([], []))
                if times and times[-1] == t:
                    owners[-1] = owner  # only the state after every event at t is observable
                else:
                    times.append(t)
                    owners.append(owner)

            for ev in self.select(("bundle_owned", "bundle_unloaded", "store_session_expired")):
                if ev.kind == "bundle_owned":
                    change(ev.bundle, ev.t, ev.agent)
                elif ev.kind == "bundle_unloaded":
                    if current.get(ev.bundle) == ev.agent:
                        change(ev.bundle, ev.t, None)
                else:
                    lost = ev.get("owner")
                    if lost:
                        for bundle, owner in list(current.items()):
                            if owner == lost:
                                change(bundle, ev.t, None)
            self._owners = history
        return self._owners

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


def _grouping(by: str | Callable[[Event], Any] | None) -> Callable[[Event], Any]:
    if by is None:
        return entity_of
    if callable(by):
        return by
    field = by
    return lambda ev: ev.agent if field == "agent" else ev.get(field)


def _is_glob(s: str) -> bool:
    return any(c in s for c in "*?[")
