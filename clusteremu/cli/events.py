"""``clusteremu events``: the catalogue of event kinds and their fields (Markdown)."""
from __future__ import annotations

import argparse

from clusteremu.emulator.trace.kinds import catalogue_markdown


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("events", help="print the catalogue of event kinds (docs/events.md)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    print(catalogue_markdown())
    return 0
