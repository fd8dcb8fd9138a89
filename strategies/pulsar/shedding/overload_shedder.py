"""``OverloadShedder``: every broker at or above the overload threshold sheds enough to go below it.

Follows ``LB/impl/OverloadShedder.java``. Stateless. For each broker (``ConcurrentHashMap`` order):
``u = getMaxResourceUsage()`` — the newest **unweighted** max over CPU, direct memory and bandwidth in/out,
computed in float32 — is compared with ``T = loadBalancerBrokerOverloadedThresholdPercentage / 100``;
``u < T`` → not overloaded (so ``u == T`` sheds). The broker sheds ``(thrIn + thrOut) * (u - T + 0.05)``
bytes/s, largest short-term-throughput bundles first, always at least one, possibly overshooting;
brokers with 0 or 1 bundle shed nothing (Pulsar logs a warning). There is no minimum-throughput check and
underloaded brokers play no role.

Explain hook (``explain``, see :mod:`..explain`): Pulsar's lines ``"[{}] Broker is not overloaded, ignoring at this
point ({})"`` and ``"Attempting to shed load on {}, which has resource usage {}% above threshold {}% -- Offloading at
least {} MByte/s of traffic ({})"``.
"""
from __future__ import annotations

from ..explain import explain_few_bundles, slf4j
from ..load_data import LoadData
from .bundle_selection import select_largest_first
from .stateless import StatelessShedder

__all__ = ["OverloadShedder"]

_ADDITIONAL_THRESHOLD_PERCENT_MARGIN = 0.05


class OverloadShedder(StatelessShedder):
    """Pulsar's ``OverloadShedder`` (stateless)."""

    def find_bundles_for_unloading(self, load: LoadData) -> list[tuple[str, str]]:
        """``findBundlesForUnloading``: (broker, bundle) pairs in Pulsar's order."""
        plan = self._cleared_plan()
        overload_threshold = self.config["loadBalancerBrokerOverloadedThresholdPercentage"] / 100.0
        sheddable = None  # getBundleDataForLoadShedding(), computed on first need
        for broker in load.brokers_in_java_order():
            local = load.broker_data[broker].local_data
            current_usage = local.max_resource_usage()
            explain = self.explain
            if current_usage < overload_threshold:
                if explain is not None:
                    explain.add(broker, "not-overloaded", slf4j(
                        "[{}] Broker is not overloaded, ignoring at this point ({})", broker,
                        local.print_resource_usage()), currentUsage=current_usage, overloadThreshold=overload_threshold)
                continue
            percent_to_offload = current_usage - overload_threshold + _ADDITIONAL_THRESHOLD_PERCENT_MARGIN
            minimum_throughput_to_offload = (local.msg_throughput_in + local.msg_throughput_out) * percent_to_offload
            bundles = set(local.bundles)
            if explain is not None:
                explain.add(broker, "overloaded", slf4j(
                    "Attempting to shed load on {}, which has resource usage {}% above threshold {}%"
                    " -- Offloading at least {} MByte/s of traffic ({})", broker, 100 * current_usage,
                    100 * overload_threshold, minimum_throughput_to_offload / 1024 / 1024,
                    local.print_resource_usage()), currentUsage=current_usage, overloadThreshold=overload_threshold,
                    minimumThroughputToOffload=minimum_throughput_to_offload)
                explain_few_bundles(explain, broker, local.bundles)
            if len(bundles) > 1:
                if sheddable is None:
                    sheddable = load.get_bundle_data_for_load_shedding()
                select_largest_first(load, broker, bundles, minimum_throughput_to_offload, plan, sheddable)
        return plan.entries()
