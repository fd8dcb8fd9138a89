"""Models of the registered systems, as the kernel uses them: a scenario's ``scenario.model`` names a system of
:mod:`clusteremu.emulator.systems`, whose ``model`` target is an object with:

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

from . import systems


@dataclass(frozen=True)
class AgentSpec:
    """An agent to create: its name, its class as ``"module:Class"``, msgpack-safe params, and start time."""

    name: str
    factory: str
    params: dict[str, Any] = field(default_factory=dict)
    start_at: float = 0.0


def model_names() -> tuple[str, ...]:
    """The names of the registered systems, in name order."""
    return tuple(systems.systems())


def load_model(name: str) -> Any:
    """The model object of system ``name`` (its event kinds declared); ``KeyError`` listing the known names."""
    sys_ = systems.system(name)
    declare_events(name)
    return systems.load(sys_.model)


def declare_events(name: str) -> None:
    """Import the modules that declare the event kinds of system ``name``."""
    for module in systems.system(name).events:
        importlib.import_module(module)


def load_all_models() -> None:
    """Load every registered system's model and event kinds (for the catalogue of event kinds)."""
    for name in systems.systems():
        load_model(name)


def resolve_factory(path: str) -> Any:
    """The class named by an :class:`AgentSpec`'s ``factory``."""
    return systems.load(path)
