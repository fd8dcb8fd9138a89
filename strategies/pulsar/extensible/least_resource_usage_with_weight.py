"""``LeastResourceUsageWithWeight`` of the extensible load manager: place a bundle on a broker whose load is
clearly below the candidates' average.

Follows ``EXT/strategy/LeastResourceUsageWithWeight.java``. Unlike the modular strategy of the same name it
keeps no history of its own: a broker's load is its ``weightedMaxEMA`` from the load-data store (a fraction,
1.0 = 100 %), which the broker already smooths (:mod:`.broker_load_data`).

:meth:`LeastResourceUsageWithWeight.select_broker`:

1. no candidates → ``None``;
2. the candidates with load data are averaged (candidates without load data are left out of the average);
3. the best brokers are those with load data and
   ``load + loadBalancerAverageResourceUsageDifferenceThresholdPercentage/100 <= avg``, in candidate order;
4. if there is none, **every** candidate is eligible — including those without load data;
5. one of them is drawn uniformly with ``rng.integers(len)`` (Java's ``ThreadLocalRandom.nextInt``).

Iteration order decides which list index a draw hits. ``candidates`` given as a sequence (list, tuple, dict
keys) are iterated as given; a ``set``/``frozenset`` has no order of its own, so it is iterated as Java's
``HashSet`` of those names would be (as when Pulsar's tests pass a ``HashSet``), which keeps runs
reproducible.

Departures: Pulsar only logs (a warning when a load is above
``loadBalancerBrokerOverloadedThresholdPercentage``); nothing is logged here. Java's random source is
replaced by the strategy's ``numpy.random.Generator``, so the broker drawn among equals differs from a
real broker's draw (the set it is drawn from does not).
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np

from clusteremu.base.java import java_order, string_compare_key

from ..config import PulsarConfig, as_config
from .broker_load_data import BrokerLoadData

__all__ = ["LeastResourceUsageWithWeight"]


def _candidate_order(candidates: Iterable[str]) -> list[str]:
    if isinstance(candidates, (set, frozenset)):
        return java_order(sorted(candidates, key=string_compare_key), "hashmap")
    return list(candidates)


class LeastResourceUsageWithWeight:
    """Pulsar's extensible-LM ``LeastResourceUsageWithWeight`` placement strategy (stateless).

    ``LeastResourceUsageWithWeight(config, rng)``: ``config`` holds ServiceConfiguration keys (missing keys
    take Pulsar's defaults), ``rng`` makes every random choice.
    """

    def __init__(
        self, config: Mapping[str, Any] | PulsarConfig | None = None, rng: np.random.Generator | None = None
    ) -> None:
        self.config = as_config(config)
        self.rng = rng if rng is not None else np.random.default_rng(0)

    def get_state(self) -> dict[str, Any]:
        """``{}``: the strategy carries nothing across calls."""
        return {}

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Nothing to restore."""

    def select_broker(self, candidates: Iterable[str], bundle: str, context: Any) -> str | None:
        """Pick a broker for ``bundle`` among ``candidates`` (see the module docstring), or ``None``.

        ``context`` gives the load-data store: a :class:`.TransferContext` (or any object with a
        ``broker_load_data_store`` mapping and optionally a ``config`` override) or the mapping
        broker → :class:`.BrokerLoadData` itself.
        """
        store, conf = self._store_and_config(context)
        brokers = _candidate_order(candidates)
        if not brokers:
            return None

        total_usage = 0.0
        no_load_data: set[str] = set()
        for broker in brokers:
            data = store.get(broker)
            if data is None:
                no_load_data.add(broker)
                continue
            total_usage += data.weighted_max_ema

        best: list[str] = []
        if len(brokers) > len(no_load_data):
            avg_usage = total_usage / (len(brokers) - len(no_load_data))
            diff_threshold = conf["loadBalancerAverageResourceUsageDifferenceThresholdPercentage"] / 100.0
            for broker in brokers:
                data = store.get(broker)
                if data is None:
                    continue
                if data.weighted_max_ema + diff_threshold <= avg_usage and broker not in no_load_data:
                    best.append(broker)

        if not best:
            # Every broker looks loaded (or none reported): fall back to any candidate at all.
            best = list(brokers)
        return best[int(self.rng.integers(len(best)))]

    def _store_and_config(self, context: Any) -> tuple[Mapping[str, BrokerLoadData], PulsarConfig]:
        if isinstance(context, Mapping):
            return context, self.config
        store = getattr(context, "broker_load_data_store")
        override = getattr(context, "config", None)
        return store, self.config if override is None else as_config(override)
