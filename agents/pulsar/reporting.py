"""A broker's local load data (``LocalBrokerData``) as it writes it to the store, and the arithmetic around it.

The percentages and the weighted max come from ``clusteremu.strategies.pulsar`` so that the broker's report, the leader's
strategies and the analyses all compute them the same way (Pulsar's float32 ``percentUsage``).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

from clusteremu.strategies.pulsar import PulsarConfig, report_update
from clusteremu.strategies.pulsar.resource_usage import ResourceUsage, weighted_max_4

RESOURCES = ("cpu", "memory", "direct_memory", "bandwidth_in", "bandwidth_out")
_JAVA_NAMES = {"cpu": "cpu", "memory": "memory", "direct_memory": "directMemory",
               "bandwidth_in": "bandwidthIn", "bandwidth_out": "bandwidthOut"}


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

    def restamped(self, last_update_ms: int) -> "LocalReport":
        """The same report taken at ``last_update_ms`` (its figures are kept)."""
        out = dataclasses.replace(self, last_update_ms=last_update_ms)
        out._figures = self._figures
        return out

    def figures(self, config: PulsarConfig) -> tuple[float, float, float, float]:
        """What the update rule reads of this report (:func:`report_update.report_figures`)."""
        if self._figures is None or self._figures[0] is not config:
            self._figures = (config, report_update.report_figures(self.summary(), config))
        return self._figures[1]

    def percent(self, resource: str) -> float:
        usage, limit = getattr(self, resource)
        return percent_usage(usage, limit)

    def to_dict(self) -> dict[str, Any]:
        """The report with Pulsar's JSON names (``LocalBrokerData``), as ``LoadData.from_json`` reads it."""
        out = self.summary()
        out.update({
            "numTopics": self.num_topics,
            "numConsumers": int(sum(s["consumerCount"] for s in self.bundle_stats.values())),
            "numProducers": int(sum(s["producerCount"] for s in self.bundle_stats.values())),
            "bundles": sorted(self.bundle_stats), "lastStats": self.bundle_stats,
            "loadManagerClassName": "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl",
        })
        return out

    def summary(self) -> dict[str, Any]:
        """The part of :meth:`to_dict` without the per-bundle data: resources, traffic totals, bundle count and
        time — all that the update rule and the score read (the broker checks the rule every few seconds)."""
        out: dict[str, Any] = {_JAVA_NAMES[r]: {"usage": getattr(self, r)[0], "limit": getattr(self, r)[1]}
                               for r in RESOURCES}
        out.update({
            "msgRateIn": self.msg_rate_in, "msgRateOut": self.msg_rate_out,
            "msgThroughputIn": self.msg_throughput_in, "msgThroughputOut": self.msg_throughput_out,
            "numBundles": self.num_bundles, "lastUpdate": self.last_update_ms,
        })
        return out

    def needs_update(self, last: "LocalReport | None", since_write_s: float, config: Mapping[str, Any]) -> str | None:
        """Why the report must be written now (``needBrokerDataUpdate``), or None. ``config`` is best given as
        a :class:`~clusteremu.strategies.pulsar.PulsarConfig` (a dict is converted on every call)."""
        if last is None:
            return "first"
        cfg = config if isinstance(config, PulsarConfig) else PulsarConfig(config)
        return report_update.reason_from_figures(last.figures(cfg), self.figures(cfg), since_write_s * 1000.0, cfg)


def score_of(report: LocalReport, config: dict[str, Any]) -> float:
    """The broker's score: Pulsar's 4-argument weighted max resource usage × 100."""
    return 100.0 * weighted_max_4(report.summary(), config)
