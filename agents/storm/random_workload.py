"""Random topologies and random supervisor capacities, drawn from the run's seed (the documentation's evaluation:
"random topologies on random clusters", shared/seeds/003).

* :data:`RANDOM_TOPOLOGY`: the ``[[workload.random]]`` entry: like a topology entry, but its components are drawn
  when the user starts, from ranges: ``components`` (how many: one spout, the rest bolts, each bolt reading from
  one earlier component), ``parallelism``, ``topology.component.cpu.pcore.percent`` (``cpu``) and
  ``topology.component.resources.onheap.memory.mb`` (``onheap_mb``);
* :data:`RANDOM_CAPACITY`: a supervisor group's ``random_capacity`` ranges (``cpu``, ``memory_mb``);
* :func:`draw_components` / :func:`draw_capacity`: the draws, on a generator the caller keys (the user's stream of
  that topology, the supervisor's own stream), so another seed gives another workload and cluster and nothing else
  shifts them;
* :func:`check_ranges`: the ranges' problems, by field path.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from clusteremu.scenarios.schema import Field, Table
from clusteremu.strategies.storm.config import (
    TOPOLOGY_COMPONENT_CPU_PCORE_PERCENT,
    TOPOLOGY_COMPONENT_RESOURCES_ONHEAP_MEMORY_MB,
)

__all__ = ["RANDOM_CAPACITY", "RANDOM_TOPOLOGY", "check_ranges", "draw_capacity", "draw_components"]


def _range(doc: str, default: list[float] | None = None) -> Field:
    return Field("list", default=default, item=Field("float", ge=0), doc=f"[low, high]: {doc}")


RANDOM_TOPOLOGY = Table({
    "name": Field("str"),
    "user": Field("str", doc="topology.submitter.user"),
    "submit_at_s": Field("float", default=0.0, ge=0),
    "kill_at_s": Field("float", default=None, ge=0, doc="when the user kills it; none: never"),
    "count": Field("int", default=1, ge=1, doc="topologies named <name>-1..n, each drawn afresh"),
    "every_s": Field("float", default=0.0, ge=0, doc="the copies' submissions this far apart"),
    "components": _range("how many components (one spout, the rest bolts)", [2.0, 5.0]),
    "parallelism": _range("executors of each component", [1.0, 6.0]),
    "cpu": _range("topology.component.cpu.pcore.percent of each component (steps of 5)", [10.0, 60.0]),
    "onheap_mb": _range("topology.component.resources.onheap.memory.mb of each component (steps of 32)",
                        [64.0, 384.0]),
}, open=True, doc="plus Storm topology conf keys (topology.priority, ...), as a topology entry")

RANDOM_CAPACITY = Table({
    "cpu": _range("supervisor.cpu.capacity (steps of 50)"),
    "memory_mb": _range("supervisor.memory.capacity.mb (steps of 512)"),
})

#: fields of a random entry that are the emulator's, not Storm conf keys
RANDOM_OWN_KEYS = ("name", "user", "submit_at_s", "kill_at_s", "count", "every_s", "components", "parallelism", "cpu",
                   "onheap_mb")


def _pick(rng: np.random.Generator, bounds: list[float], step: float) -> float:
    lo, hi = bounds
    steps = int((hi - lo) // step)
    return float(lo + step * int(rng.integers(0, steps + 1)))


def draw_components(rng: np.random.Generator, entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One topology's components, drawn from ``entry``'s ranges (ids ``c0`` .. ``cN``; ``c0`` the spout)."""
    n = int(_pick(rng, entry["components"], 1.0))
    out: list[dict[str, Any]] = []
    for i in range(max(1, n)):
        comp: dict[str, Any] = {
            "id": f"c{i}", "type": "spout" if i == 0 else "bolt",
            "parallelism": max(1, int(_pick(rng, entry["parallelism"], 1.0))),
            "inputs": [] if i == 0 else [f"c{int(rng.integers(0, i))}"],
            TOPOLOGY_COMPONENT_CPU_PCORE_PERCENT: _pick(rng, entry["cpu"], 5.0),
            TOPOLOGY_COMPONENT_RESOURCES_ONHEAP_MEMORY_MB: _pick(rng, entry["onheap_mb"], 32.0),
        }
        out.append(comp)
    return out


def draw_capacity(rng: np.random.Generator, ranges: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """``(cpu, memory_mb)`` drawn from a group's ``random_capacity`` (None where it gives no range)."""
    cpu = None if ranges["cpu"] is None else _pick(rng, ranges["cpu"], 50.0)
    mem = None if ranges["memory_mb"] is None else _pick(rng, ranges["memory_mb"], 512.0)
    return cpu, mem


def check_ranges(table: Mapping[str, Any], keys: tuple[str, ...], path: str) -> list[tuple[str, str]]:
    """Each of ``keys`` is None or ``[low, high]`` with low <= high."""
    problems = []
    for key in keys:
        v = table[key]
        if v is not None and (len(v) != 2 or v[0] > v[1]):
            problems.append((f"{path}.{key}", f"expected [low, high] with low <= high, got {v!r}"))
    return problems
