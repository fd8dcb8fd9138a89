"""``clusteremu decide``: what would a system's strategy decide on this input (a load snapshot, a consumer
group, a cluster state)?

The system is found from the strategy's name (``--strategy``, simple or fully-qualified Java class name, looked
up in every registered system's strategy registry) or, without one, from the input: each system's adapter says
whether the input is its own. ``--system`` settles a name two systems share. The adapter (the ``decide`` target
of the :class:`~clusteremu.emulator.systems.System`) reads the input, decides and prints; see its own help
section below for its flags.

An adapter implements :class:`DecideAdapter`.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Protocol

from clusteremu.base.errors import InputError, RunFailure
from clusteremu.emulator import systems

__all__ = ["DecideAdapter", "add_parser", "read_input", "run"]


class DecideAdapter(Protocol):
    """A system's side of ``decide``."""

    #: One line for the help: what question it answers and on what input.
    summary: str

    def add_arguments(self, group: argparse._ArgumentGroup) -> None:
        """Add the system's own flags (they must not collide with another system's)."""

    def claims(self, path: str, text: str | None) -> bool:
        """True when the input is this system's: its path, and its text (None when the path is a directory,
        which an adapter may read as a dump of several files)."""

    def run(self, args: argparse.Namespace, strategy: str | None) -> int:
        """Decide and print; ``strategy`` is ``--strategy`` (None: the adapter's own default)."""


def _adapters(broken: dict[str, str] | None = None) -> dict[str, DecideAdapter]:
    """The systems' adapters. With ``broken``, a system whose adapter cannot be imported is recorded there (name →
    error) instead of failing, so that one broken plug-in does not take the whole command line down."""
    out: dict[str, DecideAdapter] = {}
    for name, s in systems.systems().items():
        if s.decide is None:
            continue
        if broken is None:
            out[name] = systems.load(s.decide)
            continue
        try:
            out[name] = systems.load(s.decide)
        except Exception as err:  # noqa: BLE001 - reported in the help and refused when used
            broken[name] = f"{type(err).__name__}: {err}"
    return out


def add_parser(sub: argparse._SubParsersAction) -> None:
    broken: dict[str, str] = {}
    adapters = _adapters(broken)
    lines = "\n".join([f"  {name}: {a.summary}" for name, a in adapters.items()]
                      + [f"  {name}: unavailable ({err})" for name, err in broken.items()])
    p = sub.add_parser(
        "decide",
        help="show what a system's strategy would decide on an input (load snapshot, consumer group, cluster)",
        description=(__doc__.split("\n\n", 1)[1] if __doc__ else "") + f"\nSystems:\n{lines}\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("snapshot", help="the input file (JSON); - for stdin")
    p.add_argument("--strategy", metavar="NAME", help="strategy, simple or fully-qualified Java class name")
    p.add_argument("--system", choices=sorted(adapters), help="the system, when the strategy or input does not say")
    p.add_argument("--format", choices=("table", "json"), default="table", help="output format (default table)")
    p.add_argument("--explain", action="store_true", help="say why: the figures and rules behind each decision")
    for name, adapter in adapters.items():
        adapter.add_arguments(p.add_argument_group(f"{name} options"))
    p.set_defaults(func=run)


def read_input(args: argparse.Namespace, what: str = "snapshot") -> str:
    """The text of the input named by ``args.snapshot`` (stdin is read once and kept)."""
    cached = getattr(args, "_input_text", None)
    if cached is not None:
        return cached
    path = args.snapshot
    if path == "-":
        text = sys.stdin.read()
    else:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError(path, f"{what} file not found") from None
        except IsADirectoryError:
            raise InputError(path, f"{what} is a directory, not a file") from None
        except (OSError, UnicodeDecodeError) as err:
            raise InputError(path, f"cannot read {what} file: {err}") from None
    args._input_text = text
    return text


def _systems_of(strategy: str) -> list[str]:
    found = []
    for name, s in systems.systems().items():
        if s.decide is None or s.strategies is None:
            continue
        if strategy in systems.load(s.strategies).names():
            found.append(name)
    return found


def _choose(args: argparse.Namespace, adapters: dict[str, DecideAdapter]) -> str:
    if args.system is not None:
        return args.system
    if args.strategy is not None:
        owners = _systems_of(args.strategy)
        if len(owners) == 1:
            return owners[0]
        if not owners:
            known = []
            for s in systems.systems().values():
                if s.decide is not None and s.strategies is not None:
                    known += systems.load(s.strategies).names()
            raise InputError("--strategy", f"unknown strategy {args.strategy!r}; known: {', '.join(sorted(set(known)))}")
        raise InputError("--strategy", f"{args.strategy!r} is a strategy of {', '.join(owners)}: name one with --system")
    text = None if args.snapshot != "-" and Path(args.snapshot).is_dir() else read_input(args)
    claimed = [name for name, a in adapters.items() if a.claims(args.snapshot, text)]
    if len(claimed) == 1:
        return claimed[0]
    if not claimed:
        raise InputError(args.snapshot, f"no system recognises this input; name a --strategy or a --system "
                                        f"({', '.join(adapters)})")
    raise InputError(args.snapshot, f"the input fits {', '.join(claimed)}: name a --strategy or a --system")


def run(args: argparse.Namespace) -> int:
    broken: dict[str, str] = {}
    adapters = _adapters(broken)
    if args.system in broken:
        raise RunFailure(f"the {args.system} system's decide adapter cannot be loaded: {broken[args.system]}")
    if not adapters:
        raise InputError("decide", "no registered system offers decide")
    name = _choose(args, adapters)
    return adapters[name].run(args, args.strategy)
