"""``clusteremu sweep SCENARIO|--suite NAME --grid key=v1,v2 ... --seeds 1..N``: run the cross product of
scenarios × grid overrides × seeds — locally with a progress display, or each run as a Spark task with
``--spark MASTER`` — then analyse the runs and compare them (seeds pooled). Each run's analysis is written to
``RUN/analysis``; its ``report.html`` with ``--reports``. Exit 1 when a run failed (the others are still analysed
and compared) or a report could not be rendered, 2 on bad input, before anything runs.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from clusteremu.base.errors import InputError, RunFailure

from .analyze import add_option_flags


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help="run scenarios x grid x seeds, then analyse and compare the runs")
    p.add_argument("scenarios", nargs="*", metavar="SCENARIO", help="scenario files or built-in names")
    p.add_argument("--suite", default=None, help="sweep a named suite of built-in scenarios (see tools/sweep.py)")
    p.add_argument("--grid", action="append", default=[], metavar="KEY.PATH=V1,V2",
                   help="a scenario key and its values (repeatable: the cross product is swept)")
    p.add_argument("--seeds", default="1", help="seeds: N, A..B or a comma-separated list (default 1)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY.PATH=VALUE",
                   help="override a scenario key in every run (repeatable)")
    p.add_argument("--until", type=float, default=None, help="stop every run at this virtual time (seconds)")
    p.add_argument("--spark", default=None, metavar="MASTER",
                   help="run each point as a Spark task on this master (the output directory must be shared)")
    p.add_argument("--master", default=None, help="Spark master of the analysis when the runs are local")
    p.add_argument("--jobs", type=int, default=None, help="local worker processes (default: one per core)")
    p.add_argument("--by", default="point",
                   help="group runs by: point (scenario and grid values, default), or any `compare --by` key")
    p.add_argument("--out", type=Path, default=None, help="sweep directory (default runs/sweep-<name>)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="what to print (default table)")
    p.add_argument("--reports", action="store_true",
                   help="also render each run's report.html (plots; several times the rest of a sweep's time)")
    # The analysis options, for the runs analysed here.
    add_option_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from clusteremu.tools.analysis.encoding import dumps
    from clusteremu.tools.sweep import default_out, suites, parse_grid, parse_seeds, plan, sweep

    from .analyze import options_from
    from .compare import emit

    scenarios = list(args.scenarios)
    if args.suite is not None:
        known = suites()
        suite = known.get(args.suite)
        if suite is None:
            raise InputError(f"--suite {args.suite}", f"no such suite; known: {', '.join(known)}")
        scenarios += list(suite.scenarios)
    if not scenarios:
        raise InputError("sweep", "name a SCENARIO or a --suite")
    if args.jobs is not None and args.jobs < 1:
        raise InputError(f"--jobs {args.jobs}", "needs at least 1")
    if args.until is not None and not args.until > 0:
        raise InputError(f"--until {args.until}", "must be greater than 0")
    options = options_from(args)
    grid = parse_grid(args.grid)
    seeds = parse_seeds(args.seeds)
    out = args.out or default_out(args.suite or Path(scenarios[0]).stem)
    points = plan(scenarios, grid, seeds, out, args.overrides)
    show = args.format == "table" and sys.stderr.isatty()
    result = sweep(points, out, spark_master=args.spark, analysis_master=args.master, jobs=args.jobs,
                   until=args.until, by=args.by, options=options, progress=show, reports=args.reports)
    if args.format == "json":
        print(dumps({"out": str(out), "runs": [r.as_dict() for r in result.records], **result.comparison}))
    else:
        if result.comparison["groups"]:
            emit(result.comparison, args.format)
        if args.format == "table":
            print(f"{len(result.records) - len(result.failed)} of {len(result.records)} runs in {out}")
    for r in result.failed:
        print(f"clusteremu sweep: {r.point.label} seed {r.point.seed}: {r.error}", file=sys.stderr)
    for run_dir, error in result.report_errors.items():
        print(f"clusteremu sweep: {run_dir}: report: {error}", file=sys.stderr)
    if result.failed:
        raise RunFailure(f"{len(result.failed)} of {len(result.records)} runs failed")
    if result.report_errors:
        raise RunFailure(f"{len(result.report_errors)} report(s) could not be rendered")
    return 0
