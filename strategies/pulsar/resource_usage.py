"""Pulsar's ``ResourceUsage`` and the "max resource usage" helpers of ``LocalBrokerData``.

Units: ``usage`` and ``limit`` are in the resource's own unit (CPU: percent of one core; bandwidth: kbit/s;
memory and direct memory: MiB). ``percent_usage()`` is a percentage (0–100, more when usage exceeds the
limit); every ``max_*`` helper returns a fraction (1.0 = 100 %).

Java computes ``percentUsage()`` in ``float``: ``(float) usage / (float) limit * 100`` (float multiply),
0 when ``limit <= 0``, no clamping. The float result is widened to ``double`` wherever it is used, and
that rounding is visible in Pulsar's test expectations (30/100 → 30.000001907348633), so it is reproduced
here with ``numpy.float32``.

"Max resource usage" means three different things in Pulsar (reference §2):

* :func:`max_resource_usage_with_weight` — 4 arguments (CPU, direct memory, bandwidth in/out), what the
  newest modular strategies call; memory is ignored entirely. Each ``percentUsage() * weight`` is a
  float × double product, so the max is taken in double.
* :func:`max_resource_usage_with_weight_5` — the same plus memory (2.x shedders, extensible
  ``BrokerLoadData.weightedMaxEMA``).
* :func:`max_resource_usage` — unweighted; newest: CPU, direct memory, bandwidth in/out; ``include_memory``
  adds memory (2.x). Java passes the float percentages to its ``max(float...)`` overload and divides by
  the int 100 in float, so this one stays float32 until the very end.

The max helpers start at −∞ and keep an argument only when it is strictly greater, so NaN arguments
are ignored and an all-NaN call returns −∞ (exactly like Java; :func:`clusteremu.base.java.strict_max`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from clusteremu.base.java import float_divide, float_multiply, jackson_double_out, strict_max, strict_max_float, to_float

from .json_input import JsonObject

__all__ = [
    "ResourceUsage",
    "max_resource_usage",
    "max_resource_usage_with_weight",
    "max_resource_usage_with_weight_5",
    "weighted_max_4",
]

_F32_HUNDRED = np.float32(100.0)


@dataclass
class ResourceUsage:
    """One resource of a broker: ``usage`` out of ``limit`` (same unit for both)."""

    usage: float = 0.0
    limit: float = 0.0

    def percent_usage_f32(self) -> np.float32:
        """``percentUsage()`` as Java's float: float32 division, then float32 × 100; 0 if ``limit <= 0``."""
        return np.float32(self.percent_usage())

    def percent_usage(self) -> float:
        """``percentUsage()`` widened to double (a Python float), in percent (0–100, or more).

        Float32 arithmetic to the bit on plain floats (see :mod:`clusteremu.base.java.floats`): numpy scalars
        cost more than the rest of a broker's report check. A positive limit below float32's range divides by
        zero, as in Java."""
        proportion = 0.0
        if self.limit > 0:
            proportion = float_divide(to_float(self.usage), to_float(self.limit))
        return float_multiply(proportion, 100.0)

    def to_json(self) -> dict[str, Any]:
        """Pulsar's JSON shape ``{"usage": .., "limit": ..}``, doubles as Jackson writes them (``"NaN"``, ...)."""
        return {"usage": jackson_double_out(self.usage), "limit": jackson_double_out(self.limit)}

    @classmethod
    def from_json(cls, obj: Any, path: str) -> "ResourceUsage":
        """Read ``{"usage": .., "limit": ..}`` found at JSON path ``path`` (an absent or null field is 0); a bad
        value raises :class:`clusteremu.base.errors.InputError` naming its path."""
        r = JsonObject(obj, path, 'a ResourceUsage object ({"usage", "limit"})')
        return cls(r.number("usage"), r.number("limit"))


def _weighted_max(*weighted: tuple[ResourceUsage, float]) -> float:
    # float percentUsage() times a double weight is a double product, so the max is taken in double
    return strict_max(usage.percent_usage() * weight for usage, weight in weighted) / 100


