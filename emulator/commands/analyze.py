"""``clusteremu analyze RUN...``: the Spark analysis of runs — ``summary.json``, Parquet tables, ``report.html``.

Each run's results go to ``RUN/analysis/`` (or ``--out``). A damaged or unfinished trace is analysed as far as it
can be read: the damage is reported (file and byte offset) and the summary is marked partial, with exit status
0; a path that is not a run directory is bad input (exit 2). Figures are defined in docs/analysis.md.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from clusteremu.base.errors import InputError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("analyze", help="analyse runs with Spark: summary.json, Parquet series, report.html")
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run directories")
    p.add_argument("--out", type=Path, default=None,
                   help="output directory (one run) or parent of one directory per run (default: RUN/analysis)")
    p.add_argument("--master", default=None, help="Spark master URL (default: $CLUSTEREMU_SPARK_MASTER or local[*])")
    p.add_argument("--settle-window-min", type=float, default=10.0, metavar="N",
                   help="settle window: the last N minutes of the run, and the quiet time settling needs (default 10)")
    p.add_argument("--settle-spread", type=float, default=15.0, metavar="POINTS",
                   help="score spread (max - min) under which the cluster counts as balanced (default 15)")
    p.add_argument("--no-report", action="store_true", help="write summary.json and the tables only")
    p.add_argument("--format", choices=("text", "json"), default="text", help="what to print (default text)")
    p.set_defaults(func=run)


def options_from(args: argparse.Namespace):
    """The analysis options of the flags; InputError for a value out of range."""
    from clusteremu.tools.analysis import AnalysisOptions

    try:
        return AnalysisOptions(settle_window_s=args.settle_window_min * 60.0, settle_spread=args.settle_spread)
    except ValueError as err:
        raise InputError("--settle-window-min / --settle-spread", str(err)) from None


def run(args: argparse.Namespace) -> int:
    from clusteremu.tools.analysis import analyze_runs
    from clusteremu.tools.analysis.encoding import dumps

    options = options_from(args)
    results = analyze_runs(args.runs, out=args.out, master=args.master, options=options, report=not args.no_report)
    for analysis, out in results:
        for p in analysis.summary["problems"]:
            print(f"clusteremu analyze: {analysis.info.dir}: partial: {p['file']} at byte {p['offset']}: {p['reason']}", file=sys.stderr)
    if args.format == "json":
        print(dumps([{"run": str(a.info.dir), "out": str(o), "summary": a.summary} for a, o in results]))
        return 0
    from .compare import console_for_output

    console = console_for_output()
    for analysis, out in results:
        s = analysis.summary
        state = "[yellow]partial[/]" if s["partial"] else "[green]complete[/]"
        console.print(f"[bold]{s['run']['scenario']}[/] ({s['run']['model']}, {s['run']['strategy']}) {state}: "
                      f"{s['figures']['events']['total']:,} events → [bold]{out}[/]")
        for line in headline_lines(s):
            console.print(f"  {line}")
    return 0


def headline_lines(summary: dict) -> list[str]:
    """``label: value`` of the model's headline figures of one summary."""
    from clusteremu.tools.analysis import figures_for
    from clusteremu.tools.report import lookup, fmt

    figures = summary.get("figures", {})
    return [f"{h.label}: {fmt(lookup(figures, h.path))}" for h in figures_for(summary["run"]["model"]).headline]
