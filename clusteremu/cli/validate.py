"""``clusteremu validate FILE``: validate a scenario and nothing else."""
from __future__ import annotations

import argparse

from clusteremu.scenarios.loader import load_scenario


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="check a scenario file without running it")
    p.add_argument("scenario", help="scenario file, or the name of a built-in scenario")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY.PATH=VALUE")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    s = load_scenario(args.scenario, args.overrides)
    print(f"{s.source}: ok ({s.name}: model {s.model}, {s.duration_s:g} s, seed {s.seed})")
    return 0
