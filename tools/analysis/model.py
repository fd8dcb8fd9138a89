"""What a modelled system contributes to an analysis: :class:`ModelFigures`, made of a tally and :class:`Part`\\ s.

The pipeline (:mod:`clusteremu.tools.analysis.pipeline`) analyses the runs of one model in one Spark job. The Python
workers that decode the segments count every event — per (run, kind, agent, key), where the key is a
kind-specific string the model computes (``bundle_unloaded`` by ``reason``, say) — and pass on, for each
:class:`Part`, only the rows of its kinds and its columns (:mod:`clusteremu.tools.spark.routing`). Spark brings each run's
rows of each part together and calls the part's pure pandas function on them in an executor; the runs, and the
parts of a run, are computed in parallel. The driver assembles the figures from the tally and the parts.

Components: :class:`ModelFigures` (what a system subclasses), :class:`Part` and :data:`PartFunction`,
:class:`PartResult`, :class:`RunParams` (what a part knows of its run), :class:`Context` (the runs of one model),
:class:`Headline`, :func:`declared_schema` (an :class:`EventSchema` typed by the event declarations), and absent
figures: :func:`absent` (a figure that cannot be computed is null with its reason, never a made-up number),
:func:`absent_reasons`, :func:`mark_partial` and :func:`partial_reason`.

A system's figures are the ``figures`` target of its :class:`clusteremu.emulator.systems.System` (a
:class:`ModelFigures` subclass in a module of the system's own); docs/analysis.md says what to declare.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable, Mapping, Sequence

import pandas as pd

from clusteremu.emulator import models
from clusteremu.emulator.trace import kinds as event_kinds
from clusteremu.tools.spark.routing import Key
from clusteremu.tools.spark.segments import EventSchema

from .options import SETTLE_WINDOW, Option
from .runs import RunInfo

if TYPE_CHECKING:
    from clusteremu.tools.report import Panel


@dataclass(frozen=True)
class RunParams:
    """What a part function knows about its run besides its rows (small and picklable: it travels to the
    executors). ``end`` is the run's end on the time axis, ``window_start`` the start of its settle window,
    ``options`` the resolved options of its model (``settle_window_s`` and the model's own, by name: what
    ``summary.json`` records), ``scenario`` the scenario recorded in the manifest (empty when unknown)."""

    model: str
    end: float
    window_start: float
    options: Mapping[str, float]
    scenario: Mapping[str, Any]


@dataclass
class PartResult:
    """A part's output for one run: a fragment of the figures, and tables (written as Parquet, plotted)."""

    figures: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)


#: A part's computation: one run's rows (columns ``t``, ``agent``, ``seq``, ``kind`` and the part's columns,
#: in canonical order) → its figures and tables. Must be a module-level function (it is shipped by reference).
PartFunction = Callable[[pd.DataFrame, RunParams], PartResult]


@dataclass(frozen=True)
class Part:
    """A family of figures computed from the rows of some kinds, one run at a time."""

    name: str
    kinds: tuple[str, ...]
    columns: tuple[str, ...]
    compute: PartFunction


@dataclass
class Context:
    """The runs of one model analysed together (a run's index is its position in ``runs``), the model's resolved
    options (:meth:`clusteremu.tools.analysis.options.AnalysisOptions.resolved`) and the runs' ends."""

    runs: list[RunInfo]
    options: Mapping[str, float]
    ends: dict[int, float] = field(default_factory=dict)

    def end(self, run: int) -> float:
        return self.ends.get(run, 0.0)

    def window_start(self, run: int) -> float:
        """Start of the settle window of run ``run``: its last ``settle_window_s`` seconds (from 0 at least)."""
        return max(0.0, self.end(run) - self.options[SETTLE_WINDOW.name])

    def params(self, run: int) -> RunParams:
        info = self.runs[run]
        return RunParams(info.model, self.end(run), self.window_start(run), self.options, info.scenario)


@dataclass(frozen=True)
class Headline:
    """A figure the cross-run table and the report put first: its label, dotted path in ``figures``, unit."""

    label: str
    path: str
    unit: str = ""


#: The key under which a figures fragment carries the reasons of its absent (null) figures, by name.
ABSENT_KEY = "_absent"


def absent(figures: dict[str, Any], name: str, reason: str) -> None:
    """Set the figure ``name`` of ``figures`` to None, recording why: a figure that cannot be computed (a
    settle time of a run that never settled, a share of nothing) is absent with its reason, not a number. The
    reasons travel with the figures (as plain JSON) and end in ``summary.json``'s ``absent``."""
    figures[name] = None
    figures.setdefault(ABSENT_KEY, {})[name] = reason


