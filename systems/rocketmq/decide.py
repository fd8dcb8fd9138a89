"""RocketMQ's ``decide`` adapter: which queues would each consumer of a group take under an allocation strategy?

The input is one JSON object with RocketMQ's field names (``consumerGroup``, ``mqAll`` or a topic route as
``mqadmin topicRoute`` prints it, ``cidAll``, ``currentCID``, ``strategyParams``), read by
:func:`clusteremu.strategies.rocketmq.decide.parse_request`. ``--sort`` sorts ``mqAll`` and ``cidAll`` as
``RebalanceImpl`` does before allocating; without it both reach the strategy as given. The strategy
(``--strategy``, simple or fully-qualified class name) is required: a RocketMQ input names none.
"""
from __future__ import annotations

import argparse
import json
from typing import Any

from clusteremu.base.errors import InputError
from clusteremu.cli.decide import read_input
from clusteremu.strategies.rocketmq import registry
from clusteremu.strategies.rocketmq.decide import decide, parse_request

__all__ = ["ADAPTER", "RocketMQDecide"]


class RocketMQDecide:
    """The adapter ``clusteremu decide`` uses for RocketMQ (see :class:`clusteremu.cli.decide.DecideAdapter`)."""

    summary = "which message queues each consumer of a group takes under an AllocateMessageQueueStrategy"

    def add_arguments(self, group: argparse._ArgumentGroup) -> None:
        group.add_argument("--sort", action="store_true",
                           help="sort mqAll and cidAll as RebalanceImpl does before allocating")

    def claims(self, path: str, text: str | None) -> bool:
        """A consumer group's question: an object with ``cidAll``."""
        if text is None:
            return False  # a directory: not one of this system's inputs
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            return False
        return isinstance(obj, dict) and "cidAll" in obj

    def run(self, args: argparse.Namespace, strategy: str | None) -> int:
        if strategy is None:
            raise InputError("--strategy", "name the allocation strategy (known: "
                                           f"{', '.join(sorted(registry.names()))})")
        where = "<stdin>" if args.snapshot == "-" else args.snapshot
        try:
            obj = json.loads(read_input(args))
        except json.JSONDecodeError as err:
            raise InputError(where, f"not valid JSON: {err}") from None
        answer = decide(parse_request(obj, where), strategy, sort=args.sort)
        if args.format == "json":
            print(json.dumps(answer, indent=2))
        else:
            _print_table(answer, registry.canonical_name(strategy))
        return 0


def _print_table(answer: dict[str, Any], strategy: str) -> None:
    from rich.table import Table

    from clusteremu.cli.output import console_for_output

    table = Table(title=f"{strategy.rsplit('.', 1)[-1]}: queues per consumer")
    table.add_column("consumer")
    table.add_column("queues", justify="right")
    table.add_column("topic@brokerName:queueId")
    for cid, queues in answer["allocation"].items():
        shown = ", ".join(f"{q['topic']}@{q['brokerName']}:{q['queueId']}" for q in queues) or "(none)"
        table.add_row(cid, str(len(queues)), shown)
    console_for_output().print(table)


ADAPTER = RocketMQDecide()
