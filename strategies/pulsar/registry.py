"""Pulsar strategies by name: Java simple class names and the fully-qualified names of ``broker.conf``.

Targets are ``"module:Class"`` strings imported on first use, so a strategy module that does not import
(yet) breaks only its own name. Every class is constructed as ``Class(config: PulsarConfig, rng:
numpy.random.Generator)``; :func:`create` defaults ``rng`` to ``numpy.random.default_rng(0)`` (the
emulator passes one derived from the run seed and the leader's name).
"""
from __future__ import annotations

import importlib
from typing import Any, Literal, Mapping

import numpy as np

from .config import PulsarConfig, as_config

__all__ = ["Kind", "canonical_name", "create", "names", "resolve", "target"]

Kind = Literal["shedding", "placement", "split"]

_IMPL = "org.apache.pulsar.broker.loadbalance.impl."
_EXT = "org.apache.pulsar.broker.loadbalance.extensions."

# (simple name or None if only the fully-qualified one is registered, fully-qualified name, kinds, target)
_ENTRIES: tuple[tuple[str | None, str, tuple[str, ...], str], ...] = (
    ("OverloadShedder", _IMPL + "OverloadShedder", ("shedding",),
     "clusteremu.strategies.pulsar.shedding.overload_shedder:OverloadShedder"),
    ("ThresholdShedder", _IMPL + "ThresholdShedder", ("shedding",),
     "clusteremu.strategies.pulsar.shedding.threshold_shedder:ThresholdShedder"),
    ("UniformLoadShedder", _IMPL + "UniformLoadShedder", ("shedding",),
     "clusteremu.strategies.pulsar.shedding.uniform_load_shedder:UniformLoadShedder"),
    ("AvgShedder", _IMPL + "AvgShedder", ("shedding", "placement"),
     "clusteremu.strategies.pulsar.shedding.avg_shedder:AvgShedder"),
    ("LeastLongTermMessageRate", _IMPL + "LeastLongTermMessageRate", ("placement",),
     "clusteremu.strategies.pulsar.placement.least_long_term_message_rate:LeastLongTermMessageRate"),
    ("LeastResourceUsageWithWeight", _IMPL + "LeastResourceUsageWithWeight", ("placement",),
     "clusteremu.strategies.pulsar.placement.least_resource_usage_with_weight:LeastResourceUsageWithWeight"),
    ("RoundRobinBrokerSelector", _IMPL + "RoundRobinBrokerSelector", ("placement",),
     "clusteremu.strategies.pulsar.placement.round_robin:RoundRobinBrokerSelector"),
    ("TransferShedder", _EXT + "scheduler.TransferShedder", ("shedding",),
     "clusteremu.strategies.pulsar.extensible.transfer_shedder:TransferShedder"),
    (None, _EXT + "strategy.LeastResourceUsageWithWeight", ("placement",),
     "clusteremu.strategies.pulsar.extensible.least_resource_usage_with_weight:LeastResourceUsageWithWeight"),
    ("DefaultNamespaceBundleSplitStrategyImpl", _EXT + "strategy.DefaultNamespaceBundleSplitStrategyImpl", ("split",),
     "clusteremu.strategies.pulsar.extensible.split_strategy:DefaultNamespaceBundleSplitStrategyImpl"),
)

_TARGETS: dict[str, str] = {}
_CANONICAL: dict[str, str] = {}
_KINDS: dict[str, list[str]] = {"shedding": [], "placement": [], "split": []}
for _simple, _full, _kinds, _target in _ENTRIES:
    for _name in (_simple, _full):
        if _name is None:
            continue
        _TARGETS[_name] = _target
        _CANONICAL[_name] = _full
        for _kind in _kinds:
            _KINDS[_kind].append(_name)


def names(kind: Kind | None = None) -> list[str]:
    """Registered names (simple and fully-qualified) of ``kind`` ("shedding", "placement" or "split"), or all."""
    if kind is None:
        return list(_TARGETS)
    if kind not in _KINDS:
        raise ValueError(f"unknown strategy kind {kind!r}; expected one of {sorted(_KINDS)}")
    return list(_KINDS[kind])


def target(name: str) -> str:
    """The ``"module:Class"`` string registered for ``name``; ``KeyError`` listing the known names."""
    try:
        return _TARGETS[name]
    except KeyError:
        raise KeyError(
            f"unknown Pulsar strategy {name!r}; known: {', '.join(sorted(_TARGETS))}"
        ) from None


def canonical_name(name: str) -> str:
    """The fully-qualified Java class name for ``name`` (simple or fully-qualified); ``KeyError`` if unknown.

    Two names denote the same strategy exactly when their canonical names are equal (e.g. to decide
    whether the placement strategy is the shedding strategy, as Pulsar requires for AvgShedder).
    """
    target(name)  # raises the KeyError listing the known names
    return _CANONICAL[name]


def resolve(name: str) -> type:
    """Import and return the class registered for ``name``."""
    module_name, _, class_name = target(name).partition(":")
    return getattr(importlib.import_module(module_name), class_name)


def create(
    name: str,
    config: Mapping[str, Any] | PulsarConfig | None = None,
    *,
    rng: np.random.Generator | None = None,
) -> Any:
    """Instantiate the strategy ``name`` with ``config`` (ServiceConfiguration keys, Pulsar units;
    missing keys take Pulsar's defaults) and ``rng`` (default ``numpy.random.default_rng(0)``)."""
    cls = resolve(name)
    return cls(as_config(config), rng if rng is not None else np.random.default_rng(0))