def absent_reasons(figures: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """Remove the reasons recorded by :func:`absent` anywhere in ``figures`` and return them by dotted path
    (``{"settle.time_s": "not settled ..."}``); a reason whose figure has a value after all is dropped."""
    out: dict[str, str] = {}
    reasons = figures.pop(ABSENT_KEY, None)
    for key, value in figures.items():
        if isinstance(value, dict):
            out.update(absent_reasons(value, f"{prefix}{key}."))
    if isinstance(reasons, dict):
        out.update({f"{prefix}{k}": str(r) for k, r in reasons.items() if figures.get(k) is None})
    return dict(sorted(out.items()))


def mark_partial(figures: dict[str, Any], paths: Iterable[str], reason: str) -> None:
    """Make the figures at the dotted ``paths`` absent with ``reason`` (the figures that need the whole trace
    when only part of it was read); a path that is not there is skipped."""
    for path in paths:
        *parents, name = path.split(".")
        node: Any = figures
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and name in node:
            absent(node, name, reason)


def partial_reason(info: RunInfo, end: float, problems: Sequence[Mapping[str, Any]]) -> str:
    """Why a partial run's whole-run figures are absent, in words."""
    if not info.complete:
        until = f" of {info.until:,.0f} s" if info.until is not None else ""
        return f"the run did not finish (trace ends at {end:,.0f} s{until}): needs the whole run"
    return f"part of the trace could not be read ({len(problems)} problem{'s' if len(problems) != 1 else ''}): needs the whole trace"


class ModelFigures:
    """The figures of one modelled system. The base class is the model-less analysis: what every trace has."""

    #: The model's name, as in ``scenario.model``.
    model: ClassVar[str] = ""
    #: Kinds and fields the model's tally and parts read (the common ones are added by the pipeline).
    schema: ClassVar[EventSchema] = EventSchema({})
    #: Kinds whose events mark the time axis of every plot.
    marker_kinds: ClassVar[tuple[str, ...]] = ()
    #: Figures of the cross-run table, first in the report.
    headline: ClassVar[tuple[Headline, ...]] = ()
    #: The model's own analysis options (``settle_window_s`` is every model's): recorded in ``summary.json``,
    #: read by the parts from ``RunParams.options``, and each one with a ``flag`` is a flag of ``analyze``,
    #: ``compare`` and ``sweep``.
    options: ClassVar[tuple[Option, ...]] = ()
    #: Dotted paths of the figures that only the whole trace defines (a settle time "to the end of the run"):
    #: absent, with the reason, when the run is partial (:func:`mark_partial`).
    whole_run: ClassVar[tuple[str, ...]] = ()

    def tally_keys(self) -> dict[str, Key]:
        """kind → how its tally is split (e.g. ``bundle_unloaded`` by ``reason``)."""
        return {}

    def tally_extras(self) -> dict[str, tuple[str, str]]:
        """More tally aggregates: ``name → (column, "sum" | "min" | "max")``."""
        return {}

    def parts(self) -> list[Part]:
        """The model's parts (the common ones are added by the pipeline)."""
        return []

    def figures(self, tally: pd.DataFrame, parts: Mapping[str, Mapping[str, Any]], params: RunParams) -> dict[str, Any]:
        """The model's figures of one run from its tally rows and its parts' figure fragments (by part name)."""
        return {}

    def marker_rows(self, rows: pd.DataFrame) -> list[tuple[float, float | None, str, str, str]]:
        """Markers ``(t, end_t, kind, agent, label)`` from the run's events of ``marker_kinds``."""
        return []

    def panels(self, tables: Mapping[str, pd.DataFrame], summary: Mapping[str, Any]) -> list["Panel"]:
        """The plots of the report, from the run's tables and summary."""
        return []


def declared_schema(fields: Mapping[str, Iterable[str]], *, system: str | None = None) -> EventSchema:
    """The :class:`EventSchema` of ``fields`` (kind → the names of the fields an analysis reads), each field typed
    as its kind's declaration says (:mod:`clusteremu.emulator.trace.kinds`), so that a kind's fields are declared
    once. ``system`` names the registered system whose event declarations to load first; the kernel's own kinds
    (``stw_pause``, ``fault_begin``, ...) are always loaded. KeyError for an undeclared kind or field."""
    if system is not None:
        models.declare_events(system)
    # The kinds declared so far, without loading every model (``all_kinds()`` would import every system's agents).
    declared = event_kinds.declared_kinds()
    schema: dict[str, dict[str, str]] = {}
    for kind, names in fields.items():
        if kind not in declared:
            raise KeyError(f"event kind {kind!r} is not declared (system {system!r})")
        types = declared[kind].fields
        missing = [n for n in names if n not in types]
        if missing:
            raise KeyError(f"event kind {kind!r} declares no field {', '.join(map(repr, missing))}")
        # ``?`` marks an optional field: its values have the same type, or are null.
        schema[kind] = {n: types[n].rstrip("?") for n in names}
    return EventSchema(schema)
