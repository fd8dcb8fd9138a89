"""Candidate bundles of a broker, and the largest-first pick of ThresholdShedder and OverloadShedder.

Candidates follow the stream every modular shedder builds: the entries of
``LoadData.getBundleDataForLoadShedding()`` (``HashMap`` order), restricted to the broker's reported
bundles, minus ``recentlyUnloadedBundles``, valued by a short-term metric, then stably sorted by
``Double.compare`` descending — so ties keep the ``HashMap`` order.
"""
from __future__ import annotations

from typing import Callable, Mapping

from clusteremu.base.java import double_compare_key

from ..load_data import BundleData, LoadData
from .unload_plan import UnloadPlan

__all__ = ["largest_first", "select_largest_first", "short_term_msg_rate", "short_term_throughput"]


def short_term_throughput(data: BundleData) -> float:
    """Short-term ``msgThroughputIn + msgThroughputOut`` (bytes/s)."""
    return data.short_term_data.msg_throughput_in + data.short_term_data.msg_throughput_out


def short_term_msg_rate(data: BundleData) -> float:
    """Short-term ``msgRateIn + msgRateOut`` (msg/s)."""
    return data.short_term_data.msg_rate_in + data.short_term_data.msg_rate_out


def largest_first(
    load: LoadData,
    broker_bundles: set[str],
    metric: Callable[[BundleData], float],
    sheddable: Mapping[str, BundleData] | None = None,
) -> list[tuple[str, float]]:
    """``(bundle, metric)`` of the broker's sheddable bundles, largest metric first (stable).

    ``sheddable`` is ``load.get_bundle_data_for_load_shedding()`` when the caller already has it (it is
    recomputed otherwise; computing it once per shedding call keeps large clusters fast).
    """
    if sheddable is None:
        sheddable = load.get_bundle_data_for_load_shedding()
    # Values are read only for the broker's own bundles: the others may be many and made on read.
    candidates = [
        (bundle, metric(sheddable[bundle]))
        for bundle in sheddable
        if bundle in broker_bundles and bundle not in load.recently_unloaded_bundles
    ]
    return sorted(candidates, key=lambda item: double_compare_key(item[1]), reverse=True)


def select_largest_first(
    load: LoadData,
    broker: str,
    broker_bundles: set[str],
    minimum_throughput_to_offload: float,
    plan: UnloadPlan,
    sheddable: Mapping[str, BundleData] | None = None,
) -> None:
    """``filterAndSelectBundle``: take bundles by short-term throughput, largest first, while the total
    taken is below ``minimum_throughput_to_offload`` (bytes/s) — always at least one; may overshoot."""
    marked = 0.0
    selected = False
    for bundle, throughput in largest_first(load, broker_bundles, short_term_throughput, sheddable):
        if marked < minimum_throughput_to_offload or not selected:
            plan.put(broker, bundle)
            marked += throughput
            selected = True
