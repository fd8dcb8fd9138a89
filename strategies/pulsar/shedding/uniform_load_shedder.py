"""``UniformLoadShedder``: move load from the busiest to the idlest broker by msg rate or throughput.

Follows the newest ``LB/impl/UniformLoadShedder.java``. Stateless. Per call:

1. Over all brokers (``ConcurrentHashMap`` order) with strict comparisons (first broker wins ties):
   the max and min of ``msgRateIn + msgRateOut`` and of ``msgThroughputIn + msgThroughputOut``; maxima
   start at -1, minima at ``Integer.MAX_VALUE`` (2147483647.0) — so if every broker's throughput exceeds
   that, the minimum is never updated. A minimum within ±1e-6 of 0 becomes 1.0 (the EPS fix).
2. ``rate % = (maxRate - minRate) * 100 / minRate`` and ``multiplier = maxThr / minThr`` are compared
   strictly (``>``) with ``loadBalancerMsgRateDifferenceShedderThreshold`` and
   ``loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold``; a threshold ``<= 0`` disables its
   rule. When both fire, the msg-rate rule wins; the two rules may name different "overloaded" brokers.
3. The amount to move is Java's ``(int)((max - min) * maxUnloadPercentage)`` (truncation toward zero,
   saturating at the int range, NaN → 0). Nothing moves unless the overloaded broker has more than one
   bundle and the amount is ``>= minUnloadMessage`` (msg/s) or ``>= minUnloadMessageThroughput``
   (bytes/s).
4. Its bundles, largest short-term metric first (stable), are taken when ``0 < metric <= remaining``;
   ``remaining`` is a Java ``MutableInt`` from which ``(int) metric`` is subtracted. A bundle that does not
   fit is skipped (the loop goes on). Once ``maxUnloadBundleNumPerShedding`` (``-1`` = unlimited) bundles
   are selected, the rest are skipped.

Version choices (documented departures from the team reference): Pulsar removed the ``+ 1000`` "delta"
slack on the remaining amount in PR #21906 (issue #21905, "UniformLoadShedder fails when the traffic is
less than 1000"), and the newest source read has no slack, so none is applied here. Zero-traffic bundles
are not taken: Pulsar's ``testFilterOutNonTrafficBundlesForUnloading`` (PR #21214) requires it, although
the newest source text in the index does not show the filter yet.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..config import PulsarConfig
from ..load_data import LoadData
from .bundle_selection import largest_first, short_term_msg_rate, short_term_throughput
from .unload_plan import UnloadPlan

__all__ = ["UniformLoadShedder", "java_double_to_int", "java_int_add"]

_EPS = 1e-6
_INT_MAX = 2**31 - 1
_INT_MIN = -(2**31)


def java_double_to_int(value: float) -> int:
    """Java's ``(int) value``: NaN → 0, truncation toward zero, saturation at the int range."""
    if value != value:
        return 0
    if value >= _INT_MAX:
        return _INT_MAX
    if value <= _INT_MIN:
        return _INT_MIN
    return int(value)


def java_int_add(a: int, b: int) -> int:
    """Java ``int`` addition (wraps around on overflow)."""
    return ((a + b + 2**31) % 2**32) - 2**31


class UniformLoadShedder:
    """Pulsar's ``UniformLoadShedder`` (stateless)."""

    def __init__(self, config: PulsarConfig, rng: np.random.Generator | None = None) -> None:
        self.config = config
        self._plan = UnloadPlan()

    def get_state(self) -> dict[str, Any]:
        """No carried state: ``{}``."""
        return {}

    def set_state(self, state: dict[str, Any]) -> None:
        """Nothing to restore."""

    def find_bundles_for_unloading(self, load: LoadData) -> list[tuple[str, str]]:
        """``findBundlesForUnloading``: (broker, bundle) pairs in Pulsar's order."""
        conf = self.config
        plan = self._plan
        plan.clear()

        rate_overloaded: str | None = None
        throughput_overloaded: str | None = None
        max_rate = -1.0
        max_throughput = -1.0
        min_rate = float(_INT_MAX)
        min_throughput = float(_INT_MAX)
        for broker in load.brokers_in_java_order():
            local = load.broker_data[broker].local_data
            rate = local.msg_rate_in + local.msg_rate_out
            throughput = local.msg_throughput_in + local.msg_throughput_out
            if rate > max_rate:
                rate_overloaded, max_rate = broker, rate
            if throughput > max_throughput:
                throughput_overloaded, max_throughput = broker, throughput
            if rate < min_rate:
                min_rate = rate
            if throughput < min_throughput:
                min_throughput = throughput

        if -_EPS <= min_rate <= _EPS:
            min_rate = 1.0
        if -_EPS <= min_throughput <= _EPS:
            min_throughput = 1.0
        rate_difference_percentage = (max_rate - min_rate) * 100 / min_rate
        throughput_difference_rate = max_throughput / min_throughput

        rate_threshold = conf["loadBalancerMsgRateDifferenceShedderThreshold"]
        multiplier_threshold = conf["loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold"]
        rate_exceeded = rate_threshold > 0 and rate_difference_percentage > rate_threshold
        throughput_exceeded = multiplier_threshold > 0 and throughput_difference_rate > multiplier_threshold
        if not (rate_exceeded or throughput_exceeded):
            return plan.entries()

        max_unload_percentage = conf["maxUnloadPercentage"]
        if rate_exceeded:
            overloaded = rate_overloaded
            remaining = java_double_to_int((max_rate - min_rate) * max_unload_percentage)
            floor = conf["minUnloadMessage"]
            metric = short_term_msg_rate
        else:
            overloaded = throughput_overloaded
            remaining = java_double_to_int((max_throughput - min_throughput) * max_unload_percentage)
            floor = conf["minUnloadMessageThroughput"]
            metric = short_term_throughput
        if overloaded is None:
            return plan.entries()

        bundles = set(load.broker_data[overloaded].local_data.bundles)
        if len(bundles) <= 1 or not remaining >= floor:
            return plan.entries()

        cap = conf["maxUnloadBundleNumPerShedding"]
        for bundle, value in largest_first(load, bundles, metric):
            if cap != -1 and plan.size() >= cap:
                continue
            if 0 < value <= remaining:
                remaining = java_int_add(remaining, java_double_to_int(-value))
                plan.put(overloaded, bundle)
        return plan.entries()
