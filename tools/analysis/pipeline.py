"""Analysing runs: decode their traces in Spark, compute every figure, write ``summary.json``, tables, report.

:func:`analyze` is the Spark part: the runs are grouped by model and each group is analysed in one Spark job
(see :mod:`clusteremu.tools.analysis.model`). :func:`write_analysis` writes one run's results; :func:`analyze_runs` does
both for run directories, as ``clusteremu analyze`` does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import pandas as pd

from clusteremu.tools.spark.routing import TallySpec
from clusteremu.tools.spark.segments import last_event_time

from .common import COMMON_KEYS, COMMON_SCHEMA, common_figures, common_parts, run_job
from .encoding import dumps, jsonable
from .model import Context, ModelFigures, absent_reasons, mark_partial, partial_reason
from .options import AnalysisOptions
from .progress import Progress, ignore, spark_tasks
from .runs import RunInfo, open_run_info

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: Format of ``summary.json``.
FORMAT = "clusteremu-analysis/1"
#: Default analysis directory inside a run directory.
ANALYSIS_DIR = "analysis"


@dataclass
class RunAnalysis:
    """One analysed run: its summary (what ``summary.json`` holds) and its tables."""

    info: RunInfo
    summary: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)

    @property
    def partial(self) -> bool:
        return bool(self.summary.get("partial"))


def analyze(
    spark: "SparkSession",
    runs: Sequence[RunInfo],
    options: AnalysisOptions = AnalysisOptions(),
    *,
    events: "DataFrame | None" = None,
) -> list[RunAnalysis]:
    """Analyse ``runs`` (in that order in the result). ``events``, when given, replaces the decoded traces: a
    DataFrame with the decoder's columns whose ``_run`` is the index in ``runs`` (the benchmark feeds the same
    events from Parquet this way); then every run must have the same model. ValueError for an option that no
    registered system declares."""
    from clusteremu.tools.analysis import declared_options, figures_for

    unknown = set(options.values) - {o.name for o in declared_options()}
    if unknown:
        raise ValueError(f"no system declares the analysis option(s) {', '.join(sorted(unknown))}")
    groups: dict[str, list[RunInfo]] = {}
    for info in runs:
        groups.setdefault(info.model, []).append(info)
    if events is not None and len(groups) > 1:
        raise ValueError("an events DataFrame can only be given for runs of one model")
    results: dict[int, RunAnalysis] = {}
    for model, infos in groups.items():
        for r in _analyze_group(spark, infos, figures_for(model), options, events):
            results[r.info.index] = r
    return [results[info.index] for info in runs]


def _analyze_group(
    spark: "SparkSession", infos: list[RunInfo], model: ModelFigures, options: AnalysisOptions, events: "DataFrame | None"
) -> list[RunAnalysis]:
    schema = COMMON_SCHEMA.merged(model.schema)
    ctx = Context(infos, options.resolved(model.options))
    # The parts need each run's end before they run: a finished run's is in its manifest; an unfinished one's is
    # its last readable event, which the ends of its writers' streams give without decoding the rest.
    ctx.ends = {i: info.end(None if info.complete and info.until is not None else last_event_time(info.dir)) for i, info in enumerate(infos)}
    tally_spec = TallySpec(keys={**COMMON_KEYS, **model.tally_keys()}, extras=model.tally_extras())
    marker_columns = [c for k in model.marker_kinds for c in schema.kinds.get(k, {})]
    parts = common_parts(model.marker_kinds, marker_columns) + model.parts()
    job = run_job(spark, [i.dir for i in infos], schema, parts, tally_spec, {i: ctx.params(i) for i in range(len(infos))}, events)
    counts, problems, results = job.counts, job.problems, job.parts
    out = []
    for i, info in enumerate(infos):
        rows = counts[counts["_run"] == i]
        fragments = {p.name: results[(i, p.name)].figures for p in parts}
        tables: dict[str, pd.DataFrame] = {}
        for p in parts:
            tables.update(results[(i, p.name)].tables)
        figures = common_figures(rows, fragments)
        figures.update(model.figures(rows, fragments, ctx.params(i)))
        read = int(rows["count"].sum())
        run_problems = [{"file": f, "offset": o, "reason": r} for f, o, r in info.problems]
        run_problems += [{"file": p.file, "offset": p.offset, "reason": p.reason} for p in problems if p.run == i]
        if info.complete and info.recorded_events is not None and read != info.recorded_events and not run_problems:
            run_problems.append(
                {"file": "manifest.json", "offset": 0, "reason": f"the manifest records {info.recorded_events} events, {read} were read"}
            )
        partial = bool(run_problems) or not info.complete
        if partial:
            mark_partial(figures, model.whole_run, partial_reason(info, ctx.end(i), run_problems))
        absent = absent_reasons(figures)
        manifest_events = info.manifest.get("events")
        summary = {
            "format": FORMAT,
            "run": {
                "dir": str(info.dir),
                "scenario": info.name,
                "model": info.model,
                "seed": info.seed,
                "strategy": info.strategy,
                "until": info.until,
                "end_s": ctx.end(i),
                "complete": info.complete,
                "digest": manifest_events.get("digest") if isinstance(manifest_events, dict) else None,
                "events_recorded": info.recorded_events,
                "events_read": read,
            },
            "partial": partial,
            "problems": run_problems,
            "options": dict(ctx.options),
            "window": {"start_s": ctx.window_start(i), "end_s": ctx.end(i)},
            "figures": figures,
            "absent": absent,
            "tables": {name: f"{name}.parquet" for name in tables},
        }
        # The summary in memory is what summary.json holds (non-finite figures spelled as strings).
        out.append(RunAnalysis(info, jsonable(summary), tables))
    return out


def write_analysis(analysis: RunAnalysis, out_dir: str | Path, *, report: bool = True, progress: Progress = ignore) -> Path:
    """Write ``summary.json``, the tables as Parquet and (unless ``report`` is false) ``report.html`` with its
    plots into ``out_dir``; return it. ``progress`` is told of each plot (:mod:`.progress`)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, table in analysis.tables.items():
        table.to_parquet(out / f"{name}.parquet", index=False)
    (out / "summary.json").write_text(dumps(analysis.summary) + "\n")
    if report:
        from clusteremu.tools.report import render_report

        render_report(out, progress)
    return out


