"""Testing timing behaviours of emulated clusters: assertions over a run's trace, scenarios written in Python.

With pytest, the ``clusteremu`` plugin (:mod:`clusteremu.emulator.pytest_plugin`, registered through the ``pytest11``
entry point) adds the ``emulate`` and ``scenario`` fixtures; everything here also works without pytest.
See ``docs/testing.md``.
"""
from clusteremu.emulator.trace.query import Interval, Trace, entity_of, trace_of

from .assertions import (
    assert_always,
    assert_before,
    assert_count,
    assert_eventually,
    assert_interval,
    assert_never,
)
from .builder import ScenarioBuilder
from .emulate import emulate_into, prepare
from .traces import write_run

__all__ = [
    "Interval",
    "ScenarioBuilder",
    "Trace",
    "assert_always",
    "assert_before",
    "assert_count",
    "assert_eventually",
    "assert_interval",
    "assert_never",
    "emulate_into",
    "entity_of",
    "prepare",
    "trace_of",
    "write_run",
]
