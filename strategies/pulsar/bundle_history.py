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
        self.update_all_stats({
            broker: {bundle: NamespaceBundleStats.from_json(raw, f'brokerData["{broker}"].localData.lastStats["{bundle}"]')
                     for bundle, raw in (report.get("lastStats") or {}).items()}
            for broker, report in reports.items()
        })

    def update_all_stats(self, last_stats: Mapping[str, Mapping[str, NamespaceBundleStats]]) -> None:
        """:meth:`update_all` from reports already parsed: {broker: its ``lastStats``}.

        The leader calls this on every report of every broker with all of them, so the fold is written out
        here (the same float operations as :meth:`TimeAverageMessageData.update`, in the same order).
        """
        bundles = self.bundles
        active: set[str] = set()
        for broker in java_order(last_stats, "concurrent"):
            for bundle, st in last_stats[broker].items():
                active.add(bundle)
                data = bundles.get(bundle)
                if data is None:
                    data = bundles[bundle] = BundleData.with_default_stats()
                tin, tout, rin, rout = st.msg_throughput_in, st.msg_throughput_out, st.msg_rate_in, st.msg_rate_out
                for avg in (data.short_term_data, data.long_term_data):
                    n = avg.num_samples + 1
                    if n > avg.max_samples:
                        n = avg.max_samples
                    avg.num_samples = n
                    avg.msg_throughput_in = ((n - 1) * avg.msg_throughput_in + tin) / n
                    avg.msg_throughput_out = ((n - 1) * avg.msg_throughput_out + tout) / n
                    avg.msg_rate_in = ((n - 1) * avg.msg_rate_in + rin) / n
                    avg.msg_rate_out = ((n - 1) * avg.msg_rate_out + rout) / n
                data.topics = st.topics
        if len(active) != len(bundles):
            for bundle in [b for b in bundles if b not in active]:
                del bundles[bundle]

    def bundle_json(self, bundle: str) -> dict[str, Any]:
        """``bundle``'s ``BundleData`` JSON; default stats (0 samples) for a bundle without history."""
        data = self.bundles.get(bundle)
        return (data if data is not None else BundleData.with_default_stats(default_bundle_stats())).to_json()

    def to_json(self) -> dict[str, Any]:
        """``{bundle: BundleData JSON}`` in the order bundles were first seen (``LoadData.bundleData``)."""
        return {bundle: data.to_json() for bundle, data in self.bundles.items()}