def output_dirs(run_dirs: Sequence[str | Path], out: str | Path | None) -> list[Path]:
    """Where each run's analysis goes: ``RUN/analysis`` by default; with ``out``, ``out`` itself for one run
    and ``out/<run directory name>`` (made unique) for several."""
    if out is None:
        return [Path(d) / ANALYSIS_DIR for d in run_dirs]
    base = Path(out)
    if len(run_dirs) == 1:
        return [base]
    used: dict[str, int] = {}
    dirs = []
    for d in run_dirs:
        name = Path(d).absolute().name or "run"
        used[name] = used.get(name, 0) + 1
        dirs.append(base / (name if used[name] == 1 else f"{name}-{used[name]}"))
    return dirs


def analyze_runs(
    run_dirs: Sequence[str | Path],
    *,
    out: str | Path | None = None,
    master: str | None = None,
    options: AnalysisOptions = AnalysisOptions(),
    report: bool = True,
    progress: Progress = ignore,
) -> list[tuple[RunAnalysis, Path]]:
    """Analyse run directories and write each one's results (see :func:`output_dirs`); InputError for a path
    that is not a run directory, before any Spark work. ``progress(stage, done, total)`` is told of each stage
    (:mod:`.progress`): Spark starting, its tasks, each run's tables and plots."""
    from clusteremu.tools.spark.session import spark_context

    infos = [open_run_info(i, d) for i, d in enumerate(run_dirs)]
    dirs = output_dirs(run_dirs, out)
    progress("starting Spark", 0, None)
    with spark_context(master) as spark:
        with spark_tasks(spark, "reading segments, computing figures", progress):
            analyses = analyze(spark, infos, options)
    written = []
    for k, (a, d) in enumerate(zip(analyses, dirs)):
        progress(f"writing {a.info.name}", k, len(analyses))
        written.append((a, write_analysis(a, d, report=report, progress=progress)))
    return written
