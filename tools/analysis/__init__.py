"""Per-run analyses of clusteremu traces (DESIGN.md principle 8: PySpark jobs, local by default).

Public API:

* :func:`analyze_runs` — analyse run directories and write ``summary.json``, Parquet tables and ``report.html``;
* :func:`analyze` / :func:`write_analysis` — the two halves, for callers that hold a Spark session;
* :class:`AnalysisOptions` / :class:`Option` — the knobs of the figure definitions;
* :func:`figures_for` — the :class:`ModelFigures` of a model name, from the system registry
  (:mod:`clusteremu.emulator.systems`, the ``figures`` target of each system);
* :func:`declared_options` — every option the registered systems' figures declare (the CLI's flags).

Figures are defined in docs/analysis.md. A model without its own figures gets those every trace has.
"""
from __future__ import annotations

from clusteremu.emulator import systems

from .model import Context, Headline, ModelFigures, Part, PartResult, RunParams, declared_schema
from .options import SETTLE_WINDOW, AnalysisOptions, Option
from .pipeline import ANALYSIS_DIR, RunAnalysis, analyze, analyze_runs, output_dirs, write_analysis

#: The figures of a model that has none of its own: what every trace has.
GENERIC = ModelFigures()


def figures_for(model: str) -> ModelFigures:
    """The figures of ``model``: its system's ``figures`` class, instantiated; the generic figures for a system
    that declares none, or for a model that no registered system has."""
    try:
        target = systems.system(model).figures
    except KeyError:
        return GENERIC
    return GENERIC if target is None else systems.load(target)()


def declared_options() -> list[Option]:
    """The settle window, then every option the registered systems' figures declare, in system name order
    (an option declared by several systems once: they must declare it alike, else ValueError)."""
    out: dict[str, Option] = {SETTLE_WINDOW.name: SETTLE_WINDOW}
    for name in systems.systems():
        for option in figures_for(name).options:
            seen = out.setdefault(option.name, option)
            if seen != option:
                raise ValueError(f"analysis option {option.name!r} is declared differently by system {name!r}")
    return list(out.values())


__all__ = [
    "ANALYSIS_DIR",
    "AnalysisOptions",
    "Context",
    "GENERIC",
    "Headline",
    "ModelFigures",
    "Option",
    "Part",
    "PartResult",
    "RunParams",
    "RunAnalysis",
    "SETTLE_WINDOW",
    "analyze",
    "analyze_runs",
    "declared_options",
    "declared_schema",
    "figures_for",
    "output_dirs",
    "write_analysis",
]