def max_resource_usage_with_weight(
    cpu: ResourceUsage,
    direct_memory: ResourceUsage,
    bandwidth_in: ResourceUsage,
    bandwidth_out: ResourceUsage,
    cpu_weight: float,
    direct_memory_weight: float,
    bandwidth_in_weight: float,
    bandwidth_out_weight: float,
) -> float:
    """Newest 4-argument ``getMaxResourceUsageWithWeight``, as a fraction (memory is not considered)."""
    return _weighted_max(
        (cpu, cpu_weight),
        (direct_memory, direct_memory_weight),
        (bandwidth_in, bandwidth_in_weight),
        (bandwidth_out, bandwidth_out_weight),
    )


def max_resource_usage_with_weight_5(
    cpu: ResourceUsage,
    memory: ResourceUsage,
    direct_memory: ResourceUsage,
    bandwidth_in: ResourceUsage,
    bandwidth_out: ResourceUsage,
    cpu_weight: float,
    memory_weight: float,
    direct_memory_weight: float,
    bandwidth_in_weight: float,
    bandwidth_out_weight: float,
) -> float:
    """Old/extensible 5-argument ``getMaxResourceUsageWithWeight`` (memory included), as a fraction."""
    return _weighted_max(
        (cpu, cpu_weight),
        (memory, memory_weight),
        (direct_memory, direct_memory_weight),
        (bandwidth_in, bandwidth_in_weight),
        (bandwidth_out, bandwidth_out_weight),
    )


def max_resource_usage(
    cpu: ResourceUsage,
    direct_memory: ResourceUsage,
    bandwidth_in: ResourceUsage,
    bandwidth_out: ResourceUsage,
    memory: ResourceUsage | None = None,
) -> float:
    """Unweighted ``getMaxResourceUsage()`` as a fraction, computed in float32 like Java.

    Pass ``memory`` to get the 2.x variant that also considers heap memory; the newest code does not.
    """
    values = [cpu.percent_usage_f32()]
    if memory is not None:
        values.append(memory.percent_usage_f32())
    values += [direct_memory.percent_usage_f32(), bandwidth_in.percent_usage_f32(), bandwidth_out.percent_usage_f32()]
    with np.errstate(all="ignore"):
        return float(np.float32(strict_max_float(values) / _F32_HUNDRED))


def weighted_max_4(local_data: Mapping[str, Any], config: Mapping[str, Any]) -> float:
    """The newest 4-argument weighted max (fraction) of a ``LocalBrokerData`` given as Pulsar-named JSON.

    ``config`` holds ServiceConfiguration keys (a dict or a ``PulsarConfig``); missing weights take the
    newest defaults (CPU 1.0, direct memory 0, bandwidth 1.0) and the bandwidth weights follow the
    renamed-key rule (``loadBalancerBandwidthInResourceWeight`` unless it is 1.0, else the old
    ``loadBalancerBandwithInResourceWeight``). A convenience for callers holding report dicts
    (the emulator's brokers); strategies use ``LocalBrokerData.max_resource_usage_with_weight``.
    """

    def usage(name: str) -> ResourceUsage:
        raw = local_data.get(name) or {}
        return ResourceUsage(float(raw.get("usage", 0.0)), float(raw.get("limit", 0.0)))

    def renamed(new_key: str, old_key: str) -> float:
        new, old = float(config.get(new_key, 1.0)), float(config.get(old_key, 1.0))
        return new if new != 1.0 else (old if old != 1.0 else 1.0)

    return max_resource_usage_with_weight(
        usage("cpu"),
        usage("directMemory"),
        usage("bandwidthIn"),
        usage("bandwidthOut"),
        float(config.get("loadBalancerCPUResourceWeight", 1.0)),
        float(config.get("loadBalancerDirectMemoryResourceWeight", 0.0)),
        renamed("loadBalancerBandwidthInResourceWeight", "loadBalancerBandwithInResourceWeight"),
        renamed("loadBalancerBandwidthOutResourceWeight", "loadBalancerBandwithOutResourceWeight"),
    )
