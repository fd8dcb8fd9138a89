"""``LeastResourceUsageWithWeight``: place a bundle on a broker clearly below the candidates' average usage.

Follows the newest ``LB/impl/LeastResourceUsageWithWeight.java`` (reference §8.2) — the modular load
manager's strategy, not the extensible one in ``extensions/strategy``.

API::

    s = LeastResourceUsageWithWeight(config, rng)
    s.select_broker(candidates, bundle, load)   # -> broker id, or None when there is no candidate
    s.select(candidates, bundle, load)          # -> BrokerChoice (broker, best, random_fallback)
    s.on_active_brokers_change(active)          # forget the history of brokers that left
    s.get_state() / s.set_state(state)          # {"brokerAvgResourceUsageWithWeight": {broker: fraction}}

Per call, with ``H = loadBalancerHistoryResourcePercentage``:

1. No candidates → ``None`` (nothing is updated).
2. For each candidate in order (only candidates: other brokers' history is left as it is):
   ``u`` = 4-argument weighted max resource usage (fraction; CPU, direct memory, bandwidth in/out with the
   configured weights, float32 percentages, NaN signals ignored, above 100 % kept). Its history becomes ``u``
   if it has none, or if the broker reports no bundles or a zero message rate in and out (a restarted or
   idle broker must not be judged by its past); else ``old * H + (1 - H) * u``. A candidate without broker
   data raises ``KeyError`` (Java: ``NullPointerException``) after the earlier candidates were updated.
3. ``avg`` = sum of the candidates' histories (in candidate order) / number of candidates.
4. ``best`` = candidates with ``history.get(b, 1.0) + loadBalancerAverageResourceUsageDifferenceThresholdPercentage / 100
   <= avg`` (so at least that many points below the average; equality qualifies).
5. ``best`` empty → all candidates ("Assign randomly as all brokers are overloaded"). The broker is
   ``best[rng.integers(len(best))]``.

Because the threshold is measured against the average of the candidates, a low broker among high ones is
always found, but when the brokers' histories are close (the EMA starts from the first sample and moves by
``1 - H`` per call) nobody is 10 points under the average and placement is uniformly random — the
"over-loading" problem described in the AvgShedder article.

Weights: the bandwidth weights follow the renamed-key rule of ``PulsarConfig.resource_weights()``
(``loadBalancerBandwidth*ResourceWeight`` unless 1.0, else the old ``loadBalancerBandwith*`` spelling). One
Pulsar version of this class reads the old-spelling getters directly, which ignores the new keys; the
newest load manager code uses the rule, so this does too.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np

from ..config import PulsarConfig, as_config
from ..load_data import BrokerData, LoadData
from .strategy import BrokerChoice, unique_candidates

__all__ = ["LeastResourceUsageWithWeight"]

#: Usage assumed for a candidate without history (``MAX_RESOURCE_USAGE``).
MAX_RESOURCE_USAGE = 1.0


class LeastResourceUsageWithWeight:
    """Pulsar's modular ``LeastResourceUsageWithWeight`` placement strategy (stateful)."""

    def __init__(self, config: PulsarConfig | Mapping[str, Any] | None = None, rng: np.random.Generator | None = None) -> None:
        self.config = as_config(config)
        self.rng = rng if rng is not None else np.random.default_rng(0)
        #: broker → EMA of its weighted max resource usage (fraction), ``brokerAvgResourceUsageWithWeight``.
        self.broker_avg_resource_usage_with_weight: dict[str, float] = {}

    # --- state
    def get_state(self) -> dict[str, Any]:
        return {"brokerAvgResourceUsageWithWeight": dict(self.broker_avg_resource_usage_with_weight)}

    def set_state(self, state: dict[str, Any]) -> None:
        history = state.get("brokerAvgResourceUsageWithWeight", {})
        self.broker_avg_resource_usage_with_weight = {str(b): float(u) for b, u in history.items()}

    def on_active_brokers_change(self, active_brokers: Iterable[str]) -> None:
        """``onActiveBrokersChange``: drop the history of brokers that are no longer active."""
        active = set(active_brokers)
        for broker in [b for b in self.broker_avg_resource_usage_with_weight if b not in active]:
            del self.broker_avg_resource_usage_with_weight[broker]

    # --- selection
    def _update_and_get(self, broker: str, data: BrokerData) -> float:
        """``updateAndGetMaxResourceUsageWithWeight``: fold the current usage into the broker's history."""
        history_percentage = self.config["loadBalancerHistoryResourcePercentage"]
        history = self.broker_avg_resource_usage_with_weight.get(broker)
        local = data.local_data
        if len(set(local.bundles)) == 0 or (local.msg_rate_in == 0 and local.msg_rate_out == 0):
            history = None
        usage = local.max_resource_usage_with_weight(*self.config.resource_weights())
        history = usage if history is None else history * history_percentage + (1 - history_percentage) * usage
        self.broker_avg_resource_usage_with_weight[broker] = history
        return history

    def select(self, candidates: Iterable[str], bundle: str, load: LoadData) -> BrokerChoice:
        """The choice with the brokers it was drawn from (see the module docstring)."""
        cands = unique_candidates(candidates)
        if not cands:
            return BrokerChoice(None)
        total = 0.0
        for broker in cands:
            data = load.broker_data.get(broker)
            if data is None:
                raise KeyError(f"no broker data for candidate {broker!r}")
            total += self._update_and_get(broker, data)
        avg = total / len(cands)
        diff_threshold = self.config["loadBalancerAverageResourceUsageDifferenceThresholdPercentage"] / 100.0
        history = self.broker_avg_resource_usage_with_weight
        best = [b for b in cands if history.get(b, MAX_RESOURCE_USAGE) + diff_threshold <= avg]
        fallback = not best
        if fallback:
            best = list(cands)
        broker = best[int(self.rng.integers(len(best)))]
        return BrokerChoice(broker, tuple(best), fallback)

    def select_broker(self, candidates: Iterable[str], bundle: str, load: LoadData) -> str | None:
        """``selectBroker``: a broker at least the threshold below the candidates' average usage, else any."""
        return self.select(candidates, bundle, load).broker

