"""``clusteremu run SCENARIO``: run a scenario (a file or a built-in name) and write its run directory."""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from scenarios.loader import load_scenario

from ..runner import default_run_dir, execute
from ..trace import open_run


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a scenario and write its trace")
    p.add_argument("scenario", help="scenario file, or the name of a built-in scenario")
    p.add_argument("--seed", type=int, default=None, help="run seed (default: the scenario's)")
    p.add_argument("--out", type=Path, default=None, help="run directory (default: runs/<name>-seed<N>)")
    p.add_argument("--agents", default="inproc", help="inproc | inproc:N | procs:N | tcp")
    p.add_argument("--until", type=float, default=None, help="stop at this virtual time (seconds)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY.PATH=VALUE",
                   help="override a scenario key (repeatable)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--format", choices=("text", "json"), default="text", help="summary format")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario, args.overrides)
    seed = scenario.seed if args.seed is None else args.seed
    run_dir = args.out or default_run_dir(Path("runs"), scenario, seed)
    until = scenario.duration_s if args.until is None else args.until
    show = not args.quiet and sys.stderr.isatty()
    if show:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.completed:,.0f}/{task.total:,.0f} s virtual"),
            TextColumn("{task.fields[rate]:,.0f} events/s"),
            TimeElapsedColumn(),
        ) as bar:
            task = bar.add_task(scenario.name, total=until, rate=0.0)

            def progress(t, stats):
                rate = stats.events / stats.wall_seconds if stats.wall_seconds > 0 else 0.0
                bar.update(task, completed=min(t, until), rate=rate)

            result = execute(scenario, run_dir, seed=seed, until=args.until, agents=args.agents, progress=progress)
    else:
        result = execute(scenario, run_dir, seed=seed, until=args.until, agents=args.agents)
    summary = summarize(result.run_dir)
    if args.format == "json":
        print(json.dumps(summary, indent=2))
    else:
        print_summary(summary)
    return 0


def summarize(run_dir: Path) -> dict:
    """A short account of a finished run, read back from its trace."""
    run = open_run(run_dir)
    m = run.manifest
    kinds = Counter(e.kind for e in run.events())
    stats = m.get("stats", {})
    wall = stats.get("wall_seconds") or 0.0
    return {
        "run_dir": str(run_dir),
        "scenario": m["scenario"]["scenario"]["name"],
        "seed": m["seed"],
        "complete": run.complete,
        "virtual_seconds": m["until"],
        "events": m["events"]["count"],
        "digest": m["events"]["digest"],
        "windows": stats.get("windows"),
        "wall_seconds": round(wall, 3),
        "events_per_second": round(m["events"]["count"] / wall) if wall else None,
        "event_kinds": dict(kinds.most_common()),
    }


def print_summary(s: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"[bold]{s['scenario']}[/] seed {s['seed']}: {s['events']:,} events over {s['virtual_seconds']:g} s "
                  f"of virtual time in {s['wall_seconds']:.2f} s ({s['windows']:,} windows)")
    table = Table("event kind", "count", box=None)
    for kind, n in s["event_kinds"].items():
        table.add_row(kind, f"{n:,}")
    console.print(table)
    console.print(f"digest {s['digest']}")
    console.print(f"run written to [bold]{s['run_dir']}[/]")
