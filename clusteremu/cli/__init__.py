"""``clusteremu`` (also ``python -m clusteremu``): the command-line interface.

Exit status 0 on success, 2 on bad input (the message names the file, key or flag and the reason), 1 when the
run itself fails.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from clusteremu.base.errors import InputError, RunFailure

#: verb → module under ``clusteremu.cli`` (each defines ``add_parser``)
VERBS = {
    "run": "run",
    "analyze": "analyze",
    "compare": "compare",
    "replay": "replay",
    "sweep": "sweep",
    "agent": "agent",
    "decide": "decide",
    "scenarios": "scenarios",
    "validate": "validate",
    "events": "events",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="clusteremu",
        description="Emulate the control plane of Pulsar, RocketMQ and Storm clusters in virtual time.",
    )
    from clusteremu import __version__

    parser.add_argument("--version", action="version", version=f"clusteremu {__version__}")
    sub = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    done: set[str] = set()
    for module in VERBS.values():
        if module in done:
            continue
        done.add(module)
        importlib.import_module(f"clusteremu.cli.{module}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except InputError as err:
        print(f"clusteremu {args.verb}: {err}", file=sys.stderr)
        return 2
    except RunFailure as err:
        print(f"clusteremu {args.verb}: run failed: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"clusteremu {args.verb}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
