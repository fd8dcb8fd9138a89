"""The consumer's decision helpers, pure: its allocation strategy built from the scenario, and the fluid share of
its capacity among its queues.

Components:

* :func:`make_strategy`: the configured ``allocateMessageQueueStrategy`` (:mod:`clusteremu.strategies.rocketmq`)
  with its settings; for ``AllocateMachineRoomNearby`` the machine rooms come from a resolver, as in RocketMQ:
  the broker's room from the deployment's broker-to-room map, a client's from its client id
  (``ip@<room>#<pid>``, see :func:`room_of_cid`);
* :func:`room_of_cid`: that resolver for client ids;
* :func:`share`: split a budget of messages among queues with the given backlogs, equally, giving what a queue
  cannot use to the others (water-filling), in queue-key order.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from clusteremu.strategies.rocketmq import AllocateMessageQueueStrategy, create
from clusteremu.strategies.rocketmq.registry import simple_name

__all__ = ["make_strategy", "room_of_cid", "share"]


def room_of_cid(cid: str) -> str | None:
    """The room of a client id ``ip@<room>#<pid>``; None when the instance name carries no room."""
    instance = cid.split("@", 1)[1] if "@" in cid else ""
    return instance.split("#", 1)[0] if "#" in instance else None


def make_strategy(params: Mapping[str, Any], cid_all: Sequence[str]) -> AllocateMessageQueueStrategy:
    """The consumer's strategy (``params``: the consumer's agent params: ``strategy``, ``strategy_params``,
    ``broker_rooms``); ``cid_all`` feeds the client-room resolver of ``AllocateMachineRoomNearby``."""
    name = params["strategy"]
    settings = dict(params["strategy_params"])
    if simple_name(name) == "AllocateMachineRoomNearby":
        settings["brokerMachineRoom"] = dict(params["broker_rooms"])
        settings["consumerMachineRoom"] = {cid: room_of_cid(cid) for cid in cid_all}
    return create(name, settings)


def share(available: Mapping[str, float], budget: float) -> dict[str, float]:
    """How much of ``budget`` each queue consumes: equal shares, capped by each queue's backlog, the unused part
    redistributed (water-filling). Deterministic: smaller backlogs first, ties in key order."""
    out = {k: 0.0 for k in available}
    left = max(0.0, budget)
    pending = sorted(available, key=lambda k: (available[k], k))
    while pending and left > 1e-12:
        each = left / len(pending)
        k = pending[0]
        if available[k] <= each:
            out[k] = available[k]
            left -= available[k]
            pending.pop(0)
        else:
            for k in pending:
                out[k] = each
            left = 0.0
            pending = []
    return {k: v for k, v in out.items() if v > 0}
