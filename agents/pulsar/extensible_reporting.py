"""What a broker publishes for the extensible load manager: its ``BrokerLoadData`` and its top-k bundles.

Pulsar's ``BrokerLoadDataReporter`` and ``TopBundleLoadDataReporter`` publish to system topics that every
broker reads as table views; here they go to the store under :data:`LOAD_DATA_PREFIX` and
:data:`TOP_BUNDLES_PREFIX` (ephemeral, so a broker whose session ends leaves no stale data). Both run on the
broker's load-manager executor every ``loadBalancerReportUpdateMinIntervalMillis``.

Each run folds the broker's current usage into its ``BrokerLoadData`` (so ``weightedMaxEMA`` and
``msgThroughputEMA`` smooth over the runs, as in Pulsar) and publishes it (``needBrokerDataUpdate``) when
``loadBalancerReportUpdateMaxIntervalMinutes`` passed since the last publication, or when the largest of
100 × |Δ maxResourceUsage| and the percent changes of msg rate (in + out), throughput (in + out) and bundle
count since the last published data exceeds ``loadBalancerReportUpdateThresholdPercentage``. The top bundles
(``loadBalancerMaxNumberOfBundlesInBundleLoadReport`` of them, ascending) are published when they changed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clusteremu.emulator.trace.kinds import declare
from clusteremu.strategies.pulsar.extensible import BrokerLoadData, SystemResourceUsage, TopKBundles
from clusteremu.strategies.pulsar.report_update import percent_change
from clusteremu.strategies.pulsar.resource_usage import ResourceUsage

from .reporting import namespace_bundle_stats

if TYPE_CHECKING:
    from .port import BrokerPort

LOAD_DATA_PREFIX = "/loadbalance/broker-load-data/"
TOP_BUNDLES_PREFIX = "/loadbalance/top-bundles/"

_M = __name__
declare("broker_load_data", "The broker published its BrokerLoadData for the extensible load manager: "
        "`weighted_max_ema` and `max_resource_usage` in percent, `msg_throughput_ema` in bytes/s, `reason` why it "
        "was published now.", _M, weighted_max_ema="float", max_resource_usage="float",
        msg_throughput_ema="float", bundles="int", reason="str")


class ExtensibleReporter:
    """A broker's two extensible-LM reporters (see the module docstring)."""

    def __init__(self, broker: "BrokerPort") -> None:
        self.b = broker
        self.data = BrokerLoadData()
        self.top_k = TopKBundles(broker.config)
        self._last: BrokerLoadData | None = None  # the last published data
        self._last_top: Any = None

    def start(self) -> None:
        period = self.b.config["loadBalancerReportUpdateMinIntervalMillis"] / 1000.0
        self.b.timers.schedule_at_fixed_rate(self.report, 0.0, period, name="extensible-load-reporters")

    def report(self) -> None:
        b = self.b
        if not b.store.is_open:
            return
        r = b.reporter.refresh()
        usage = SystemResourceUsage(ResourceUsage(*r.cpu), ResourceUsage(*r.memory),
                                    ResourceUsage(*r.direct_memory), ResourceUsage(*r.bandwidth_in),
                                    ResourceUsage(*r.bandwidth_out))
        now_ms = b.now_ms()
        self.data.update(usage, r.msg_throughput_in, r.msg_throughput_out, r.msg_rate_in, r.msg_rate_out,
                         r.num_bundles, r.num_topics, b.config, now_ms)
        reason = self._update_reason(now_ms)
        if reason is not None:
            self.data.reported_at = now_ms
            self._last = BrokerLoadData()
            self._last.update_from(self.data)
            b.emit("broker_load_data", weighted_max_ema=100.0 * self.data.weighted_max_ema,
                   max_resource_usage=100.0 * self.data.max_resource_usage,
                   msg_throughput_ema=self.data.msg_throughput_ema, bundles=r.num_bundles, reason=reason)
            b.spawn(b.store.op("set", {"path": LOAD_DATA_PREFIX + b.name, "data": self.data.to_json(),
                                       "ephemeral": True}))
        stats = {bundle: namespace_bundle_stats(s) for bundle, s in sorted(r.bundle_stats.items())}
        top = self.top_k.update(stats, b.config["loadBalancerMaxNumberOfBundlesInBundleLoadReport"]).to_json()
        if top != self._last_top:
            self._last_top = top
            b.spawn(b.store.op("set", {"path": TOP_BUNDLES_PREFIX + b.name, "data": top, "ephemeral": True}))

    def _update_reason(self, now_ms: int) -> str | None:
        """``needBrokerDataUpdate``: why the data must be published now, or None."""
        last, cur = self._last, self.data
        if last is None:
            return "first"
        if now_ms - last.reported_at > self.b.config["loadBalancerReportUpdateMaxIntervalMinutes"] * 60_000:
            return "max_interval"
        change = max(100.0 * abs(last.max_resource_usage - cur.max_resource_usage),
                     percent_change(last.msg_rate_in + last.msg_rate_out, cur.msg_rate_in + cur.msg_rate_out),
                     percent_change(last.msg_throughput_in + last.msg_throughput_out,
                                    cur.msg_throughput_in + cur.msg_throughput_out),
                     percent_change(last.bundle_count, cur.bundle_count))
        if change > self.b.config["loadBalancerReportUpdateThresholdPercentage"]:
            return "threshold"
        return None
