"""``ThresholdShedder``: shed from brokers whose usage history exceeds the cluster average by a margin.

Follows ``LB/impl/ThresholdShedder.java`` (the version with the lower-boundary pass and without the
">100 % clipping" some 2.10/2.11 builds had; Pulsar's ``testBrokerReachThreshold`` only passes without it):

1. For **every** broker (``ConcurrentHashMap`` order) the usage history is updated:
   ``hist = u`` for a broker seen for the first time, else ``hist * H + (1 - H) * u`` with
   ``H = loadBalancerHistoryResourcePercentage`` and ``u`` the 5-argument weighted max resource usage
   (fraction). ``avg`` is the mean of the histories (summed in map order); ``avg == 0`` → nothing.
2. A broker is overloaded when ``hist >= avg + threshold`` (``threshold =
   loadBalancerBrokerThresholdShedderPercentage / 100``). It must shed ``(thrIn + thrOut) *
   (hist - avg - threshold + 0.05)`` bytes/s; less than ``loadBalancerBundleUnloadMinThroughputThreshold``
   MiB/s → skipped; a broker with 0 or 1 bundle → skipped (Pulsar only logs a warning).
3. Bundles are taken largest short-term throughput first while the amount taken is below the target,
   always at least one (:func:`.bundle_selection.select_largest_first`).
4. If nothing was selected and ``lowerBoundarySheddingEnabled``: the average is recomputed — which
   updates every history **a second time** — then the broker with the highest history above
   ``avg - threshold`` and with more than one bundle (first in map order on ties) sheds
   ``(thrIn + thrOut) * threshold * 0.5``, provided some broker sits below ``avg - threshold`` and the
   minimum-throughput threshold is not greater than that amount.

NaN and infinite usages behave as in Java: NaN signals are ignored by the max; a ``+inf`` usage makes the
average ``+inf`` and the offload fraction NaN, which passes every comparison and selects exactly one bundle.

Reading of the code (documented choices): the weighted max is the 5-argument one (memory included with
``loadBalancerMemoryResourceWeight``, 0 by default), as in the ThresholdShedder source read; the
bandwidth weights use the renamed-key rule of :class:`..config.PulsarConfig`. The
``atLeastOneBundleSelected`` key is not consulted: the code read uses a local "at least one" flag.
State: ``brokerAvgResourceUsage`` {broker: history fraction}, never pruned (as in Java).

Explain hook: with :attr:`ThresholdShedder.explain` set to a :class:`..explain.Explain`, each step is recorded with
the line Pulsar logs there (``"{} broker load: historyUsage={}%, resourceUsage={}%"``, ``"brokers' resource
avgUsage:{}%"``, ``"Attempting to shed load on {}, which has max resource usage above avgUsage  and threshold
{}% > {}% + {}% ..."``, the lower-boundary lines); the decisions do not depend on it.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..config import PulsarConfig
from ..explain import Explain, explain_few_bundles, percent, slf4j
from ..load_data import BundleData, LoadData
from .bundle_selection import select_largest_first
from .unload_plan import UnloadPlan

__all__ = ["ThresholdShedder"]

_ADDITIONAL_THRESHOLD_PERCENT_MARGIN = 0.05
_LOWER_BOUNDARY_THRESHOLD_MARGIN = 0.5
_MB = 1024.0 * 1024.0


class ThresholdShedder:
    """Pulsar's ``ThresholdShedder`` (stateful: per-broker usage history)."""

    def __init__(self, config: PulsarConfig, rng: np.random.Generator | None = None) -> None:
        self.config = config
        self.broker_avg_resource_usage: dict[str, float] = {}
        self._plan = UnloadPlan()
        #: set to an Explain to record why (see the module docstring); None: nothing is recorded
        self.explain: Explain | None = None

    # --- state
    def get_state(self) -> dict[str, Any]:
        """``{"brokerAvgResourceUsage": {broker: fraction}}``."""
        return {"brokerAvgResourceUsage": dict(self.broker_avg_resource_usage)}

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`get_state` returned."""
        self.broker_avg_resource_usage = {
            str(k): float(v) for k, v in dict(state.get("brokerAvgResourceUsage", {})).items()
        }

    # --- shedding
    def find_bundles_for_unloading(self, load: LoadData) -> list[tuple[str, str]]:
        """``findBundlesForUnloading``: (broker, bundle) pairs in Pulsar's order."""
        conf = self.config
        plan = self._plan
        plan.clear()
        threshold = conf["loadBalancerBrokerThresholdShedderPercentage"] / 100.0
        min_throughput_threshold = conf["loadBalancerBundleUnloadMinThroughputThreshold"] * _MB

        avg_usage = self._broker_avg_usage(load)
        explain = self.explain
        if explain is not None:
            explain.add(None, "average", slf4j("brokers' resource avgUsage:{}%", percent(avg_usage)),
                        avgUsage=avg_usage, threshold=threshold, minThroughputThreshold=min_throughput_threshold)
        if avg_usage == 0:
            if explain is not None:
                explain.add(None, "average-zero", "average max resource usage is 0")
            return plan.entries()
        sheddable = load.get_bundle_data_for_load_shedding()

        for broker in load.brokers_in_java_order():
            local = load.broker_data[broker].local_data
            current_usage = self.broker_avg_resource_usage.get(broker, 0.0)
            if current_usage < avg_usage + threshold:
                if explain is not None:
                    explain.add(broker, "not-overloaded", slf4j(
                        "[{}] broker is not overloaded, ignoring at this point, currentUsage:{}%",
                        broker, percent(current_usage)), currentUsage=current_usage)
                continue
            percent_to_offload = current_usage - avg_usage - threshold + _ADDITIONAL_THRESHOLD_PERCENT_MARGIN
            broker_throughput = local.msg_throughput_in + local.msg_throughput_out
            minimum_throughput_to_offload = broker_throughput * percent_to_offload
            if minimum_throughput_to_offload < min_throughput_threshold:
                if explain is not None:
                    explain.add(broker, "below-min-throughput", slf4j(
                        "[{}] broker is planning to shed throughput {} MByte/s less than "
                        "minimumThroughputThreshold {} MByte/s, skipping bundle unload.",
                        broker, minimum_throughput_to_offload / _MB, min_throughput_threshold / _MB),
                        currentUsage=current_usage, minimumThroughputToOffload=minimum_throughput_to_offload)
                continue
            bundles = set(local.bundles)
            if explain is not None:
                explain.add(broker, "overloaded", slf4j(
                    "Attempting to shed load on {}, which has max resource usage above avgUsage  and threshold {}%"
                    " > {}% + {}% -- Offloading at least {} MByte/s of traffic, left throughput {} MByte/s",
                    broker, 100 * current_usage, 100 * avg_usage, 100 * threshold, minimum_throughput_to_offload / _MB,
                    (broker_throughput - minimum_throughput_to_offload) / _MB),
                    currentUsage=current_usage, minimumThroughputToOffload=minimum_throughput_to_offload)
                explain_few_bundles(explain, broker, local.bundles)
            if len(bundles) > 1:
                select_largest_first(load, broker, bundles, minimum_throughput_to_offload, plan, sheddable)

        if plan.is_empty() and conf["lowerBoundarySheddingEnabled"]:
            self._try_lower_boundary_shedding(load, sheddable)
        return plan.entries()

    def _broker_avg_usage(self, load: LoadData) -> float:
        total = 0.0
        count = 0
        for broker in load.brokers_in_java_order():
            total += self._update_avg_resource_usage(broker, load)
            count += 1
        return total / count if count > 0 else 0.0

    def _update_avg_resource_usage(self, broker: str, load: LoadData) -> float:
        history_percentage = self.config["loadBalancerHistoryResourcePercentage"]
        usage = load.broker_data[broker].local_data.max_resource_usage_with_weight_5(*self.config.resource_weights_5())
        history = self.broker_avg_resource_usage.get(broker)
        if self.explain is not None:
            self.explain.add(broker, "load", slf4j("{} broker load: historyUsage={}%, resourceUsage={}%", broker,
                                                   0 if history is None else percent(history), percent(usage)),
                             historyUsage=history, resourceUsage=usage)
        history = usage if history is None else history * history_percentage + (1 - history_percentage) * usage
        self.broker_avg_resource_usage[broker] = history
        return history

    def _try_lower_boundary_shedding(self, load: LoadData, sheddable: Mapping[str, BundleData]) -> None:
        conf = self.config
        threshold = conf["loadBalancerBrokerThresholdShedderPercentage"] / 100.0
        avg_usage = self._broker_avg_usage(load)  # updates every history again, as Java does

        max_usage_broker = ""
        max_usage = avg_usage - threshold
        has_broker_below_lower_bound = False
        for broker in load.brokers_in_java_order():
            current_usage = self.broker_avg_resource_usage.get(broker, 0.0)
            if current_usage > max_usage and len(set(load.broker_data[broker].local_data.bundles)) > 1:
                max_usage = current_usage
                max_usage_broker = broker
            if current_usage < avg_usage - threshold:
                has_broker_below_lower_bound = True

        broker_data = load.broker_data.get(max_usage_broker)
        explain = self.explain
        if broker_data is None:
            if explain is not None:
                explain.add(None, "lower-boundary-none", "Load data is null or bundle <=1, skipping bundle unload.",
                            avgUsage=avg_usage)
            return
        if not has_broker_below_lower_bound:
            if explain is not None:
                explain.add(max_usage_broker, "lower-boundary-none-below", slf4j(
                    "No broker is below the lower bound, threshold is {}, avgUsage usage is {}, max usage of Broker {} "
                    "is {}", threshold, avg_usage, max_usage_broker,
                    self.broker_avg_resource_usage.get(max_usage_broker, 0.0)), avgUsage=avg_usage)
            return
        local = broker_data.local_data
        broker_throughput = local.msg_throughput_in + local.msg_throughput_out
        minimum_throughput_to_offload = broker_throughput * threshold * _LOWER_BOUNDARY_THRESHOLD_MARGIN
        min_throughput_threshold = conf["loadBalancerBundleUnloadMinThroughputThreshold"] * _MB
        if min_throughput_threshold > minimum_throughput_to_offload:
            if explain is not None:
                explain.add(max_usage_broker, "lower-boundary-below-min-throughput", slf4j(
                    "broker {} in lower boundary shedding is planning to shed throughput {} MByte/s less than "
                    "minimumThroughputThreshold {} MByte/s, skipping bundle unload.", max_usage_broker,
                    minimum_throughput_to_offload / _MB, min_throughput_threshold / _MB),
                    avgUsage=avg_usage, minimumThroughputToOffload=minimum_throughput_to_offload)
            return
        if explain is not None:  # Pulsar logs nothing here: the line below is ours
            explain.add(max_usage_broker, "lower-boundary", slf4j(
                "lowerBoundarySheddingEnabled: {} has the highest usage {}% above avgUsage {}% - threshold {}% and a "
                "broker is below it -- Offloading at least {} MByte/s of traffic", max_usage_broker,
                100 * self.broker_avg_resource_usage.get(max_usage_broker, 0.0), 100 * avg_usage, 100 * threshold,
                minimum_throughput_to_offload / _MB), pulsar_log=False,
                avgUsage=avg_usage, minimumThroughputToOffload=minimum_throughput_to_offload)
        select_largest_first(
            load, max_usage_broker, set(local.bundles), minimum_throughput_to_offload, self._plan, sheddable
        )

