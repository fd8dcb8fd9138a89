"""A broker's local load data (``LocalBrokerData``) as it writes it to the store, and the arithmetic around it.

Components:

* :class:`LocalReport`: what the broker measured, with the update rule's figures cached; it is serialised through
  the strategies' :class:`~clusteremu.strategies.pulsar.load_data.LocalBrokerData` (:meth:`LocalReport.to_json`),
  the one serialiser of that shape, which the leader's ``from_json`` reads back;
* :func:`percent_usage`, :func:`score_of`, :func:`namespace_bundle_stats`.

The percentages and the weighted max come from ``clusteremu.strategies.pulsar`` so that the broker's report, the
leader's strategies and the analyses all compute them the same way (Pulsar's float32 ``percentUsage``).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

from clusteremu.strategies.pulsar import PulsarConfig, report_update
from clusteremu.strategies.pulsar.load_data import LocalBrokerData, NamespaceBundleStats
from clusteremu.strategies.pulsar.resource_usage import ResourceUsage

RESOURCES = ("cpu", "memory", "direct_memory", "bandwidth_in", "bandwidth_out")
LOAD_MANAGER_CLASS = "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl"


def percent_usage(usage: float, limit: float) -> float:
    """Pulsar's ``ResourceUsage.percentUsage()`` (float32 arithmetic)."""
    return ResourceUsage(usage, limit).percent_usage()


@dataclass
class LocalReport:
    """What a broker reports: (usage, limit) per resource, traffic totals, counts and per-bundle stats."""

    cpu: tuple[float, float]
    memory: tuple[float, float]
    direct_memory: tuple[float, float]
    bandwidth_in: tuple[float, float]
    bandwidth_out: tuple[float, float]
    msg_rate_in: float
    msg_rate_out: float
    msg_throughput_in: float
    msg_throughput_out: float
    num_topics: int
    num_bundles: int
    bundle_stats: dict[str, dict[str, float]] = field(default_factory=dict)
    last_update_ms: int = 0
    # (config, report_figures) once asked for: the broker checks the same reports every 5 s
    _figures: tuple[PulsarConfig, tuple[float, float, float, float]] | None = field(
        default=None, init=False, repr=False, compare=False)
    # ``lastStats`` as JSON once asked for; a report with the same ``bundle_stats`` object may share it
    _stats_json: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    def restamped(self, last_update_ms: int) -> "LocalReport":
        """The same report taken at ``last_update_ms`` (its figures are kept)."""
        out = dataclasses.replace(self, last_update_ms=last_update_ms)
        out._figures = self._figures
        out._stats_json = self._stats_json
        return out

    def share_bundle_stats_json(self, other: "LocalReport | None") -> None:
        """Take ``other``'s serialised ``lastStats`` when both reports hold the same ``bundle_stats`` object
        (the broker's stats are recomputed only when its bundles or their traffic change)."""
        if other is not None and other.bundle_stats is self.bundle_stats:
            self._stats_json = other._stats_json

    def figures(self, config: PulsarConfig) -> tuple[float, float, float, float]:
        """What the update rule reads of this report (:func:`report_update.report_figures`)."""
        if self._figures is None or self._figures[0] is not config:
            self._figures = (config, report_update.report_figures(self.local_data(with_bundles=False), config))
        return self._figures[1]

    def percent(self, resource: str) -> float:
        usage, limit = getattr(self, resource)
        return percent_usage(usage, limit)

    def local_data(self, with_bundles: bool = True) -> LocalBrokerData:
        """The report as the strategies' ``LocalBrokerData`` (the leader parses what :meth:`to_json` writes
        back into the same). ``with_bundles`` False leaves the per-bundle data out: the update rule and the
        score read the resources, traffic totals and bundle count only, every few seconds."""
        out = LocalBrokerData(
            cpu=ResourceUsage(*self.cpu), memory=ResourceUsage(*self.memory),
            direct_memory=ResourceUsage(*self.direct_memory), bandwidth_in=ResourceUsage(*self.bandwidth_in),
            bandwidth_out=ResourceUsage(*self.bandwidth_out),
            msg_throughput_in=self.msg_throughput_in, msg_throughput_out=self.msg_throughput_out,
            msg_rate_in=self.msg_rate_in, msg_rate_out=self.msg_rate_out, last_update=self.last_update_ms,
            num_topics=self.num_topics, num_bundles=self.num_bundles, load_manager_class_name=LOAD_MANAGER_CLASS,
        )
        if with_bundles:
            stats = self.bundle_stats
            out.last_stats = {b: namespace_bundle_stats(s) for b, s in stats.items()}
            out.bundles = sorted(stats)
            out.num_consumers = int(sum(s["consumerCount"] for s in stats.values()))
            out.num_producers = int(sum(s["producerCount"] for s in stats.values()))
        return out

    def to_json(self) -> dict[str, Any]:
        """The report with Pulsar's JSON names (``LocalBrokerData.to_json``), as the broker writes it: the same
        as ``local_data().to_json()``, with ``lastStats`` serialised once per bundle-stats snapshot (a broker of
        hundreds of bundles writes the same stats again whenever only its usage changed)."""
        stats = self.bundle_stats
        data = self.local_data(with_bundles=False)
        data.bundles = sorted(stats)
        data.num_consumers = int(sum(s["consumerCount"] for s in stats.values()))
        data.num_producers = int(sum(s["producerCount"] for s in stats.values()))
        out = data.to_json()
        if self._stats_json is None:
            self._stats_json = {b: namespace_bundle_stats(s).to_json() for b, s in stats.items()}
        out["lastStats"] = self._stats_json  # the key is in place already: Pulsar's field order is kept
        return out

    def needs_update(self, last: "LocalReport | None", since_write_s: float, config: Mapping[str, Any]) -> str | None:
        """Why the report must be written now (``needBrokerDataUpdate``), or None. ``config`` is best given as
        a :class:`~clusteremu.strategies.pulsar.PulsarConfig` (a dict is converted on every call)."""
        if last is None:
            return "first"
        cfg = config if isinstance(config, PulsarConfig) else PulsarConfig(config)
        return report_update.reason_from_figures(last.figures(cfg), self.figures(cfg), since_write_s * 1000.0, cfg)


def score_of(report: LocalReport, config: PulsarConfig) -> float:
    """The broker's score: Pulsar's 4-argument weighted max resource usage × 100."""
    return 100.0 * report.local_data(with_bundles=False).max_resource_usage_with_weight(*config.resource_weights())


def namespace_bundle_stats(s: dict[str, Any]) -> NamespaceBundleStats:
    """One bundle's entry of :attr:`LocalReport.bundle_stats` as the strategies' ``NamespaceBundleStats``."""
    return NamespaceBundleStats(
        msg_rate_in=s["msgRateIn"], msg_throughput_in=s["msgThroughputIn"], msg_rate_out=s["msgRateOut"],
        msg_throughput_out=s["msgThroughputOut"], consumer_count=s["consumerCount"],
        producer_count=s["producerCount"], topics=s["topics"])
