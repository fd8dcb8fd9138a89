"""``clusteremu compare RUN...``: runs grouped by strategy (or a scenario key), figures side by side, and the
rating table of each system that declares one (grades on its criteria, each with its figure).

Runs without an analysis are analysed first (Spark, ``--master``). ``--format json`` prints
``{"by", "groups", "rows"}``, where ``rows`` is the rating table (docs/rating.md), one row per strategy.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from clusteremu.base.errors import InputError

from .analyze import add_option_flags


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="compare runs grouped by strategy or a scenario key; each system's rating table")
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN",
                   help="run directories (with --article: run directories or a sweep's output directory)")
    p.add_argument("--by", default="strategy",
                   help="group by: strategy (default), scenario, seed, model, run, or a scenario key path "
                        "such as cluster.brokers (comma-separate several)")
    p.add_argument("--format", choices=("table", "csv", "json", "markdown"), default="table",
                   help="table (default), csv or json; with --article: markdown (default) or json")
    p.add_argument("--article", action="store_true",
                   help="each run system's source-article figures beside the runs' (mean and spread over seeds)")
    p.add_argument("--master", default=None, help="Spark master for runs that need analysing first")
    # The analysis options, for the runs analysed here.
    add_option_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from clusteremu.tools.compare import comparison, group_runs, load_summaries

    from .analyze import options_from

    if args.article:
        return article(args)
    if args.format == "markdown":
        raise InputError("--format markdown", "markdown is the format of --article tables")
    summaries = load_summaries(args.runs, master=args.master, options=options_from(args))
    groups = group_runs(summaries, args.by)
    result = comparison(groups, args.by)
    emit(result, args.format)
    return 0


def article(args: argparse.Namespace) -> int:
    """``--article``: the article tables of the runs' systems (see :func:`clusteremu.tools.compare.article_tables`)."""
    from clusteremu.tools.analysis.encoding import dumps
    from clusteremu.tools.compare import article_tables, find_run_dirs, load_summaries, tables_markdown

    from .analyze import options_from

    if args.format not in ("markdown", "json", "table"):
        raise InputError(f"--format {args.format}", "--article prints markdown or json")
    runs = find_run_dirs(args.runs)
    tables = article_tables(load_summaries(runs, master=args.master, options=options_from(args)))
    if not tables:
        raise InputError("--article", "no system of these runs publishes article tables")
    print(dumps(tables) if args.format == "json" else tables_markdown(tables), end="" if args.format != "json" else "\n")
    return 0


def emit(result: dict, fmt: str) -> None:
    """Print a comparison (``clusteremu.tools.compare.comparison``) as a table, CSV or JSON."""
    from clusteremu.tools.analysis.encoding import dumps
    from clusteremu.tools.compare import to_csv

    if fmt == "json":
        print(dumps(result))
        return
    if fmt == "csv":
        print(to_csv(result), end="")
        return
    from rich.table import Table

    from clusteremu.emulator import systems
    from clusteremu.tools.analysis import figures_for
    from clusteremu.tools.compare import ratings
    from clusteremu.tools.report import fmt as show

    if not result["groups"]:
        raise InputError("compare", "no runs to compare")
    labels: dict[str, str] = {}
    for g in result["groups"]:
        for path in g["figures"]:
            labels.setdefault(path, path)
    headlines = {h.path: h.label for name in systems.systems() for h in figures_for(name).headline}
    labels = {path: headlines.get(path, path) for path in labels}
    from .output import console_for_output

    console = console_for_output()
    # Figures down, groups across: a handful of strategies side by side reads like a dashboard's panels.
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
    colour = {"good": "green", "fair": "yellow", "poor": "red"}
    for rating in ratings().values():
        criteria = rating.criteria()
        # A row belongs to the rating whose criteria it was graded on.
        rows = [r for r in result["rows"] if set(r["criteria"]) & set(criteria)]
        if not rows:
            continue
        grades = Table(title=f"{rating.title}: grade (figure)")
        grades.add_column("strategy", overflow="fold")
        for name in criteria:
            grades.add_column(name)
        for r in rows:
            cells = []
            for name in criteria:
                c = r["criteria"].get(name)
                cells.append("—" if c is None else f"[{colour[c['grade']]}]{c['grade']}[/] ({show(c['figure'])})")
            grades.add_row(r["strategy"], *cells)
        console.print(grades)
        for name, criterion in criteria.items():
            console.print(f"  {name}: {criterion.unit}", style="dim")
