"""Registry of modelled systems: a scenario's ``scenario.model`` names one.

A model module exposes ``MODEL``, an object with:

* ``name``, ``description``;
* ``sections``: the scenario schema of its own sections (``cluster``, ``workload``, ``strategy``, ``config``,
  ``faults``), see :mod:`clusteremu.scenarios.schema`;
* ``agents(scenario) -> list[AgentSpec]``: every agent of the run, built from the validated scenario alone, so
  that any worker process can build its share without receiving objects;
* ``network_conditions(scenario) -> list[Condition]``: network faults of the schedule (may be empty).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

MODELS: dict[str, str] = {
    "heartbeat": "clusteremu.agents.heartbeat.model",
    "pulsar": "clusteremu.agents.pulsar.model",
}


@dataclass(frozen=True)
class AgentSpec:
    """An agent to create: its name, its class as ``"module:Class"``, msgpack-safe params, and start time."""

    name: str
    factory: str
    params: dict[str, Any] = field(default_factory=dict)
    start_at: float = 0.0


def load_model(name: str) -> Any:
    try:
        module = MODELS[name]
    except KeyError:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(sorted(MODELS))}") from None
    return importlib.import_module(module).MODEL


def load_all_models() -> None:
    for name in MODELS:
        load_model(name)


def resolve_factory(path: str) -> Any:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)
