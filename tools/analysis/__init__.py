"""Per-run analyses of clusteremu traces (DESIGN.md principle 8: PySpark jobs, local by default).

Public API:

* :func:`analyze_runs` — analyse run directories and write ``summary.json``, Parquet tables and ``report.html``;
* :func:`analyze` / :func:`write_analysis` — the two halves, for callers that hold a Spark session;
* :class:`AnalysisOptions` — the knobs of the figure definitions;
* :func:`figures_for` — the :class:`ModelFigures` of a model name; ``FIGURES`` is the registry.

Figures are defined in docs/analysis.md. A model without its own figures (yet) gets those every trace has.
"""
from __future__ import annotations

from .heartbeat import HeartbeatFigures
from .model import Context, Headline, ModelFigures, Part, PartResult, RunParams
from .options import AnalysisOptions
from .pipeline import ANALYSIS_DIR, RunAnalysis, analyze, analyze_runs, output_dirs, write_analysis
from .pulsar import PulsarFigures

#: model name → its figures. Add RocketMQ and Storm here when their figures exist.
FIGURES: dict[str, ModelFigures] = {
    PulsarFigures.model: PulsarFigures(),
    HeartbeatFigures.model: HeartbeatFigures(),
}
#: The figures of a model that has none of its own: what every trace has.
GENERIC = ModelFigures()


def figures_for(model: str) -> ModelFigures:
    """The figures of ``model`` (the generic ones for a model without its own)."""
    return FIGURES.get(model, GENERIC)


__all__ = [
    "ANALYSIS_DIR",
    "AnalysisOptions",
    "Context",
    "FIGURES",
    "GENERIC",
    "Headline",
    "ModelFigures",
    "Part",
    "PartResult",
    "RunParams",
    "RunAnalysis",
    "analyze",
    "analyze_runs",
    "figures_for",
    "output_dirs",
    "write_analysis",
]
