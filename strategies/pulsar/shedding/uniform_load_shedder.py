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
   saturating at the int range, NaN → 0: :func:`clusteremu.base.java.double_to_int`). Nothing moves unless
   the overloaded broker has more than one bundle and the amount is ``>= minUnloadMessage`` (msg/s) or
   ``>= minUnloadMessageThroughput`` (bytes/s).
4. Its bundles, largest short-term metric first (stable), are taken when ``0 < metric <= remaining``;
   ``remaining`` is a Java ``MutableInt`` from which ``(int) metric`` is subtracted. A bundle that does not
   fit is skipped (the loop goes on). Once ``maxUnloadBundleNumPerShedding`` (``-1`` = unlimited) bundles
   are selected, the rest are skipped.

Version choices (documented departures from the team reference): Pulsar removed the ``+ 1000`` "delta"
slack on the remaining amount in PR #21906 (issue #21905, "UniformLoadShedder fails when the traffic is
less than 1000"), and the newest source read has no slack, so none is applied here. Zero-traffic bundles
are not taken: Pulsar's ``testFilterOutNonTrafficBundlesForUnloading`` (PR #21214) requires it, although
the newest source text in the index does not show the filter yet.

Explain hook (``explain``, see :mod:`..explain`): per broker its msg rate and throughput, then Pulsar's debug line
``"Found bundles for uniform load balancing. msgRate overloaded broker: {} with msgRate: {}, ..."`` and one
``"Found bundle to unload from {} with msgRate {}"`` per bundle taken.
"""
from __future__ import annotations

from clusteremu.base.java import INT_MAX, double_to_int, int_add

from ..explain import slf4j
from ..load_data import LoadData
from .bundle_selection import largest_first, short_term_msg_rate, short_term_throughput
from .stateless import StatelessShedder

__all__ = ["UniformLoadShedder"]

_EPS = 1e-6


class UniformLoadShedder(StatelessShedder):
    """Pulsar's ``UniformLoadShedder`` (stateless)."""

    def find_bundles_for_unloading(self, load: LoadData) -> list[tuple[str, str]]:
        """``findBundlesForUnloading``: (broker, bundle) pairs in Pulsar's order."""
        conf = self.config
        plan = self._cleared_plan()

        rate_overloaded: str | None = None
        throughput_overloaded: str | None = None
        max_rate = -1.0
        max_throughput = -1.0
        min_rate = float(INT_MAX)
        min_throughput = float(INT_MAX)
        rate_underloaded: str | None = None  # only logged
        throughput_underloaded: str | None = None
        explain = self.explain
        for broker in load.brokers_in_java_order():
            local = load.broker_data[broker].local_data
            rate = local.msg_rate_in + local.msg_rate_out
            throughput = local.msg_throughput_in + local.msg_throughput_out
            if explain is not None:
                explain.add(broker, "traffic", slf4j("{} msgRate: {}, msgThroughput: {}", broker, rate, throughput),
                            pulsar_log=False, msgRate=rate, msgThroughput=throughput)
            if rate > max_rate:
                rate_overloaded, max_rate = broker, rate
            if throughput > max_throughput:
                throughput_overloaded, max_throughput = broker, throughput
            if rate < min_rate:
                rate_underloaded, min_rate = broker, rate
            if throughput < min_throughput:
                throughput_underloaded, min_throughput = broker, throughput

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
        if explain is not None:
            explain.add(None, "difference", slf4j(
                "msgRateDifferencePercentage: {}% (threshold {}%), msgThroughputDifferenceRate: {} (threshold {})",
                rate_difference_percentage, rate_threshold, throughput_difference_rate, multiplier_threshold),
                pulsar_log=False, msgRateDifferencePercentage=rate_difference_percentage,
                loadBalancerMsgRateDifferenceShedderThreshold=rate_threshold,
                msgThroughputDifferenceRate=throughput_difference_rate,
                loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold=multiplier_threshold)
        if not (rate_exceeded or throughput_exceeded):
            if explain is not None:
                explain.add(None, "below-thresholds", "neither difference exceeds its threshold: nothing to unload",
                            pulsar_log=False)
            return plan.entries()

        max_unload_percentage = conf["maxUnloadPercentage"]
        if rate_exceeded:
            overloaded = rate_overloaded
            remaining = double_to_int((max_rate - min_rate) * max_unload_percentage)
            floor = conf["minUnloadMessage"]
            metric = short_term_msg_rate
        else:
            overloaded = throughput_overloaded
            remaining = double_to_int((max_throughput - min_throughput) * max_unload_percentage)
            floor = conf["minUnloadMessageThroughput"]
            metric = short_term_throughput
        if overloaded is None:
            return plan.entries()
        if explain is not None:
            if rate_exceeded:
                explain.add(overloaded, "msg-rate-overloaded", slf4j(
                    "Found bundles for uniform load balancing. msgRate overloaded broker: {} with msgRate: {}, "
                    "msgRate underloaded broker: {} with msgRate: {}, msgRateRequiredFromUnloadedBundles: {}",
                    overloaded, max_rate, rate_underloaded, min_rate, remaining),
                    msgRateRequiredFromUnloadedBundles=remaining, minUnloadMessage=floor)
            else:
                explain.add(overloaded, "throughput-overloaded", slf4j(
                    "Found bundles for uniform load balancing. msgThroughput overloaded broker: {} with msgThroughput "
                    "{}, msgThroughput underloaded broker: {} with msgThroughput: {}, "
                    "msgThroughputRequiredFromUnloadedBundles: {}",
                    overloaded, max_throughput, throughput_underloaded, min_throughput, remaining),
                    msgThroughputRequiredFromUnloadedBundles=remaining, minUnloadMessageThroughput=floor)

        bundles = set(load.broker_data[overloaded].local_data.bundles)
        if len(bundles) <= 1 or not remaining >= floor:
            if explain is not None:
                explain.add(overloaded, "too-few-bundles" if len(bundles) <= 1 else "below-min-unload", slf4j(
                    "{} has {} bundle(s) and {} to move against the minimum {}: nothing to unload", overloaded,
                    len(bundles), remaining, floor), pulsar_log=False)
            return plan.entries()

        cap = conf["maxUnloadBundleNumPerShedding"]
        for bundle, value in largest_first(load, bundles, metric):
            if cap != -1 and plan.size() >= cap:
                continue
            if 0 < value <= remaining:
                remaining = int_add(remaining, double_to_int(-value))
                plan.put(overloaded, bundle)
                if explain is not None:
                    explain.add(overloaded, "bundle", slf4j(
                        "Found bundle to unload from {} with msgRate {}" if rate_exceeded
                        else "Found bundle to unload from {} with msgThroughput {}", overloaded, value))
        return plan.entries()
