"""``TransferShedder``: the extensible load manager's shedding strategy (PIP-192), newest "swap" version.

Follows ``EXT/scheduler/TransferShedder.java`` (reference §11.2/§11.4). Loads are the brokers'
``weightedMaxEMA`` (fractions, 1.0 = 100 %); throughputs are bytes/s (in + out); times are epoch ms.

One cycle (:meth:`TransferShedder.find_bundles_for_unloading`):

1. ``available_brokers is None`` (registry lookup failed) → Failure/Unknown, nothing else happens.
2. **Load stats** (:class:`LoadStats`) over the store, in its iteration order: an entry older than
   ``loadBalancerBrokerLoadDataTTLInSeconds`` is left out (reason OutDatedData); a broker unloaded recently
   whose data was updated less than ``loadBalanceSheddingDelayInSeconds`` after that unload aborts the
   **whole cycle** (Skip/CoolDown), otherwise it leaves ``recentlyUnloadedBrokers``; the others add to
   ``sum`` and ``sqSum``. No counted broker → Skip/OutDatedData if some entry was outdated, else NoBrokers;
   an available broker absent from the store → Skip/NoLoadData. Else ``avg = sum/n`` and the population
   ``std = sqrt(sqSum/n − avg²)`` (NaN when rounding makes that negative, as in Java). The counter records
   ``avg``/``std``.
3. **Hit counter**: all store entries (outdated ones too) sorted by load ascending, stable in store order.
   If ``std > loadBalancerBrokerLoadTargetStd`` or the least-loaded broker is *underloaded* or the most-
   loaded is *overloaded*, ``unloadConditionHitCount`` grows, else it resets; the cycle goes on only when it
   **exceeds** ``loadBalancerSheddingConditionHitCountThreshold`` (default 3: the 4th consecutive hit acts),
   else Skip/HitCount. Underloaded: ``load < avg·m`` or ``msgThroughputEMA < maxBroker.msgThroughputEMA·m``
   with ``m = min(0.5, max(0, targetStd/2))``; overloaded:
   ``load > loadBalancerBrokerOverloadedThresholdPercentage/100`` and ``load > avg + targetStd``.
4. **Pairing** while fewer than ``loadBalancerMaxNumberOfBrokerSheddingPerCycle`` brokers have shed and the
   min index is below the max index: the reason is Overloaded (std above target), else Underloaded (min
   broker underloaded), else Overloaded (max broker overloaded), else stop. The max broker is taken (its
   index always moves), the min broker only peeked. The target is half the load gap converted to bytes/s
   in proportion to the max broker's throughput. A max broker without top bundles counts as "no load
   data"; one with a single top bundle as "few bundles".
5. **Bundles** of the max broker, smallest first: skip those it does not own, those of
   ``loadBalancerSheddingExcludedNamespaces``, recently unloaded ones and non-transferable ones; stop when
   only one reported bundle would remain; skip zero-throughput ones. A bundle that would overshoot the
   target is taken only if a **swap** makes it fit: bundles of the min broker (one iterator shared by all
   bundles of this max broker, never restarted) are lined up to move the other way while both brokers stay
   below the max broker's throughput, until the min broker ends no higher than the max broker and the max
   broker below 75 % of its throughput; no such swap → stop this broker. Decisions carry the cycle's
   reason; with ``loadBalancerTransferEnabled`` they name the destination (swap decisions first), otherwise
   they are plain unloads (and no swap is searched). **Only with** ``loadBalancerDebugModeEnabled`` is the
   swapped-back traffic credited (``trafficMarkedToGain``), which changes later bundles and the std update.
6. If the max broker marked traffic, the std is updated incrementally (``LoadStats.offload``) and the min
   index advances; otherwise it counts as "few bundles" and **the min broker stays** for the next max broker.
7. No decisions → Skip with NoLoadData (some max broker had no top bundles), else NoBundles (some had too
   few), else HitCount. Decisions → the hit counter resets.

Departures and readings (documented choices):

* Debug mode is ``loadBalancerDebugModeEnabled`` only; Pulsar also turns it on when the logger is at DEBUG.
* The result is a list in emission order; Pulsar returns a ``HashSet`` (no meaningful order).
* ``recentlyUnloadedBrokers`` is not mutated: the pruned copy is returned in
  :attr:`UnloadResult.recently_unloaded_brokers`.
* Pulsar catches every exception of the cycle and counts Failure/Unknown, returning the decisions made so
  far; so does this class, and it keeps the message in :attr:`UnloadResult.error`.
* Two Pulsar versions were readable: one skips zero-throughput bundles (its tests expect
  ``testZeroBundleThroughput`` → NoBundles), the other checks ``loadBalancerSheddingExcludedNamespaces``.
  Both checks are applied here (excluded namespaces after ownership, zero throughput after the
  "remaining ≤ 1" stop, as in each source); with default config the second one is inert.
* Java's double arithmetic is kept where Python would raise or differ (:mod:`clusteremu.base.java`): ``x/0``
  gives ±inf/NaN, ``sqrt`` of a negative gives NaN, ``Math.max``/``Math.min`` propagate NaN.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, MutableMapping

import numpy as np

from clusteremu.base.java import double_compare_key, double_divide, math_max, math_min, math_sqrt

from clusteremu.base.java import format_fixed

from ..config import PulsarConfig, as_config
from ..explain import Explain, java_str, slf4j
from ..split.bundles import bundle_namespace
from .broker_load_data import BrokerLoadData
from .transfer_context import TransferContext
from .unload_counter import UnloadCounter
from .unload_decision import Label, Reason, UnloadDecision

__all__ = ["LoadStats", "TransferShedder", "UnloadResult"]

_KB = 1024.0
_CANNOT_CONTINUE_UNLOAD_MSG = "Can't continue the unload cycle."
_CANNOT_UNLOAD_BROKER_MSG = "Can't unload broker:%s."


def _throughput(stats: Any) -> float:
    return stats.msg_throughput_in + stats.msg_throughput_out


# --- LoadStats ----------------------------------------------------------------------------------------


class LoadStats:
    """Pulsar's ``TransferShedder.LoadStats``: mean and population std of the brokers' ``weightedMaxEMA``,
    the brokers sorted by it, and the min/max cursors of the pairing loop.

    Attributes (Java names in brackets): ``sum``, ``sq_sum`` [sqSum], ``total_brokers``, ``avg``, ``std``,
    ``brokers_sorted_by_load``, ``max_broker_index``, ``min_broker_index``,
    ``number_of_broker_shedding_per_cycle``, ``max_number_of_broker_shedding_per_cycle``.
    """

    def __init__(self) -> None:
        self.brokers_sorted_by_load: list[tuple[str, BrokerLoadData]] = []
        self.clear()

    def clear(self) -> None:
        """Reset everything (Pulsar clears the stats at the start of each cycle)."""
        self.sum = 0.0
        self.sq_sum = 0.0
        self.total_brokers = 0
        self.avg = 0.0
        self.std = 0.0
        self.max_broker_index = 0
        self.min_broker_index = 0
        self.number_of_broker_shedding_per_cycle = 0
        self.max_number_of_broker_shedding_per_cycle = 0
        self.brokers_sorted_by_load.clear()

    def _set(self, total: float, sq_total: float, count: int) -> None:
        self.sum = total
        self.sq_sum = sq_total
        self.total_brokers = count
        if count == 0:
            self.avg = 0.0
            self.std = 0.0
        else:
            self.avg = total / count
            self.std = math_sqrt(sq_total / count - self.avg * self.avg)

    def set_load_data_store(self, entries: Iterable[tuple[str, BrokerLoadData]]) -> None:
        """``setLoadDataStore``: sort the store's entries by ``weightedMaxEMA`` ascending (stable, with
        ``Double.compare``'s order) and put the cursors at both ends."""
        self.brokers_sorted_by_load.extend(entries)
        self.brokers_sorted_by_load.sort(key=lambda entry: double_compare_key(entry[1].weighted_max_ema))
        self.max_broker_index = len(self.brokers_sorted_by_load) - 1
        self.min_broker_index = 0

    def update(
        self,
        entries: Iterable[tuple[str, BrokerLoadData]],
        available_brokers: Iterable[str],
        recently_unloaded_brokers: MutableMapping[str, int],
        config: Mapping[str, Any] | PulsarConfig,
        now: int,
    ) -> Reason | None:
        """``update(loadStore, availableBrokers, recentlyUnloadedBrokers, conf)`` at time ``now`` (epoch ms).

        Returns the skip reason (OutDatedData, CoolDown, NoBrokers, NoLoadData) or ``None`` when the stats
        are usable. Like Pulsar it **removes** from ``recently_unloaded_brokers`` every broker whose cool-down
        is over (pass a copy to keep yours).
        """
        conf = as_config(config)
        self.max_number_of_broker_shedding_per_cycle = int(conf["loadBalancerMaxNumberOfBrokerSheddingPerCycle"])
        ttl_ms = conf["loadBalancerBrokerLoadDataTTLInSeconds"] * 1000
        delay_ms = conf["loadBalanceSheddingDelayInSeconds"] * 1000
        reason: Reason | None = None
        total = 0.0
        sq_total = 0.0
        count = 0
        missing = set(available_brokers)
        for broker, data in entries:
            missing.discard(broker)
            if now - data.updated_at > ttl_ms:
                reason = Reason.OutDatedData
                continue
            if broker in recently_unloaded_brokers:
                elapsed = data.updated_at - recently_unloaded_brokers[broker]
                if elapsed < delay_ms:
                    self._set(0.0, 0.0, 0)
                    return Reason.CoolDown
                del recently_unloaded_brokers[broker]
            load = data.weighted_max_ema
            total += load
            sq_total += load * load
            count += 1
        if count == 0:
            self._set(0.0, 0.0, 0)
            return reason if reason is not None else Reason.NoBrokers
        if missing:
            self._set(0.0, 0.0, 0)
            return Reason.NoLoadData
        self._set(total, sq_total, count)
        return None

    def offload(self, max_load: float, min_load: float, offload: float) -> None:
        """Account for moving ``offload`` (a load fraction) from the max to the min broker: update
        ``sqSum`` and ``std`` (``avg`` is unchanged), count one shedding broker, advance the min cursor."""
        self.sq_sum -= max_load * max_load + min_load * min_load
        max_after = math_max(0.0, max_load - offload)
        min_after = min_load + offload
        self.sq_sum += max_after * max_after + min_after * min_after
        self.std = math_sqrt(abs(double_divide(self.sq_sum, self.total_brokers) - self.avg * self.avg))
        self.number_of_broker_shedding_per_cycle += 1
        self.min_broker_index += 1

    def to_string(self) -> str:
        """``LoadStats.toString()``: ``sum:%.2f, sqSum:%.2f, avg:%.2f, std:%.2f, totalBrokers:%d,
        brokersSortedByLoad:[..]``."""
        return (f"sum:{format_fixed(self.sum, 2)}, sqSum:{format_fixed(self.sq_sum, 2)}, "
                f"avg:{format_fixed(self.avg, 2)}, std:{format_fixed(self.std, 2)}, totalBrokers:{self.total_brokers}, "
                f"brokersSortedByLoad:{java_str([b for b, _ in self.brokers_sorted_by_load])}")

    def peek_min_broker(self) -> str:
        """The broker at the min cursor."""
        return self.brokers_sorted_by_load[self.min_broker_index][0]

    def peek_max_broker(self) -> str:
        """The broker at the max cursor."""
        return self.brokers_sorted_by_load[self.max_broker_index][0]

    def poll_max_broker(self) -> str:
        """The broker at the max cursor; the cursor moves down."""
        broker = self.brokers_sorted_by_load[self.max_broker_index][0]
        self.max_broker_index -= 1
        return broker

    def has_transferable_brokers(self) -> bool:
        """Whether the pairing loop may go on: shedding budget left and the cursors have not met."""
        return (
            self.number_of_broker_shedding_per_cycle < self.max_number_of_broker_shedding_per_cycle
            and self.min_broker_index < self.max_broker_index
        )


