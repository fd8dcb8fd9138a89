"""Storm's ``decide`` adapter: what would one scheduling round of the Resource Aware Scheduler do on this cluster?

The input is one JSON object (``config``, ``nowSecs``, ``supervisors``, ``topologies``, optional ``assignments``)
read by :func:`clusteremu.strategies.storm.decide.parse_request`; the answer (``order``, per-topology status and
workers, ``evicted``, ``assignments`` — which can be fed into the next round) is
:func:`clusteremu.strategies.storm.decide.decide`'s. ``--strategy`` is the ``topology.scheduler.strategy`` of
topologies that name none (Storm's default, ``DefaultResourceAwareStrategy``, when not given); ``--explain`` adds
the node sorts and the priority picks with every user's score.
"""
from __future__ import annotations

import argparse
import json
from typing import Any

from clusteremu.base.errors import InputError
from clusteremu.cli.decide import read_input
from clusteremu.strategies.storm import registry
from clusteremu.strategies.storm.decide import decide, parse_request

__all__ = ["ADAPTER", "STRATEGIES", "StormDecide", "StormStrategyNames"]

#: ``topology.scheduler.strategy``'s default in Storm's defaults.yaml.
DEFAULT_STRATEGY = "org.apache.storm.scheduler.resource.strategies.scheduling.DefaultResourceAwareStrategy"


class StormStrategyNames:
    """The names ``decide --strategy`` takes for Storm: the scheduling strategies (simple and fully-qualified),
    which is what finds the Storm system from a strategy's name."""

    def names(self) -> list[str]:
        return registry.names("scheduling")

    def canonical_name(self, name: str) -> str:
        return registry.canonical_name("scheduling", name)


STRATEGIES = StormStrategyNames()


class StormDecide:
    """The adapter ``clusteremu decide`` uses for Storm (see :class:`clusteremu.cli.decide.DecideAdapter`)."""

    summary = "one ResourceAwareScheduler round: priority order, placements, evictions (Storm 2.x, or 1.x rules)"

    def add_arguments(self, group: argparse._ArgumentGroup) -> None:
        """Storm's input carries its own config; it needs no flags beyond the common ones."""

    def claims(self, path: str, text: str | None) -> bool:
        """A cluster: an object with ``supervisors`` and ``topologies``."""
        if text is None:
            return False  # a directory: not one of this system's inputs
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            return False
        return isinstance(obj, dict) and "supervisors" in obj and "topologies" in obj

    def run(self, args: argparse.Namespace, strategy: str | None) -> int:
        where = "<stdin>" if args.snapshot == "-" else args.snapshot
        try:
            obj = json.loads(read_input(args))
        except json.JSONDecodeError as err:
            raise InputError(where, f"not valid JSON: {err}") from None
        chosen = strategy or DEFAULT_STRATEGY
        try:
            answer = decide(parse_request(obj, where), chosen, explain=args.explain)
        except InputError as err:
            if err.where == "default strategy":
                raise InputError("--strategy", err.reason) from None
            raise
        if args.format == "json":
            print(json.dumps(answer, indent=2))
        else:
            _print(answer)
        return 0


def _print(answer: dict[str, Any]) -> None:
    from rich.table import Table

    from clusteremu.cli.output import console_for_output

    console = console_for_output()
    table = Table(title="ResourceAwareScheduler round (topologies in priority order)")
    for column in ("topology", "scheduled", "workers", "status"):
        table.add_column(column)
    for name in dict.fromkeys(answer["order"]):
        t = answer["topologies"][name]
        table.add_row(name, "yes" if t["fully_scheduled"] else "no", str(len(t["workers"])), t["status"])
    console.print(table)
    for cause, victims in answer["evicted"].items():
        console.print(f"{cause} evicted: {', '.join(victims)}")
    if "explain" in answer:
        console.print_json(json.dumps(answer["explain"]))


ADAPTER = StormDecide()
