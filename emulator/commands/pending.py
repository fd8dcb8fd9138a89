"""Verbs whose issue has not landed yet: they say so plainly and exit 2 instead of pretending.

None are pending at the moment; a verb listed in ``PENDING`` (and mapped to this module in ``cli.VERBS``) gets a
parser that refuses with the reason.
"""
from __future__ import annotations

import argparse

from clusteremu.base.errors import InputError

PENDING: dict[str, str] = {}


def add_parser(sub: argparse._SubParsersAction) -> None:
    for verb, what in PENDING.items():
        p = sub.add_parser(verb, help=f"not built yet: {what}", add_help=True)
        p.add_argument("rest", nargs=argparse.REMAINDER)
        p.set_defaults(func=lambda args, verb=verb, what=what: _pending(verb, what))


def _pending(verb: str, what: str) -> int:
    raise InputError(verb, f"not available yet: {what} has not landed in this version")