# --- result -------------------------------------------------------------------------------------------


@dataclass
class UnloadResult:
    """One cycle's outcome.

    ``decisions``: in emission order (swap decisions of a bundle precede it). ``label``: Success when there
    are decisions, else Skip or Failure. ``reason``: the Skip/Failure reason (``None`` on Success).
    ``recently_unloaded_brokers``: the input map minus the brokers whose cool-down ended (Pulsar prunes
    the scheduler's map in place). ``error``: the exception text when the cycle failed on an exception.
    """

    decisions: list[UnloadDecision]
    label: Label
    reason: Reason | None
    recently_unloaded_brokers: dict[str, int] = field(default_factory=dict)
    error: str | None = None

    @property
    def skip_reason(self) -> Reason | None:
        """The reason when the cycle was skipped, else ``None``."""
        return self.reason if self.label is Label.Skip else None

    def to_json(self) -> dict[str, Any]:
        """``{"decisions": [...], "label", "reason", "recentlyUnloadedBrokers", "error"?}``."""
        out: dict[str, Any] = {
            "decisions": [d.to_json() for d in self.decisions],
            "label": self.label.value,
            "reason": None if self.reason is None else self.reason.value,
            "recentlyUnloadedBrokers": dict(self.recently_unloaded_brokers),
        }
        if self.error is not None:
            out["error"] = self.error
        return out


