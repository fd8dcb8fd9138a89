"""``clusteremu scenarios``: list the built-in scenarios, grouped by system."""
from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from clusteremu.emulator import systems
from clusteremu.scenarios.catalog import builtins


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scenarios", help="list the built-in scenarios, grouped by system")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    items = builtins()
    if args.format == "json":
        print(json.dumps([{**{k: v for k, v in asdict(b).items() if k != "model"}, "system": b.model} for b in items],
                         indent=2))
        return 0
    from rich.table import Table

    from .output import console_for_output

    console = console_for_output()
    for name, sys_ in systems.systems().items():
        mine = [b for b in items if b.model == name]
        if not mine:
            continue
        table = Table("name", "duration", "description", title=f"{name}: {sys_.description}", title_justify="left")
        for b in mine:
            table.add_row(b.name, f"{b.duration_s:g} s", b.description)
        console.print(table)
    return 0
