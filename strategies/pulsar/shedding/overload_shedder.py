"""``OverloadShedder``: every broker at or above the overload threshold sheds enough to go below it.

Follows ``LB/impl/OverloadShedder.java``. Stateless. For each broker (``ConcurrentHashMap`` order):
``u = getMaxResourceUsage()`` — the newest **unweighted** max over CPU, direct memory and bandwidth in/out,
computed in float32 — is compared with ``T = loadBalancerBrokerOverloadedThresholdPercentage / 100``;
``u < T`` → not overloaded (so ``u == T`` sheds). The broker sheds ``(thrIn + thrOut) * (u - T + 0.05)``
bytes/s, largest short-term-throughput bundles first, always at least one, possibly overshooting;
brokers with 0 or 1 bundle shed nothing (Pulsar logs a warning). There is no minimum-throughput check and
underloaded brokers play no role.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..config import PulsarConfig
from ..load_data import LoadData
from .bundle_selection import select_largest_first
from .unload_plan import UnloadPlan

__all__ = ["OverloadShedder"]

_ADDITIONAL_THRESHOLD_PERCENT_MARGIN = 0.05


class OverloadShedder:
    """Pulsar's ``OverloadShedder`` (stateless)."""

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
        plan = self._plan
        plan.clear()
        overload_threshold = self.config["loadBalancerBrokerOverloadedThresholdPercentage"] / 100.0
        sheddable = None  # getBundleDataForLoadShedding(), computed on first need
        for broker in load.brokers_in_java_order():
            local = load.broker_data[broker].local_data
            current_usage = local.max_resource_usage()
            if current_usage < overload_threshold:
                continue
            percent_to_offload = current_usage - overload_threshold + _ADDITIONAL_THRESHOLD_PERCENT_MARGIN
            minimum_throughput_to_offload = (local.msg_throughput_in + local.msg_throughput_out) * percent_to_offload
            bundles = set(local.bundles)
            if len(bundles) > 1:
                if sheddable is None:
                    sheddable = load.get_bundle_data_for_load_shedding()
                select_largest_first(load, broker, bundles, minimum_throughput_to_offload, plan, sheddable)
        return plan.entries()