# --- the strategy -------------------------------------------------------------------------------------


class TransferShedder:
    """Pulsar's extensible-LM ``TransferShedder`` (see the module docstring).

    ``TransferShedder(config, rng)``: ``config`` holds ServiceConfiguration keys (``PulsarConfig`` or a
    dict; missing keys take Pulsar's defaults); ``rng`` is accepted for the common strategy signature and
    not used (the algorithm has no randomness). Carried state: ``unloadConditionHitCount`` and the outcome
    :attr:`counter`; :attr:`stats` holds the last cycle's :class:`LoadStats` (after the std updates).
    """

    def __init__(
        self, config: Mapping[str, Any] | PulsarConfig | None = None, rng: np.random.Generator | None = None
    ) -> None:
        self.config = as_config(config)
        self.rng = rng
        self.stats = LoadStats()
        self.counter = UnloadCounter()
        self.unload_condition_hit_count = 0
        #: set to an :class:`..explain.Explain` to record why (Pulsar's debug-mode lines); None: nothing recorded
        self.explain: Explain | None = None

    # --- state
    def get_state(self) -> dict[str, Any]:
        """``{"unloadConditionHitCount": n, "counter": UnloadCounter JSON}`` (JSON-able)."""
        return {"unloadConditionHitCount": self.unload_condition_hit_count, "counter": self.counter.to_json()}

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`get_state` returned (missing entries reset to the initial state)."""
        self.unload_condition_hit_count = int(state.get("unloadConditionHitCount", 0))
        self.counter = UnloadCounter.from_json(state.get("counter", {}))

    # --- the cycle
    def find_bundles_for_unloading(self, context: TransferContext) -> UnloadResult:
        """Run one shedding cycle on ``context``; updates the hit counter and :attr:`counter`."""
        conf = self.config if context.config is None else as_config(context.config)
        stats = self.stats
        stats.clear()
        decisions: list[UnloadDecision] = []
        recently_unloaded_brokers = dict(context.recently_unloaded_brokers)

        def outcome(label: Label, reason: Reason | None, error: str | None = None) -> UnloadResult:
            return UnloadResult(decisions, label, reason, recently_unloaded_brokers, error)

        def skip(reason: Reason) -> UnloadResult:
            self.counter.update(Label.Skip, reason)
            return outcome(Label.Skip, reason)

        if context.available_brokers is None:
            self.counter.update(Label.Failure, Reason.Unknown)
            return outcome(Label.Failure, Reason.Unknown)

        try:
            entries = context.load_data_entries()
            stats.set_load_data_store(entries)
            debug_mode = bool(conf["loadBalancerDebugModeEnabled"])
            skip_reason = stats.update(entries, context.available_brokers, recently_unloaded_brokers, conf, context.now)
            explain = self.explain
            if explain is not None:
                self._explain_brokers(explain, entries, context, conf)
            if skip_reason is not None:
                if explain is not None:
                    explain.add(None, "skip", slf4j(_CANNOT_CONTINUE_UNLOAD_MSG
                                                    + " Skipped the load stat update. Reason:{}.", skip_reason.value))
                return skip(skip_reason)
            self.counter.update_load_data(stats.avg, stats.std)
            if explain is not None:
                explain.add(None, "stats", slf4j("brokers' load stats:{}", stats.to_string()), avg=stats.avg,
                            std=stats.std,
                            loadBalancerBrokerLoadTargetStd=float(conf["loadBalancerBrokerLoadTargetStd"]),
                            loadBalancerBrokerOverloadedThresholdPercentage=float(
                                conf["loadBalancerBrokerOverloadedThresholdPercentage"]),
                            loadBalancerSheddingConditionHitCountThreshold=int(
                                conf["loadBalancerSheddingConditionHitCountThreshold"]))

            store = dict(entries)
            target_std = float(conf["loadBalancerBrokerLoadTargetStd"])
            transfer = bool(conf["loadBalancerTransferEnabled"])
            if (
                stats.std > target_std
                or self._is_under_loaded(store, stats.peek_min_broker(), stats, target_std)
                or self._is_over_loaded(store, stats.peek_max_broker(), stats.avg, conf, target_std)
            ):
                self.unload_condition_hit_count += 1
            else:
                self.unload_condition_hit_count = 0
            if self.unload_condition_hit_count <= conf["loadBalancerSheddingConditionHitCountThreshold"]:
                if explain is not None:
                    explain.add(None, "hit-count", slf4j(
                        _CANNOT_CONTINUE_UNLOAD_MSG
                        + " Shedding condition hit count:{} is less than or equal to the threshold:{}.",
                        self.unload_condition_hit_count, conf["loadBalancerSheddingConditionHitCountThreshold"]),
                        unloadConditionHitCount=self.unload_condition_hit_count)
                return skip(Reason.HitCount)

            brokers_with_empty_load_data = 0
            brokers_with_few_bundles = 0
            excluded_namespaces = conf["loadBalancerSheddingExcludedNamespaces"]
            while stats.has_transferable_brokers():
                if stats.std > target_std:
                    reason = Reason.Overloaded
                elif self._is_under_loaded(store, stats.peek_min_broker(), stats, target_std):
                    reason = Reason.Underloaded
                    if explain is not None:
                        explain.add(stats.peek_min_broker(), "underloaded", (
                            "broker:%s is underloaded:%s although load std:%s <= targetStd:%s. "
                            "Continuing unload for this underloaded broker.") % (
                            stats.peek_min_broker(), store[stats.peek_min_broker()].to_string(conf),
                            format_fixed(stats.std, 2), format_fixed(target_std, 2)))
                elif self._is_over_loaded(store, stats.peek_max_broker(), stats.avg, conf, target_std):
                    reason = Reason.Overloaded
                    if explain is not None:
                        explain.add(stats.peek_max_broker(), "overloaded", (
                            "broker:%s is overloaded:%s although load std:%s <= targetStd:%s. "
                            "Continuing unload for this overloaded broker.") % (
                            stats.peek_max_broker(), store[stats.peek_max_broker()].to_string(conf),
                            format_fixed(stats.std, 2), format_fixed(target_std, 2)))
                else:
                    if explain is not None:
                        explain.add(None, "target-met", slf4j(
                            _CANNOT_CONTINUE_UNLOAD_MSG + "The overall cluster load meets the target, std:{} <= "
                            "targetStd:{}.minBroker:{} is not underloaded. maxBroker:{} is not overloaded.",
                            stats.std, target_std, stats.peek_min_broker(), stats.peek_max_broker()))
                    break

                max_broker = stats.poll_max_broker()
                min_broker = stats.peek_min_broker()
                max_data = store.get(max_broker)
                min_data = store.get(min_broker)
                if max_data is None or min_data is None:
                    brokers_with_empty_load_data += 1
                    continue
                max_load = max_data.weighted_max_ema
                min_load = min_data.weighted_max_ema
                offload = (max_load - min_load) / 2
                max_broker_throughput = max_data.msg_throughput_in + max_data.msg_throughput_out
                min_broker_throughput = min_data.msg_throughput_in + min_data.msg_throughput_out
                offload_throughput = double_divide(max_broker_throughput * offload, max_load)
                if explain is not None:
                    explain.add(max_broker, "shed", (
                        "Attempting to shed load from broker:%s%s, which has the max resource usage:%s%%, "
                        "targetStd:%s, -- Trying to offload %s%%, %s KByte/s of traffic.") % (
                        max_broker, " to broker:" + min_broker if transfer else "", format_fixed(max_load * 100, 2),
                        format_fixed(target_std, 2), format_fixed(offload * 100, 2),
                        format_fixed(offload_throughput / _KB, 2)),
                        reason=reason.value, destination=min_broker if transfer else None,
                        offloadThroughput=offload_throughput)
                    explain.add(min_broker, "receive", f"{min_broker} is the min broker paired with {max_broker}",
                                pulsar_log=False)

                traffic_marked_to_offload = 0.0
                traffic_marked_to_gain = 0.0

                max_top = context.top_bundles(max_broker)
                if not max_top:
                    if explain is not None:
                        explain.add(max_broker, "no-top-bundles",
                                    _CANNOT_UNLOAD_BROKER_MSG % max_broker + " TopBundlesLoadData is empty.")
                    brokers_with_empty_load_data += 1
                    continue
                if len(max_top) == 1:
                    if explain is not None:
                        explain.add(max_broker, "sole-bundle", _CANNOT_UNLOAD_BROKER_MSG % max_broker
                                    + " Sole namespace bundle:%s is overloading the broker. " % max_top[0][0])
                    brokers_with_few_bundles += 1
                    continue
                min_top = context.top_bundles(min_broker)
                # One iterator for all bundles of this max broker: a later swap search resumes where the
                # previous one stopped.
                min_top_iter = iter(min_top) if min_top is not None else None

                remaining_top_bundles = len(max_top)
                for bundle, bundle_stats in max_top:
                    if not context.is_owner(bundle, max_broker):
                        continue
                    if bundle_namespace(bundle) in excluded_namespaces:
                        continue
                    if bundle in context.recently_unloaded_bundles:
                        continue
                    if not context.is_transferable(bundle, max_broker, min_broker):
                        continue
                    if remaining_top_bundles <= 1:
                        break
                    bundle_throughput = _throughput(bundle_stats)
                    if bundle_throughput == 0:
                        continue

                    swap = False
                    min_to_max: list[str] = []
                    swap_throughput = 0.0
                    if traffic_marked_to_offload - traffic_marked_to_gain + bundle_throughput > offload_throughput:
                        if transfer and min_top_iter is not None:
                            max_new = (
                                max_broker_throughput - traffic_marked_to_offload + traffic_marked_to_gain
                                - bundle_throughput
                            )
                            min_new = (
                                min_broker_throughput + traffic_marked_to_offload - traffic_marked_to_gain
                                + bundle_throughput
                            )
                            for min_bundle, min_bundle_stats in min_top_iter:
                                if not context.is_transferable(min_bundle, min_broker, max_broker):
                                    continue
                                min_bundle_throughput = _throughput(min_bundle_stats)
                                if min_bundle_throughput == 0:
                                    continue
                                max_tmp = max_new + min_bundle_throughput
                                min_tmp = min_new - min_bundle_throughput
                                if max_tmp < max_broker_throughput and min_tmp < max_broker_throughput:
                                    min_to_max.append(min_bundle)
                                    max_new = max_tmp
                                    min_new = min_tmp
                                    swap_throughput += min_bundle_throughput
                                    if min_new <= max_new and max_new < max_broker_throughput * 0.75:
                                        swap = True
                                        break
                        if not swap:
                            break

                    if transfer:
                        if swap:
                            decisions.extend(
                                UnloadDecision(min_broker, b, max_broker, reason) for b in min_to_max
                            )
                            # Pulsar credits the swapped-back traffic only inside its debug-logging branch.
                            if debug_mode:
                                traffic_marked_to_gain += swap_throughput
                        decisions.append(UnloadDecision(max_broker, bundle, min_broker, reason))
                    else:
                        decisions.append(UnloadDecision(max_broker, bundle, None, reason))
                    traffic_marked_to_offload += bundle_throughput
                    remaining_top_bundles -= 1

                if traffic_marked_to_offload > 0:
                    adjusted_offload = double_divide(
                        (traffic_marked_to_offload - traffic_marked_to_gain) * max_load, max_broker_throughput
                    )
                    stats.offload(max_load, min_load, adjusted_offload)
                else:
                    brokers_with_few_bundles += 1

            if explain is not None and not stats.has_transferable_brokers():
                explain.add(None, "exhausted", _CANNOT_CONTINUE_UNLOAD_MSG + " Exhausted target transfer brokers.")
            if not decisions:
                if brokers_with_empty_load_data > 0:
                    return skip(Reason.NoLoadData)
                if brokers_with_few_bundles > 0:
                    return skip(Reason.NoBundles)
                return skip(Reason.HitCount)
            self.unload_condition_hit_count = 0
            return outcome(Label.Success, None)
        except Exception as err:  # noqa: BLE001 - Pulsar counts any failure of the cycle as Failure/Unknown
            self.counter.update(Label.Failure, Reason.Unknown)
            return outcome(Label.Failure, Reason.Unknown, f"{type(err).__name__}: {err}")

    @staticmethod
    def _explain_brokers(explain: Explain, entries: list[tuple[str, BrokerLoadData]], context: TransferContext,
                         conf: PulsarConfig) -> None:
        """One record per broker of the store: ``BrokerLoadData.toString(conf)``, as Pulsar's debug lines print it."""
        ttl_ms = conf["loadBalancerBrokerLoadDataTTLInSeconds"] * 1000
        for broker, data in entries:
            outdated = context.now - data.updated_at > ttl_ms
            if outdated:
                explain.add(broker, "outdated", slf4j(
                    "Ignoring broker:{} load update because the load data timestamp:{} is too old.", broker,
                    data.updated_at), weightedMaxEMA=data.weighted_max_ema, updatedAt=data.updated_at)
            else:
                explain.add(broker, "load", f"broker:{broker} {data.to_string(conf)}", pulsar_log=False,
                            weightedMaxEMA=data.weighted_max_ema,
                            maxResourceUsage=data.max_resource_usage, msgThroughputEMA=data.msg_throughput_ema,
                            updatedAt=data.updated_at)

    # --- broker tests
    @staticmethod
    def _is_under_loaded(
        store: Mapping[str, BrokerLoadData], broker: str, stats: LoadStats, target_std: float
    ) -> bool:
        data = store.get(broker)
        if data is None:
            return False
        multiplier = math_min(0.5, math_max(0.0, target_std / 2.0))
        if data.weighted_max_ema < stats.avg * multiplier:
            return True
        max_data = store.get(stats.peek_max_broker())
        if max_data is None:
            return False
        return data.msg_throughput_ema < max_data.msg_throughput_ema * multiplier

    @staticmethod
    def _is_over_loaded(
        store: Mapping[str, BrokerLoadData], broker: str, avg_load: float, conf: PulsarConfig, target_std: float
    ) -> bool:
        data = store.get(broker)
        if data is None:
            return False
        overload_threshold = conf["loadBalancerBrokerOverloadedThresholdPercentage"] / 100.0
        load = data.weighted_max_ema
        return load > overload_threshold and load > avg_load + target_std
