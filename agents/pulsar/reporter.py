"""A broker's load-report role (the modular load manager's ``LoadReportUpdaterTask``).

Components:

* :class:`LoadReporter`: keeps the broker's :class:`~.reporting.LocalReport` up to date from its sampled usage,
  its traffic and its owned bundles (``updateLocalBrokerData``), writes it to the store when the update rule says
  so (``writeBrokerDataOnZooKeeper``), and applies ``report_loss`` faults to the writes.

A check that finds nothing to write finds nothing again until what the report is made of changes (a host-usage
sample, a traffic change, an owned bundle, a workload stretch) or the 15-minute rule comes due: it skips its runs
until then (:meth:`~clusteremu.emulator.executor.ScheduledTask.skip_until`) and every such change wakes it
(:meth:`LoadReporter.changed`), so the checks that run are the ones that can write, at their own times.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Generator

import numpy as np

from clusteremu.emulator.agent import Agent
from clusteremu.emulator.executor import ScheduledTask
from clusteremu.strategies.pulsar import PulsarConfig, report_update

from .reporting import LocalReport, score_of
from .store import BROKERS_PREFIX
from .usage import now_ms

if TYPE_CHECKING:
    from .broker import Broker

LOAD_REPORT_UPDATE_MINIMUM_INTERVAL_S = 5.0  # LoadReportUpdaterTask's fixed rate in the modular load manager

#: a ``report_loss`` fault as a broker keeps it: (start, end, probability, extra_s)
ReportFault = tuple[float, float, float, float]


class LoadReporter:
    """The broker's local report and its writes (one per run of the broker process).

    ``faults`` are the ``report_loss`` faults scheduled for the broker: they outlive a restart, so the broker
    keeps the list and hands it over.
    """

    def __init__(self, broker: "Broker", faults: list[ReportFault]) -> None:
        self.b = broker
        self.faults = faults
        self.report: LocalReport | None = None
        self.last_written: LocalReport | None = None
        self.last_write_t = -math.inf
        self._stats_cache: tuple[Any, dict[str, dict[str, Any]]] | None = None
        self._report_inputs: tuple[Any, ...] = ()  # what the current report was made from
        self._factors_seen: tuple[np.ndarray, bytes] | None = None  # the last task factors array and its bytes
        self.typed_config = PulsarConfig(broker.config)
        # (report, last written report, the update rule's verdict on their figures): see _update_reason
        self._change_verdict: tuple[LocalReport, LocalReport, str | None] | None = None
        self._max_interval_ms = self.typed_config["loadBalancerReportUpdateMaxIntervalMinutes"] * 60_000
        self._task: ScheduledTask | None = None

    def start(self) -> None:
        """Run the report task on the broker's load-manager executor."""
        self._task = self.b.timers.schedule_at_fixed_rate(self.write, 0.0, LOAD_REPORT_UPDATE_MINIMUM_INTERVAL_S,
                                                          name="load-report")

    def changed(self) -> None:
        """Something the report is made of changed now: a check skipping its runs takes them up again."""
        if self._task is not None:
            self._task.wake()

    def refresh(self) -> LocalReport:
        """Bring :attr:`report` up to date (``updateLocalBrokerData``) and return it; its ``lastUpdate`` is set
        when it is written (:meth:`stamped`), as Pulsar sets it in ``writeBrokerDataOnZooKeeper``."""
        # The host is not integrated here: the report reads the sampler's usage and the current rates only (the
        # sampler and every traffic change integrate it), and 1,000 brokers refresh every 5 s.
        b = self.b
        usage, own = b.usage, b.ownership
        factors = b.workload.task_factors(b.env._now)
        # the workload hands out one read-only factors array per stretch of constant rates: its bytes once
        seen = self._factors_seen
        if seen is not None and seen[0] is factors:
            factor_bytes = seen[1]
        else:
            factor_bytes = factors.tobytes()
            self._factors_seen = (factors, factor_bytes)
        inputs = (usage.cpu_percent, usage.bw_in_kbps, usage.bw_out_kbps, factor_bytes, own.owned.version,
                  own.task_counts.tobytes())
        if self.report is not None and inputs == self._report_inputs:
            return self.report  # all the report is made of is the same (bundle counts only grow while the set is)
        self._report_inputs = inputs
        topics = int(own.task_counts.sum())  # the task counts count the owned bundles' topics
        rates = usage.rates(b.now)
        m = usage.machine
        previous = self.report
        self.report = LocalReport(
            cpu=(usage.cpu_percent, 100.0 * m.cores),
            memory=(m.heap_mb(topics, rates), m.heap_max_mb),
            direct_memory=(m.direct_mb(rates), m.direct_max_mb),
            bandwidth_in=(usage.bw_in_kbps, m.nic_kbps),
            bandwidth_out=(usage.bw_out_kbps, m.nic_kbps),
            msg_rate_in=rates[0], msg_rate_out=rates[1], msg_throughput_in=rates[2], msg_throughput_out=rates[3],
            num_topics=topics, num_bundles=len(own.owned), bundle_stats=self._bundle_stats(factors),
            last_update_ms=now_ms(b.now),
        )
        self.report.share_bundle_stats_json(previous)
        self.changed()  # when refreshed outside the check (a registration, the extensible reporter)
        return self.report

    def stamped(self) -> LocalReport:
        """The current report with ``lastUpdate`` now, to be written."""
        t_ms = now_ms(self.b.now)
        if self.report.last_update_ms != t_ms:
            self.report = self.report.restamped(t_ms)
            self.changed()
        return self.report

    def _bundle_stats(self, factors: np.ndarray) -> dict[str, dict[str, Any]]:
        """Per owned bundle: rates, throughputs, topic, producer and consumer counts (NamespaceBundleStats).

        Computed for all bundles at once, and reused while neither the bundles, their topics nor the task rates
        changed (the report task asks every 5 s; a large broker has hundreds of bundles)."""
        own = self.b.ownership
        owned = own.owned
        # The same bundles (version) with the same total counts mean that no bundle's counts grew.
        key = (factors.tobytes(), owned.version, own.task_counts.tobytes())
        if self._stats_cache is not None and self._stats_cache[0] == key:
            return self._stats_cache[1]
        wl = self.b.workload
        names = list(owned)
        if names:
            counts = np.stack([owned[b].task_counts for b in names])
            rin = counts * factors
            rout = rin * wl._subs
            cols = np.stack([rin.sum(axis=1), rout.sum(axis=1), rin @ wl._msg_bytes, rout @ wl._msg_bytes,
                             counts @ wl._subs])
            cols = cols.T.tolist()
        else:
            cols = []
        stats = {}
        for b, (r_in, r_out, t_in, t_out, consumers) in zip(names, cols):
            o = owned[b]
            stats[b] = {
                "msgRateIn": r_in, "msgRateOut": r_out, "msgThroughputIn": t_in, "msgThroughputOut": t_out,
                "topics": len(own.bundle_map.topics_of(b)) if not o.topics else len(o.topics),
                "consumerCount": int(round(consumers)), "producerCount": len(o.topics),
            }
        self._stats_cache = (key, stats)
        return stats

    def write(self) -> None:
        """LoadReportUpdaterTask: refresh the local data; write it only when the update rule says so."""
        b = self.b
        if not b.store.is_open:
            return
        self.refresh()
        reason = self._update_reason()
        if reason is None:
            self._skip_idle_runs()
            return
        previous = (self.last_written, self.last_write_t)
        r = self.last_written = self.stamped()
        self.last_write_t = b.now
        delay = self._fault()
        if delay == 0.0:
            # The write fails (the store is unreachable for it): lastData is not updated, so the next run of
            # the task tries again if the update rule still says so.
            self.last_written, self.last_write_t = previous
            b.emit("load_report_lost", reason=reason)
            return
        b.emit("load_report", cpu=r.percent("cpu"), memory=r.percent("memory"),
               direct_memory=r.percent("direct_memory"), bandwidth_in=r.percent("bandwidth_in"),
               bandwidth_out=r.percent("bandwidth_out"), msg_rate_in=r.msg_rate_in, msg_rate_out=r.msg_rate_out,
               msg_throughput_in=r.msg_throughput_in, msg_throughput_out=r.msg_throughput_out,
               num_bundles=r.num_bundles, num_topics=r.num_topics, score=score_of(r, self.typed_config),
               reason=reason)
        write = b.store.op("set", {"path": BROKERS_PREFIX + b.name, "data": r.to_json(), "ephemeral": True})
        if delay is not None:
            b.emit("load_report_delayed", extra_s=delay)
            b.spawn(_after(b, delay, write))
        else:
            b.spawn(write)

    def _update_reason(self) -> str | None:
        """``report.needs_update(last_written, since the write)``: the report and the last written one are
        usually the same objects as at the previous check (1,000 brokers check every 5 s), so the verdict on
        their figures is kept while they are; only the time since the write is new."""
        report, last = self.report, self.last_written
        if last is None:
            return report.needs_update(last, 0.0, self.typed_config)
        since_write_ms = (self.b.env._now - self.last_write_t) * 1000.0
        if since_write_ms > self._max_interval_ms:
            return report_update.MAX_INTERVAL  # the rule's first test, as reason_from_figures makes it
        kept = self._change_verdict
        if kept is None or kept[0] is not report or kept[1] is not last:
            # with no time elapsed (-inf), only the figures can give a reason
            kept = self._change_verdict = (report, last, report.needs_update(last, -math.inf, self.typed_config))
        return kept[2]

    def _skip_idle_runs(self) -> None:
        """Nothing to write: the runs before the next change of the workload's rates or the 15-minute rule find
        nothing either, unless something the report reads changes first (which wakes the task)."""
        if self._task is None or self.last_written is None:
            return
        b = self.b
        # a millisecond early: (t - lastWrite) * 1000 > max may hold on the float grid a hair before the sum
        until = min(b.workload.constant_until(b.env._now), self.last_write_t + self._max_interval_ms / 1000.0 - 1e-3)
        if until > b.env._now:
            self._task.skip_until(until)

    def _fault(self) -> float | None:
        """How a ``report_loss`` fault hits this write: None (it does not), 0.0 (lost) or its delay in seconds."""
        b = self.b
        hit = None
        for start, end, probability, extra_s in self.faults:
            if start <= b.now < end and (probability >= 1.0 or b.rng("report-loss").random() < probability):
                if extra_s == 0.0:
                    return 0.0
                hit = max(extra_s, hit or 0.0)
        return hit


def _after(agent: Agent, delay: float, gen: Generator) -> Generator:
    yield from agent.sleep(delay)
    return (yield from gen)
