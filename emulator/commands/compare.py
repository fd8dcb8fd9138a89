"""``clusteremu compare RUN...``: runs grouped by strategy (or a scenario key), figures side by side, and the
rating table of the AvgShedder article (good / fair / poor on five criteria, each with its figure).

Runs without an analysis are analysed first (Spark, ``--master``). ``--format json`` prints
``{"by", "groups", "rows"}``, where ``rows`` is the rating table (docs/rating.md), one row per strategy pair.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from clusteremu.base.errors import InputError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="compare runs grouped by strategy or a scenario key; the article's rating table")
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run directories")
    p.add_argument("--by", default="strategy",
                   help="group by: strategy (default), scenario, seed, model, run, or a scenario key path "
                        "such as cluster.brokers (comma-separate several)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")
    p.add_argument("--master", default=None, help="Spark master for runs that need analysing first")
    p.add_argument("--settle-window-min", type=float, default=10.0, metavar="N",
                   help="settle window for runs analysed here (default 10)")
    p.add_argument("--settle-spread", type=float, default=15.0, metavar="POINTS",
                   help="balanced-spread threshold for runs analysed here (default 15)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from clusteremu.tools.compare import comparison, group_runs, load_summaries

    from .analyze import options_from

    summaries = load_summaries(args.runs, master=args.master, options=options_from(args))
    groups = group_runs(summaries, args.by)
    result = comparison(groups, args.by)
    emit(result, args.format)
    return 0


def emit(result: dict, fmt: str) -> None:
    """Print a comparison (``clusteremu.tools.compare.comparison``) as a table, CSV or JSON."""
    from clusteremu.tools.analysis.encoding import dumps
    from clusteremu.tools.compare import RatingRules, to_csv

    if fmt == "json":
        print(dumps(result))
        return
    if fmt == "csv":
        print(to_csv(result), end="")
        return
    from rich.table import Table

    from clusteremu.tools.analysis import figures_for
    from clusteremu.tools.report import fmt as show

    if not result["groups"]:
        raise InputError("compare", "no runs to compare")
    labels: dict[str, str] = {}
    for g in result["groups"]:
        for path in g["figures"]:
            labels.setdefault(path, path)
    for model in ("pulsar", "heartbeat"):
        for h in figures_for(model).headline:
            if h.path in labels:
                labels[h.path] = h.label
    console = console_for_output()
    # Figures down, groups across: a handful of strategies side by side reads like the article's panels.
    table = Table(title=f"runs grouped by {result['by']} (mean over the runs of each group)")
    table.add_column("figure")
    for g in result["groups"]:
        runs = f"{g['runs']} run" + ("s" if g["runs"] != 1 else "") + (f", {g['partial_runs']} partial" if g["partial_runs"] else "")
        table.add_column(f"{g['label']}\n({runs})", justify="right", overflow="fold")
    for path, label in labels.items():
        values = [g["figures"].get(path) for g in result["groups"]]
        if all(v is None for v in values):
            continue
        table.add_row(label, *[show(v) for v in values])
    console.print(table)
    rows = [r for r in result["rows"] if r["criteria"]]
    if rows:
        names = list(RatingRules().criteria())
        rating = Table(title="rating (AvgShedder article): grade (figure)")
        rating.add_column("strategy", overflow="fold")
        for name in names:
            rating.add_column(name)
        colour = {"good": "green", "fair": "yellow", "poor": "red"}
        for r in rows:
            cells = []
            for name in names:
                c = r["criteria"].get(name)
                cells.append("—" if c is None else f"[{colour[c['grade']]}]{c['grade']}[/] ({show(c['figure'])})")
            rating.add_row(r["strategy"], *cells)
        console.print(rating)
        units = RatingRules().criteria()
        for name in names:
            console.print(f"  {name}: {units[name].unit}", style="dim")


def console_for_output():
    """A rich console; when the output is not a terminal, wide enough that tables do not fold."""
    import sys

    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=200)
