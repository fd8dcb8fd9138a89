"""The leader's bundle history (``ModularLoadManagerImpl.updateBundleData``), kept across reports.

On every ``updateAll`` — i.e. whenever any broker's report is written — the leader walks the brokers
(``ConcurrentHashMap`` order) and, for every bundle in each broker's ``lastStats``, folds the stats into
that bundle's short- and long-term averages (:meth:`TimeAverageMessageData.update`); a bundle seen for
the first time starts from the default stats (50 msg/s, 50000 B/s, in and out) with 0 samples, so its
first sample replaces them. Bundles that no broker reports any more are dropped. A bundle reported by two
brokers gets two samples, as in Pulsar.

Departure: Pulsar first tries to load a new bundle's history from the metadata store (written every
``loadBalancerResourceQuotaUpdateIntervalMinutes``); this history only has what it has seen itself.
"""
from __future__ import annotations

from typing import Any, Mapping

from .java_order import java_order
from .load_data import BundleData, NamespaceBundleStats, default_bundle_stats

__all__ = ["BundleHistory"]


class BundleHistory:
    """Bundle name → :class:`BundleData`, updated from brokers' ``LocalBrokerData`` reports (JSON dicts)."""

    def __init__(self) -> None:
        self.bundles: dict[str, BundleData] = {}

    def update_all(self, reports: Mapping[str, Mapping[str, Any]]) -> None:
        """Fold one sample per reported bundle from ``reports`` ({broker: LocalBrokerData JSON})."""
        active: set[str] = set()
        for broker in java_order(reports, "concurrent"):
            last_stats = reports[broker].get("lastStats") or {}
            for bundle, raw in last_stats.items():
                active.add(bundle)
                stats = NamespaceBundleStats.from_json(raw, f'brokerData["{broker}"].localData.lastStats["{bundle}"]')
                data = self.bundles.get(bundle)
                if data is None:
                    data = BundleData.with_default_stats()
                    self.bundles[bundle] = data
                data.update(stats)
        for bundle in [b for b in self.bundles if b not in active]:
            del self.bundles[bundle]

    def bundle_json(self, bundle: str) -> dict[str, Any]:
        """``bundle``'s ``BundleData`` JSON; default stats (0 samples) for a bundle without history."""
        data = self.bundles.get(bundle)
        return (data if data is not None else BundleData.with_default_stats(default_bundle_stats())).to_json()

    def to_json(self) -> dict[str, Any]:
        """``{bundle: BundleData JSON}`` in the order bundles were first seen (``LoadData.bundleData``)."""
        return {bundle: data.to_json() for bundle, data in self.bundles.items()}
