"""``clusteremu run SCENARIO``: run a scenario (a file or a built-in name) and write its run directory."""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from clusteremu.scenarios.loader import load_scenario

from clusteremu.base.errors import InputError
from clusteremu.emulator.runner import default_run_dir, execute
from clusteremu.emulator.transport.hub import HubOptions
from clusteremu.emulator.transport.launch import ZmqOptions
from clusteremu.emulator.transport.wire import DEFAULT_MAX_FRAME_BYTES
from clusteremu.emulator.trace import open_run


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a scenario and write its trace")
    p.add_argument("scenario", help="scenario file, or the name of a built-in scenario")
    p.add_argument("--seed", type=int, default=None, help="run seed (default: the scenario's)")
    p.add_argument("--out", type=Path, default=None, help="run directory (default: runs/<name>-seed<N>)")
    p.add_argument("--agents", default="inproc",
                   help="inproc | inproc:N (in-process workers) | procs:N (worker processes over ipc) | "
                        "tcp (workers join with `clusteremu agent --connect`)")
    z = p.add_argument_group("worker processes (procs:N, tcp)")
    z.add_argument("--bind", default=None, metavar="tcp://HOST:PORT", help="tcp: address the coordinator binds")
    z.add_argument("--expect", type=int, default=None, metavar="N", help="tcp: number of workers to wait for")
    z.add_argument("--server-key", default=None, metavar="FILE",
                   help="tcp: the coordinator's CurveZMQ secret key file (SERVER.key_secret)")
    z.add_argument("--allow", default=None, metavar="DIR", help="tcp: directory of the client public keys admitted")
    z.add_argument("--insecure", action="store_true", help="tcp: no CurveZMQ (any peer that reaches the port joins)")
    z.add_argument("--heartbeat-s", type=float, default=0.5, help="heartbeat period, wall seconds (default 0.5)")
    z.add_argument("--worker-timeout", type=float, default=5.0,
                   help="fail the run when a worker is silent this long, wall seconds (default 5)")
    z.add_argument("--join-timeout", type=float, default=60.0,
                   help="fail the run when the workers have not joined within this many seconds (default 60)")
    z.add_argument("--max-frame-bytes", type=int, default=DEFAULT_MAX_FRAME_BYTES,
                   help="drop inbound frames larger than this many bytes")
    p.add_argument("--until", type=float, default=None, help="stop at this virtual time (seconds)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY.PATH=VALUE",
                   help="override a scenario key (repeatable)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--format", choices=("text", "json"), default="text", help="summary format")
    p.set_defaults(func=run)


def transport_options(args: argparse.Namespace) -> ZmqOptions:
    """The ZeroMQ flags of ``run``, checked."""
    for flag, v in (("--heartbeat-s", args.heartbeat_s), ("--worker-timeout", args.worker_timeout),
                    ("--join-timeout", args.join_timeout), ("--max-frame-bytes", args.max_frame_bytes)):
        if not v > 0:
            raise InputError(flag, f"must be greater than 0, got {v}")
    if args.worker_timeout <= args.heartbeat_s:
        raise InputError("--worker-timeout", "must be longer than --heartbeat-s")
    if args.expect is not None and args.expect < 1:
        raise InputError("--expect", f"must be at least 1, got {args.expect}")
    return ZmqOptions(bind=args.bind, expect=args.expect, server_key=args.server_key, allow=args.allow,
                      insecure=args.insecure,
                      hub=HubOptions(args.heartbeat_s, args.worker_timeout, args.join_timeout, args.max_frame_bytes))


def run(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario, args.overrides)
    transport = transport_options(args)
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

            result = execute(scenario, run_dir, seed=seed, until=args.until, agents=args.agents, progress=progress,
                             transport=transport)
    else:
        result = execute(scenario, run_dir, seed=seed, until=args.until, agents=args.agents, transport=transport)
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
        # the events read (a record of a kind written in rows is one event a row), and the records written
        "events": sum(kinds.values()),
        "records": m["events"]["count"],
        "digest": m["events"]["digest"],
        "windows": stats.get("windows"),
        "wall_seconds": round(wall, 3),
        "events_per_second": round(sum(kinds.values()) / wall) if wall else None,
        "event_kinds": dict(kinds.most_common()),
    }


def print_summary(s: dict) -> None:
    from rich.table import Table

    from .output import console_for_output

    console = console_for_output()
    records = f" in {s['records']:,} records" if s["records"] != s["events"] else ""
    console.print(f"[bold]{s['scenario']}[/] seed {s['seed']}: {s['events']:,} events{records} over "
                  f"{s['virtual_seconds']:g} s of virtual time in {s['wall_seconds']:.2f} s ({s['windows']:,} windows)")
    table = Table("event kind", "count", box=None)
    for kind, n in s["event_kinds"].items():
        table.add_row(kind, f"{n:,}")
    console.print(table)
    console.print(f"digest {s['digest']}")
    console.print(f"run written to [bold]{s['run_dir']}[/]")
