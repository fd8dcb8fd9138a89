"""``clusteremu scenarios``: list the built-in scenarios."""
from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from clusteremu.scenarios.catalog import builtins


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scenarios", help="list the built-in scenarios")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    items = builtins()
    if args.format == "json":
        print(json.dumps([{k: v for k, v in asdict(b).items() if k != "model"} for b in items], indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table("name", "model", "duration", "description")
    for b in items:
        table.add_row(b.name, b.model, f"{b.duration_s:g} s", b.description)
    Console().print(table)
    return 0
