"""The pure core of ``clusteremu decide`` for RocketMQ: one JSON-like request in, each client's queues out.

Holds :class:`AllocationRequest`, :func:`parse_request` and :func:`decide`. The request::

    {"consumerGroup": "G",
     "mqAll":  [{"topic": "T", "brokerName": "broker-a", "queueId": 0}],      # or a topic route, see below
     "cidAll": ["10.0.0.1@1234", "10.0.0.2@1234"],
     "currentCID": "10.0.0.1@1234",                                           # optional
     "strategyParams": {"virtualNodeCnt": 10}}                                # optional

Instead of ``mqAll`` the request may carry a topic route as ``mqadmin topicRoute`` prints it (``queueDatas``,
``brokerDatas``, ...) plus ``"topic"``; the queues are then those the client derives (:mod:`.topic_route`), in its
``HashSet`` order. The answer is ``{"allocation": {cid: [{"topic", "brokerName", "queueId"}, ...]}}``, for
``currentCID`` only when it is given, else for every member of ``cidAll``.

Nothing is defaulted: a missing or mistyped field is an :class:`~clusteremu.base.errors.InputError` naming its
path. Null or empty ``mqAll``/``cidAll``/``currentCID`` reach the strategy; where RocketMQ throws, the
``InputError`` carries RocketMQ's own message.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from clusteremu.base.errors import InputError

from . import registry
from clusteremu.base.java import INT_MAX, INT_MIN
from .errors import AllocationArgumentError
from .message_queue import MessageQueue
from .pop import allocate4pop
from .sorting import sort_cid_all, sort_mq_all
from .strategy import AllocateMessageQueueStrategy
from .topic_route import QueueData, subscribe_queues

__all__ = ["AllocationRequest", "decide", "parse_request"]

_ROUTE_KEYS = ("topic", "queueDatas", "brokerDatas", "orderTopicConf", "filterServerTable",
               "topicQueueMappingByBroker")
_KNOWN_KEYS = ("consumerGroup", "mqAll", "cidAll", "currentCID", "strategyParams", *_ROUTE_KEYS)
_PARAM_KEYS = ("virtualNodeCnt", "messageQueueList", "consumeridcs", "innerStrategy", "brokerMachineRoom",
               "consumerMachineRoom", "popShareQueueNum")
_QUEUE_KEYS = ("topic", "brokerName", "queueId")

# Stands in for "any client" when no currentCID is given and cidAll has nobody: non-empty, not blank, and never in
# an empty cidAll, so a strategy answers exactly what it would answer every real client of such a group.
_PROBE_CID = "\x00"


@dataclass(frozen=True)
class AllocationRequest:
    """A parsed ``decide`` request. ``mq_all_field`` is the input field the queues came from (``"mqAll"`` or
    ``"queueDatas"``), for error messages; ``strategy_params`` holds the given ``strategyParams`` (RocketMQ names,
    typed values, ``popShareQueueNum`` apart)."""

    where: str
    consumer_group: str
    mq_all: tuple[MessageQueue, ...] | None
    cid_all: tuple[str, ...] | None
    current_cid: str | None
    has_current_cid: bool
    mq_all_field: str = "mqAll"
    strategy_params: Mapping[str, Any] = field(default_factory=dict)
    pop_share_queue_num: int | None = None


def _show(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _err(where: str, path: str, reason: str) -> InputError:
    return InputError(f"{where}: {path}" if path else where, reason)


def _int(value: Any, where: str, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _err(where, path, f"expected an integer, got {_show(value)}")
    if not INT_MIN <= value <= INT_MAX:
        raise _err(where, path, f"expected a 32-bit integer (Java int), got {value}")
    return value


def _str(value: Any, where: str, path: str) -> str:
    if not isinstance(value, str):
        raise _err(where, path, f"expected a string, got {_show(value)}")
    return value


def _list(value: Any, where: str, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _err(where, path, f"expected a list, got {_show(value)}")
    return value


def _object(value: Any, where: str, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _err(where, path, f"expected an object, got {_show(value)}")
    return value


def _required(obj: Mapping[str, Any], key: str, where: str, path: str) -> Any:
    if key not in obj:
        raise _err(where, path + key, "missing")
    return obj[key]


def _queue(value: Any, where: str, path: str) -> MessageQueue:
    obj = _object(value, where, path)
    unknown = sorted(set(obj) - set(_QUEUE_KEYS))
    if unknown:
        raise _err(where, path, f"unknown key(s) {', '.join(map(repr, unknown))}; known keys: "
                                f"{', '.join(_QUEUE_KEYS)}")
    return MessageQueue(
        _str(_required(obj, "topic", where, path + "."), where, path + ".topic"),
        _str(_required(obj, "brokerName", where, path + "."), where, path + ".brokerName"),
        _int(_required(obj, "queueId", where, path + "."), where, path + ".queueId"),
    )


def _queues(value: Any, where: str, path: str) -> tuple[MessageQueue, ...]:
    return tuple(_queue(item, where, f"{path}[{i}]") for i, item in enumerate(_list(value, where, path)))


def _strings(value: Any, where: str, path: str) -> tuple[str, ...]:
    return tuple(_str(item, where, f"{path}[{i}]") for i, item in enumerate(_list(value, where, path)))


def _rooms(value: Any, where: str, path: str) -> dict[str, str | None]:
    obj = _object(value, where, path)
    rooms: dict[str, str | None] = {}
    for key, room in obj.items():
        # a null room is accepted: it is what a Java resolver returns for an unknown name (RocketMQ then refuses it)
        rooms[_str(key, where, path)] = None if room is None else _str(room, where, f"{path}.{key}")
    return rooms


def _route_queues(obj: Mapping[str, Any], where: str) -> tuple[MessageQueue, ...]:
    topic = _str(_required(obj, "topic", where, ""), where, "topic")
    mapping = obj.get("topicQueueMappingByBroker")
    if mapping:  # the client then takes the static-topic path (logic queues), which is not modelled
        raise _err(where, "topicQueueMappingByBroker",
                   "static topics (logic queue mappings) are not supported; give mqAll instead")
    if obj.get("brokerDatas") is not None:
        _list(obj["brokerDatas"], where, "brokerDatas")  # not needed for subscription, but must be a route's list
    datas = []
    for i, item in enumerate(_list(_required(obj, "queueDatas", where, ""), where, "queueDatas")):
        path = f"queueDatas[{i}]"
        qd = _object(item, where, path)
        for optional in ("writeQueueNums", "topicSysFlag"):  # not used for subscription; checked when present
            if optional in qd:
                _int(qd[optional], where, f"{path}.{optional}")
        datas.append(QueueData(
            broker_name=_str(_required(qd, "brokerName", where, path + "."), where, path + ".brokerName"),
            read_queue_nums=_int(_required(qd, "readQueueNums", where, path + "."), where, path + ".readQueueNums"),
            perm=_int(_required(qd, "perm", where, path + "."), where, path + ".perm"),
        ))
    return tuple(subscribe_queues(topic, datas))


def _strategy_params(value: Any, where: str) -> tuple[dict[str, Any], int | None]:
    obj = _object(value, where, "strategyParams")
    unknown = sorted(set(obj) - set(_PARAM_KEYS))
    if unknown:
        raise _err(where, "strategyParams", f"unknown key(s) {', '.join(map(repr, unknown))}; known keys: "
                                            f"{', '.join(_PARAM_KEYS)}")
    params: dict[str, Any] = {}
    for key, raw in obj.items():
        path = f"strategyParams.{key}"
        if key in ("virtualNodeCnt", "popShareQueueNum"):
            params[key] = _int(raw, where, path)
        elif key == "messageQueueList":
            params[key] = _queues(raw, where, path)
        elif key == "consumeridcs":
            params[key] = _strings(raw, where, path)
        elif key == "innerStrategy":
            params[key] = _str(raw, where, path)
        else:
            params[key] = _rooms(raw, where, path)
    return params, params.pop("popShareQueueNum", None)


def parse_request(obj: Any, where: str) -> AllocationRequest:
    """Validate a ``decide`` request (parsed JSON) read from ``where`` (a file name) into an
    :class:`AllocationRequest`; :class:`InputError` naming the field path on anything missing, mistyped or
    unknown."""
    root = _object(obj, where, "")
    unknown = sorted(set(root) - set(_KNOWN_KEYS))
    if unknown:
        raise _err(where, "", f"unknown key(s) {', '.join(map(repr, unknown))}; known keys: {', '.join(_KNOWN_KEYS)}")
    group = _str(_required(root, "consumerGroup", where, ""), where, "consumerGroup")

    route_given = [k for k in _ROUTE_KEYS if k in root]
    if "mqAll" in root:
        if route_given:
            raise _err(where, route_given[0], "give either mqAll or a topic route, not both")
        mq_all = None if root["mqAll"] is None else _queues(root["mqAll"], where, "mqAll")
        mq_field = "mqAll"
    elif route_given:
        mq_all, mq_field = _route_queues(root, where), "queueDatas"
    else:
        raise _err(where, "mqAll", "missing (give mqAll, or a topic route with 'topic' and 'queueDatas')")

    raw_cids = _required(root, "cidAll", where, "")
    cid_all = None if raw_cids is None else _strings(raw_cids, where, "cidAll")
    has_current = "currentCID" in root
    current = root.get("currentCID")
    if current is not None:
        current = _str(current, where, "currentCID")
    params, share = _strategy_params(root.get("strategyParams", {}), where)
    return AllocationRequest(
        where=where, consumer_group=group, mq_all=mq_all, cid_all=cid_all, current_cid=current,
        has_current_cid=has_current, mq_all_field=mq_field, strategy_params=params, pop_share_queue_num=share,
    )


def _build_strategy(request: AllocationRequest, strategy: str) -> AllocateMessageQueueStrategy:
    where, params = request.where, request.strategy_params
    try:
        simple = registry.simple_name(strategy)
    except KeyError as err:
        raise InputError("strategy", err.args[0]) from None
    reads = list(registry.params_of(strategy))
    required = [(key, simple) for key in registry.required_params_of(strategy)]
    inner = params.get("innerStrategy")
    if "innerStrategy" in reads and inner is not None:
        try:
            inner_simple = registry.simple_name(inner)
        except KeyError as err:
            raise _err(where, "strategyParams.innerStrategy", err.args[0]) from None
        if inner_simple == simple:
            raise _err(where, "strategyParams.innerStrategy", f"{simple} cannot be its own inner strategy")
        reads += registry.params_of(inner)
        required += [(key, inner_simple) for key in registry.required_params_of(inner)]
    for key in params:
        if key not in reads:
            raise _err(where, f"strategyParams.{key}",
                       f"not read by {simple}{' with ' + inner if inner and 'innerStrategy' in reads else ''}; "
                       f"it reads: {', '.join(reads) or 'nothing'} (and popShareQueueNum)")
    for key, needed_by in required:
        if key not in params:
            raise _err(where, f"strategyParams.{key}", f"missing; {needed_by} needs it")
    try:
        return registry.create(strategy, params)
    except AllocationArgumentError as err:
        raise _err(where, f"strategyParams.{err.argument}", err.message) from None


def decide(request: AllocationRequest, strategy: str, *, sort: bool = False) -> dict[str, Any]:
    """Run the strategy ``strategy`` (simple or fully-qualified Java name) on ``request``.

    ``sort=True`` first sorts ``mqAll`` and ``cidAll`` as ``RebalanceImpl`` does; otherwise both are passed as
    given. With ``popShareQueueNum`` in ``strategyParams`` the broker's ``allocate4Pop`` runs around the strategy.
    Returns ``{"allocation": {cid: [queue objects]}}``; a null ``currentCID`` that a strategy accepts (only
    ``ByConfig`` and POP do) is keyed ``"null"``, as Java prints it.
    """
    built = _build_strategy(request, strategy)
    mq_all: Sequence[MessageQueue] | None = request.mq_all
    cid_all: Sequence[str] | None = request.cid_all
    if sort:
        mq_all = None if mq_all is None else sort_mq_all(mq_all)
        cid_all = None if cid_all is None else sort_cid_all(cid_all)

    share = request.pop_share_queue_num

    def run(cid: str | None) -> list[MessageQueue]:
        try:
            if share is not None:
                return allocate4pop(built, request.consumer_group, cid, mq_all, cid_all, share)
            return built.allocate(request.consumer_group, cid, mq_all, cid_all)
        except AllocationArgumentError as err:
            path = {"mqAll": request.mq_all_field}.get(err.argument, err.argument)
            if err.argument in ("virtualNodeCnt", "brokerMachineRoom", "consumerMachineRoom"):
                path = f"strategyParams.{err.argument}"
            raise _err(request.where, path, err.message) from None

    allocation: dict[str, list[dict[str, Any]]] = {}
    if request.has_current_cid:
        cid = request.current_cid
        allocation["null" if cid is None else cid] = [mq.to_json() for mq in run(cid)]
    elif not cid_all:
        run(_PROBE_CID)  # nobody to answer for; raises what RocketMQ would throw at any client of this group
    else:
        for cid in dict.fromkeys(cid_all):
            allocation[cid] = [mq.to_json() for mq in run(cid)]
    return {"allocation": allocation}
