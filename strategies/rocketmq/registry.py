"""RocketMQ allocation strategies by name: Java simple class names and fully-qualified names
(``org.apache.rocketmq.client.consumer.rebalance.<Class>``), as users write them in client configuration.

Targets are ``"module:Class"`` strings imported on first use. :func:`create` builds a strategy from its Java
settings, keyed by RocketMQ's own names:

* ``AllocateMessageQueueConsistentHash``: ``virtualNodeCnt`` (int, default 10 as the no-argument constructor);
* ``AllocateMessageQueueByConfig``: ``messageQueueList`` (required; ``MessageQueue`` objects);
* ``AllocateMessageQueueByMachineRoom``: ``consumeridcs`` (required; strings);
* ``AllocateMachineRoomNearby``: ``innerStrategy`` (required; a registered name other than this one, or a strategy
  object), ``brokerMachineRoom`` {brokerName: room} and ``consumerMachineRoom`` {cid: room} (required), plus the
  inner strategy's own settings;
* ``AllocateMessageQueueAveragely`` and ``...ByCircle`` take none.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping

from .strategy import AllocateMessageQueueStrategy

__all__ = [
    "PACKAGE",
    "canonical_name",
    "create",
    "names",
    "params_of",
    "required_params_of",
    "resolve",
    "simple_name",
    "target",
]

PACKAGE = "org.apache.rocketmq.client.consumer.rebalance."

_MOD = "clusteremu.strategies.rocketmq."

# (simple name, target, settings the constructor reads)
_ENTRIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("AllocateMessageQueueAveragely", _MOD + "averagely:AllocateMessageQueueAveragely", ()),
    ("AllocateMessageQueueAveragelyByCircle",
     _MOD + "averagely_by_circle:AllocateMessageQueueAveragelyByCircle", ()),
    ("AllocateMessageQueueConsistentHash",
     _MOD + "consistent_hash:AllocateMessageQueueConsistentHash", ("virtualNodeCnt",)),
    ("AllocateMessageQueueByConfig", _MOD + "by_config:AllocateMessageQueueByConfig", ("messageQueueList",)),
    ("AllocateMessageQueueByMachineRoom",
     _MOD + "by_machine_room:AllocateMessageQueueByMachineRoom", ("consumeridcs",)),
    ("AllocateMachineRoomNearby", _MOD + "machine_room_nearby:AllocateMachineRoomNearby",
     ("innerStrategy", "brokerMachineRoom", "consumerMachineRoom")),
)

_TARGETS: dict[str, str] = {}
_CANONICAL: dict[str, str] = {}
_PARAMS: dict[str, tuple[str, ...]] = {}
for _simple, _target, _params in _ENTRIES:
    for _name in (_simple, PACKAGE + _simple):
        _TARGETS[_name] = _target
        _CANONICAL[_name] = PACKAGE + _simple
        _PARAMS[_name] = _params

_NEARBY = PACKAGE + "AllocateMachineRoomNearby"


def names() -> list[str]:
    """Every registered name, simple and fully-qualified."""
    return list(_TARGETS)


def target(name: str) -> str:
    """The ``"module:Class"`` string registered for ``name``; ``KeyError`` listing the known names."""
    try:
        return _TARGETS[name]
    except KeyError:
        raise KeyError(
            f"unknown RocketMQ allocation strategy {name!r}; known: {', '.join(sorted(_TARGETS))}"
        ) from None


def canonical_name(name: str) -> str:
    """The fully-qualified Java class name for ``name`` (simple or fully-qualified); ``KeyError`` if unknown."""
    target(name)
    return _CANONICAL[name]


def params_of(name: str) -> tuple[str, ...]:
    """The settings (RocketMQ names) the strategy ``name`` reads itself; for ``AllocateMachineRoomNearby`` the
    inner strategy's own come on top. ``KeyError`` if unknown."""
    target(name)
    return _PARAMS[name]


def required_params_of(name: str) -> tuple[str, ...]:
    """The settings of :func:`params_of` that have no Java default (all but ``virtualNodeCnt``)."""
    return tuple(p for p in params_of(name) if p != "virtualNodeCnt")


def simple_name(name: str) -> str:
    """The simple Java class name for ``name``; ``KeyError`` if unknown."""
    return canonical_name(name)[len(PACKAGE):]


def resolve(name: str) -> type:
    """Import and return the class registered for ``name``."""
    module_name, _, class_name = target(name).partition(":")
    return getattr(importlib.import_module(module_name), class_name)


def _required(params: Mapping[str, Any], key: str, name: str) -> Any:
    if key not in params:
        raise ValueError(f"{canonical_name(name)} needs the setting {key!r}")
    return params[key]


_BUILDERS: dict[str, Callable[[type, Mapping[str, Any], str], AllocateMessageQueueStrategy]] = {
    PACKAGE + "AllocateMessageQueueAveragely": lambda cls, p, n: cls(),
    PACKAGE + "AllocateMessageQueueAveragelyByCircle": lambda cls, p, n: cls(),
    PACKAGE + "AllocateMessageQueueConsistentHash":
        lambda cls, p, n: cls(p["virtualNodeCnt"]) if "virtualNodeCnt" in p else cls(),
    PACKAGE + "AllocateMessageQueueByConfig": lambda cls, p, n: cls(_required(p, "messageQueueList", n)),
    PACKAGE + "AllocateMessageQueueByMachineRoom": lambda cls, p, n: cls(_required(p, "consumeridcs", n)),
}


def create(name: str, params: Mapping[str, Any] | None = None) -> AllocateMessageQueueStrategy:
    """Instantiate the strategy ``name`` with its Java settings ``params`` (see the module docstring).

    ``KeyError`` for an unknown strategy name; ``ValueError`` for a setting the strategy (and, for
    ``AllocateMachineRoomNearby``, its inner strategy) does not read, or a missing required one;
    :class:`~.errors.AllocationArgumentError` where the Java constructor throws (a negative ``virtualNodeCnt``).
    """
    params = dict(params or {})
    cls = resolve(name)
    canonical = canonical_name(name)
    if canonical == _NEARBY:
        inner_spec = _required(params, "innerStrategy", name)
        own = {k: params[k] for k in params if k not in _PARAMS[name]}
        if isinstance(inner_spec, AllocateMessageQueueStrategy):
            _reject_unknown(own, (), f"{canonical} with a ready inner strategy")
            inner = inner_spec
        else:
            if canonical_name(inner_spec) == _NEARBY:
                raise ValueError(f"innerStrategy of {canonical} cannot be {canonical} itself")
            inner = create(inner_spec, own)
        return cls(inner, _required(params, "brokerMachineRoom", name), _required(params, "consumerMachineRoom", name))
    _reject_unknown(params, _PARAMS[name], canonical)
    return _BUILDERS[canonical](cls, params, name)


def _reject_unknown(params: Mapping[str, Any], known: tuple[str, ...], who: str) -> None:
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ValueError(
            f"{who} does not read {', '.join(map(repr, unknown))}; it reads: {', '.join(known) or 'nothing'}"
        )
