"""When a broker writes its load report: ``ModularLoadManagerImpl.needBrokerDataUpdate`` (reference §4, newest).

Every 5 s a broker refreshes its ``LocalBrokerData`` and writes it to ``/loadbalance/brokers/<id>`` only if
this rule says so; "last" is the data as of the previous *write*, so a slow drift accumulates until it
crosses the threshold.

API::

    from clusteremu.strategies.pulsar import report_update
    report_update.need_broker_data_update(last, current, now_ms, config)      # -> bool
    report_update.update_reason(last, current, since_last_write_ms, config)   # -> "max_interval" | "threshold" | None
    report_update.max_change_percentage(last, current, config)                # -> float, percentage points
    report_update.report_figures(report, config)                              # -> what the rule reads of a report
    report_update.reason_from_figures(last_figs, current_figs, since_ms, cfg) # -> update_reason from those
    report_update.percent_change(old, new)                                    # -> float, percent

``last`` and ``current`` are ``LocalBrokerData`` objects or their JSON dicts (Pulsar's names: ``msgRateIn``,
``msgRateOut`` msg/s, ``msgThroughputIn``, ``msgThroughputOut`` bytes/s, ``numBundles``, the resources as
``{"usage", "limit"}``, ``lastUpdate`` epoch ms). ``now_ms`` and ``since_last_write_ms`` are milliseconds;
``config`` holds ServiceConfiguration keys (a ``PulsarConfig`` or a dict; missing keys take the defaults).

The rule:

1. If ``now - current.lastUpdate > loadBalancerReportUpdateMaxIntervalMinutes`` (strict, in ms): write.
2. Else ``change = max(pctChange(last.rateIn + last.rateOut, cur.rateIn + cur.rateOut),
   pctChange(last.thrIn + last.thrOut, cur.thrIn + cur.thrOut), pctChange(last.numBundles, cur.numBundles),
   100 * |weightedMax4(last) - weightedMax4(cur)|)``; write iff ``change > loadBalancerReportUpdateThresholdPercentage``
   (strict: a change exactly at the threshold does not write).
3. ``pctChange(old, new)`` is 0 when both are 0, ``+inf`` when only ``old`` is 0, else ``100 * |(old - new) / old|``.
   The resource term is in absolute percentage points of the 4-argument weighted max (CPU, direct memory,
   bandwidth in/out with the configured weights; memory is ignored), computed from float32 percentages.
   The max ignores NaN terms (Java's ``LocalBrokerData.max`` keeps only strictly greater values).

Not modelled here: the "metadata session not connected" skip and what a write does (set ``lastUpdate``,
clear the bundle gain/loss deltas, copy current into last) belong to the caller.
"""
from __future__ import annotations

from typing import Any, Mapping, Union

from clusteremu.base.java import strict_max

from .config import PulsarConfig, as_config
from .load_data import LocalBrokerData
from .resource_usage import weighted_max_4

__all__ = [
    "MAX_INTERVAL",
    "THRESHOLD",
    "max_change_percentage",
    "need_broker_data_update",
    "percent_change",
    "reason_from_figures",
    "report_figures",
    "update_reason",
]

#: ``update_reason`` value: the report is older than ``loadBalancerReportUpdateMaxIntervalMinutes``.
MAX_INTERVAL = "max_interval"
#: ``update_reason`` value: the change exceeded ``loadBalancerReportUpdateThresholdPercentage``.
THRESHOLD = "threshold"

BrokerReport = Union[LocalBrokerData, Mapping[str, Any]]


def percent_change(old: float, new: float) -> float:
    """``percentChange``: percent change from ``old`` to ``new``; 0 for 0 → 0, ``+inf`` for 0 → non-zero."""
    if old == 0:
        if new == 0:
            return 0.0
        return float("inf")
    return 100 * abs((old - new) / old)


def report_figures(report: BrokerReport, config: Mapping[str, Any] | PulsarConfig | None = None
                   ) -> tuple[float, float, float, float]:
    """(total msg/s, total bytes/s, number of bundles, weighted max usage fraction) of one report: all the
    rule reads of it. A caller that checks the same report often keeps them (see :func:`reason_from_figures`)."""
    cfg = as_config(config)
    if isinstance(report, LocalBrokerData):
        return (
            report.msg_rate_in + report.msg_rate_out,
            report.msg_throughput_in + report.msg_throughput_out,
            float(report.num_bundles),
            report.max_resource_usage_with_weight(*cfg.resource_weights()),
        )
    return (
        float(report.get("msgRateIn", 0.0)) + float(report.get("msgRateOut", 0.0)),
        float(report.get("msgThroughputIn", 0.0)) + float(report.get("msgThroughputOut", 0.0)),
        float(report.get("numBundles", 0)),
        weighted_max_4(report, cfg),
    )


def _last_update(report: BrokerReport) -> int:
    if isinstance(report, LocalBrokerData):
        return report.last_update
    return int(report.get("lastUpdate", 0))


def max_change_percentage(
    last: BrokerReport, current: BrokerReport, config: Mapping[str, Any] | PulsarConfig | None = None
) -> float:
    """The largest of the four changes between the last written report and the current one (percent)."""
    cfg = as_config(config)
    return _max_change(report_figures(last, cfg), report_figures(current, cfg))


def _max_change(last: tuple[float, float, float, float], current: tuple[float, float, float, float]) -> float:
    rate0, thr0, bundles0, usage0 = last
    rate1, thr1, bundles1, usage1 = current
    return strict_max(
        (
            percent_change(rate0, rate1),
            percent_change(thr0, thr1),
            percent_change(bundles0, bundles1),
            100.0 * abs(usage0 - usage1),
        )
    )


def update_reason(
    last: BrokerReport,
    current: BrokerReport,
    since_last_write_ms: float,
    config: Mapping[str, Any] | PulsarConfig | None = None,
) -> str | None:
    """Why the report must be written now — :data:`MAX_INTERVAL` or :data:`THRESHOLD` — or ``None``.

    ``since_last_write_ms`` is ``now - current.lastUpdate`` in milliseconds.
    """
    cfg = as_config(config)
    return reason_from_figures(report_figures(last, cfg), report_figures(current, cfg), since_last_write_ms, cfg)


def reason_from_figures(
    last: tuple[float, float, float, float],
    current: tuple[float, float, float, float],
    since_last_write_ms: float,
    config: PulsarConfig,
) -> str | None:
    """:func:`update_reason` from the two reports' :func:`report_figures`."""
    max_interval_ms = config["loadBalancerReportUpdateMaxIntervalMinutes"] * 60_000
    if since_last_write_ms > max_interval_ms:
        return MAX_INTERVAL
    if _max_change(last, current) > config["loadBalancerReportUpdateThresholdPercentage"]:
        return THRESHOLD
    return None


def need_broker_data_update(
    last: BrokerReport, current: BrokerReport, now_ms: int, config: Mapping[str, Any] | PulsarConfig | None = None
) -> bool:
    """``needBrokerDataUpdate()`` at virtual time ``now_ms`` (epoch ms); ``current.lastUpdate`` is the last write."""
    return update_reason(last, current, now_ms - _last_update(current), config) is not None
