"""clusteremu: an agent-based, multi-process emulator of the control plane of Pulsar, RocketMQ and Storm.

The repository's top-level folders install as subpackages of this one: ``clusteremu.base`` (errors, Java
semantics), ``clusteremu.emulator`` (the kernel), ``clusteremu.strategies``, ``clusteremu.agents``,
``clusteremu.scenarios``, ``clusteremu.tools``, ``clusteremu.systems`` (the built-in systems' plug-ins) and
``clusteremu.cli``.

The public API is what this module exports (``tests/test_exports.py`` pins it); everything else may change
between versions. The names are imported on first use, so ``import clusteremu`` costs nothing:

* running and reading runs: :func:`execute`, :func:`load_scenario`, :func:`open_run`, :class:`Run`,
  :class:`Event`, :class:`Trace`, :func:`trace_of`;
* testing timing behaviours (:mod:`clusteremu.emulator.testing`, also the pytest plugin's fixtures):
  :class:`ScenarioBuilder` and the ``assert_*`` functions;
* the system registry (:mod:`clusteremu.emulator.systems`): :class:`System`, :class:`Suite`, :func:`systems`,
  :func:`system`, :func:`register`, :func:`unregister`;
* errors: :class:`InputError` (bad input, exit 2), :class:`RunFailure` (the run failed, exit 1).
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: public name → the module that defines it
_EXPORTS: dict[str, str] = {
    "InputError": "clusteremu.base.errors",
    "RunFailure": "clusteremu.base.errors",
    "execute": "clusteremu.emulator.runner",
    "load_scenario": "clusteremu.scenarios.loader",
    "open_run": "clusteremu.emulator.trace.reader",
    "Run": "clusteremu.emulator.trace.reader",
    "Event": "clusteremu.emulator.trace.reader",
    "Trace": "clusteremu.emulator.trace.query",
    "trace_of": "clusteremu.emulator.trace.query",
    "ScenarioBuilder": "clusteremu.emulator.testing.builder",
    "assert_always": "clusteremu.emulator.testing.assertions",
    "assert_before": "clusteremu.emulator.testing.assertions",
    "assert_count": "clusteremu.emulator.testing.assertions",
    "assert_eventually": "clusteremu.emulator.testing.assertions",
    "assert_interval": "clusteremu.emulator.testing.assertions",
    "assert_never": "clusteremu.emulator.testing.assertions",
    "System": "clusteremu.emulator.systems",
    "Suite": "clusteremu.emulator.systems",
    "systems": "clusteremu.emulator.systems",
    "system": "clusteremu.emulator.systems",
    "register": "clusteremu.emulator.systems",
    "unregister": "clusteremu.emulator.systems",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'clusteremu' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return __all__
