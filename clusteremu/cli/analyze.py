"""``clusteremu analyze RUN...``: the Spark analysis of runs — ``summary.json``, Parquet tables, ``report.html``.

Each run's results go to ``RUN/analysis/`` (or ``--out``). A damaged or unfinished trace is analysed as far as it
can be read: the damage is reported (file and byte offset), the summary and every figure printed are marked
partial, and figures that need the whole run are absent with the reason, with exit status 0; a path that is not
a run directory is bad input (exit 2). On a terminal a progress display shows the stage (Spark starting, its
tasks, each plot); piped or with ``--quiet`` or ``--format json``, nothing but the results is printed. Figures
are defined in docs/analysis.md.
"""
from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence

from clusteremu.base.errors import InputError

if TYPE_CHECKING:
    from clusteremu.tools.analysis import AnalysisOptions
    from clusteremu.tools.analysis.progress import Progress


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("analyze", help="analyse runs with Spark: summary.json, Parquet series, report.html")
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run directories")
    p.add_argument("--out", type=Path, default=None,
                   help="output directory (one run) or parent of one directory per run (default: RUN/analysis)")
    p.add_argument("--master", default=None, help="Spark master URL (default: $CLUSTEREMU_SPARK_MASTER or local[*])")
    add_option_flags(p)
    p.add_argument("--no-report", action="store_true", help="write summary.json and the tables only")
    p.add_argument("--format", choices=("text", "json"), default="text", help="what to print (default text)")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    p.set_defaults(func=run)


def add_option_flags(p: argparse.ArgumentParser) -> None:
    """Give ``p`` a flag for every analysis option that has one: the settle window and each registered system's
    own (:func:`clusteremu.tools.analysis.declared_options`).

    They are added when ``p`` parses its arguments (``--help`` included), not when the CLI is built: finding
    them imports every system's figures (pandas, pyarrow), which the other verbs — and every worker process,
    started as ``clusteremu agent`` — must not pay for.
    """
    parse = p.parse_known_args
    added: list[bool] = []

    def parse_known_args(
        args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if not added:
            added.append(True)
            from clusteremu.tools.analysis import declared_options

            for o in declared_options():
                if o.flag is not None:
                    p.add_argument(o.flag, dest=o.name, type=float, default=None, metavar=o.metavar,
                                   help=f"{o.help} (default {o.default / o.scale:g})")
        return parse(args, namespace)

    p.parse_known_args = parse_known_args  # type: ignore[method-assign]


def options_from(args: argparse.Namespace) -> AnalysisOptions:
    """The analysis options of the flags (a flag's value × its option's scale); InputError naming the flag for
    a value out of range."""
    from clusteremu.tools.analysis import SETTLE_WINDOW, AnalysisOptions, declared_options

    values: dict[str, float] = {}
    for o in declared_options():
        raw = getattr(args, o.name, None) if o.flag is not None else None
        if raw is None:
            continue
        try:
            values[o.name] = o.check(raw * o.scale)
        except ValueError as err:
            raise InputError(f"{o.flag} {raw:g}", str(err)) from None
    return AnalysisOptions(values.pop(SETTLE_WINDOW.name, SETTLE_WINDOW.default), **values)


def run(args: argparse.Namespace) -> int:
    from clusteremu.tools.analysis import analyze_runs
    from clusteremu.tools.analysis.encoding import dumps

    options = options_from(args)
    with progress_display(args.format == "text" and not args.quiet and sys.stderr.isatty()) as progress:
        results = analyze_runs(args.runs, out=args.out, master=args.master, options=options, report=not args.no_report,
                               progress=progress)
    for analysis, out in results:
        for p in analysis.summary["problems"]:
            print(f"clusteremu analyze: {analysis.info.dir}: partial: {p['file']} at byte {p['offset']}: {p['reason']}", file=sys.stderr)
    if args.format == "json":
        print(dumps([{"run": str(a.info.dir), "out": str(o), "summary": a.summary} for a, o in results]))
        return 0
    from clusteremu.tools.report import coverage

    from .output import console_for_output

    console = console_for_output()
    for analysis, out in results:
        s = analysis.summary
        state = f"[yellow]partial[/] ({escape(coverage(s))})" if s["partial"] else "[green]complete[/]"
        console.print(f"[bold]{escape(s['run']['scenario'])}[/] ({escape(s['run']['model'])}, {escape(s['run']['strategy'])}) {state}: "
                      f"{s['figures']['events']['total']:,} events → [bold]{escape(str(out))}[/]")
        for line in headline_lines(s):
            console.print(f"  {escape(line)}")
    return 0


def escape(text: str) -> str:
    from rich.markup import escape as rich_escape

    return rich_escape(text)


@contextmanager
def progress_display(show: bool) -> Iterator["Progress"]:
    """A progress callback for :func:`clusteremu.tools.analysis.analyze_runs`: a rich progress line on stderr
    when ``show`` (a terminal), else one that prints nothing."""
    from clusteremu.tools.analysis.progress import ignore

    if not show:
        yield ignore
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Bar(SpinnerColumn(), TextColumn("[bold]analyze[/] {task.description}"), BarColumn(), MofNCompleteColumn(),
             TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("", total=None)

        def progress(stage: str, done: int, total: int | None) -> None:
            bar.update(task, description=stage, completed=done, total=total)

        yield progress


def headline_lines(summary: dict) -> list[str]:
    """``label: value`` of the model's headline figures of one summary; a figure the analysis could not compute
    shows its reason, and every figure of a partial run says "(partial)"."""
    from clusteremu.tools.analysis import figures_for
    from clusteremu.tools.report import show_figure

    return [f"{h.label}: {show_figure(summary, h.path)}" for h in figures_for(summary["run"]["model"]).headline]
