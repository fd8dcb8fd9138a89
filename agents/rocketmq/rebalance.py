"""The consumer's decision helpers, pure: its allocation strategy built from the scenario, and the fluid share of
its capacity among its queues.

Components:

* :func:`make_strategy`: the configured ``allocateMessageQueueStrategy`` (:mod:`clusteremu.strategies.rocketmq`)
  with its settings; for ``AllocateMachineRoomNearby`` the machine rooms come from a resolver, as in RocketMQ:
  the broker's room from the deployment's broker-to-room map, a client's from its client id
  (``ip@<room>#<pid>``, see :func:`room_of_cid`);
* :func:`room_of_cid`: that resolver for client ids;
* :func:`share`: split a budget of messages among queues with the given backlogs, equally, giving what a queue
  cannot use to the others (water-filling), in queue-key order;
* :func:`sorted_cids`, :func:`sorted_route` and :func:`allocate_view`: RebalanceImpl's sorting and the strategy's
  allocation, memoised per distinct view. They are pure functions of the view (the route, the client-id list, the
  strategy and its settings, the client), so the clients of a group that hold the same view share one result, each
  still asking for it at its own time; a process keeps at most :data:`MEMO_SIZE` results of each (then starts
  afresh), which bounds memory, not the results.
"""
from __future__ import annotations

from typing import Any, Hashable, Mapping, Sequence

from clusteremu.strategies.rocketmq import AllocateMessageQueueStrategy, MessageQueue, create, sort_cid_all, sort_mq_all
from clusteremu.strategies.rocketmq.registry import simple_name
from clusteremu.strategies.rocketmq.topic_route import QueueData, subscribe_queues

__all__ = ["MEMO_SIZE", "allocate_view", "make_strategy", "room_of_cid", "share", "sorted_cids", "sorted_route"]

#: results kept per memo before it starts afresh
MEMO_SIZE = 65_536
_SORTED_CIDS: dict[tuple[str, ...], tuple[str, ...]] = {}
_ROUTES: dict[tuple, tuple[list[MessageQueue], list[MessageQueue]]] = {}
_ALLOCATIONS: dict[Hashable, tuple[str, ...]] = {}


def _remember(memo: dict, key: Hashable, value: Any) -> Any:
    if len(memo) >= MEMO_SIZE:
        memo.clear()
    memo[key] = value
    return value


def sorted_cids(cids: Sequence[str]) -> tuple[str, ...]:
    """``Collections.sort(cidAll)`` (``String.compareTo`` order) of a broker's answer."""
    key = tuple(cids)
    out = _SORTED_CIDS.get(key)
    return out if out is not None else _remember(_SORTED_CIDS, key, tuple(sort_cid_all(key)))


def sorted_route(topic: str, queue_datas: Sequence[Sequence[Any]]) -> tuple[list[MessageQueue], list[MessageQueue]]:
    """The subscribable queues of a route (``[brokerName, readQueueNums, perm]`` rows) and the same sorted as
    RebalanceImpl sorts ``mqAll``. The lists are shared: callers must not change them."""
    key = (topic, tuple(tuple(q) for q in queue_datas))
    out = _ROUTES.get(key)
    if out is None:
        mq_set = subscribe_queues(topic, [QueueData(b, n, perm) for b, n, perm in queue_datas])
        out = _remember(_ROUTES, key, (mq_set, sort_mq_all(mq_set)))
    return out


def allocate_view(params: Mapping[str, Any], group: str, cid: str, route_key: Hashable, mq_all: list[MessageQueue],
                  cid_all: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """The strategy's name and what it allocates to ``cid`` from the view (``mq_all`` sorted, its route named by
    ``route_key``; ``cid_all`` sorted), as queue keys ``<topic>/<broker>/<id>`` in the strategy's order, without
    repeats. Raises the strategy's :class:`AllocationArgumentError`."""
    settings = (params["strategy"], tuple(sorted(params["strategy_params"].items())),
                tuple(sorted(params["broker_rooms"].items())))
    key = (settings, group, cid, route_key, cid_all)
    out = _ALLOCATIONS.get(key)
    if out is None:
        strategy = make_strategy(params, cid_all)
        result = strategy.allocate(group, cid, mq_all, list(cid_all))
        keys = tuple(dict.fromkeys(f"{mq.topic}/{mq.broker_name}/{mq.queue_id}" for mq in result))
        out = _remember(_ALLOCATIONS, key, (strategy.name, keys))
    return out


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
