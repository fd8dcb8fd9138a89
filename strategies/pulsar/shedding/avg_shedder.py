"""``AvgShedder`` (PIP-364): pair the most and least loaded brokers, share load evenly, plan the destination.

Follows the newest ``LB/impl/AvgShedder.java``. One object is both the shedding and the placement
strategy (Pulsar requires ``loadBalancerLoadPlacementStrategy`` to name the same class).

Shedding, per call:

1. ``score = 100 * weightedMax4`` (CPU, direct memory, bandwidth in/out weights; fraction → points),
   current values only, no history. ``brokerScoreMap`` is a ``HashMap`` filled in ``getBrokerData()``
   order; brokers are sorted ascending by ``Double.compare`` of the score (stable, so ties keep the
   ``HashMap`` order).
2. Pairing ``i = 0, j = n - 1`` while ``i <= j`` (the middle broker of an odd count pairs with itself):
   ``d = score[max] - score[min]``. ``d < loadBalancerAvgShedderLowThreshold`` removes both brokers from
   both hit maps; otherwise the pair is kept and both get a low hit, and, when ``d >=
   loadBalancerAvgShedderHighThreshold``, a high hit too — else their high hits are removed. Equality with
   a threshold counts as a hit. No pair at all clears both maps and returns nothing.
3. For each pair in order (outermost first): unless one of the four counters of the two brokers has
   reached its threshold (``>= HitCountHigh`` / ``>= HitCountLow``), skip it — counters belong to
   brokers, so hits earned with earlier partners count. Otherwise both brokers' counters are removed
   **before** checking traffic, so a trigger that moves nothing still resets them.
4. ``needRate = (rate(max) - rate(min)) * maxUnloadPercentage`` (broker totals, in + out); if it is
   ``> minUnloadMessage`` the metric is the bundle short-term msg rate, else if the throughput
   equivalent is ``> minUnloadMessageThroughput`` it is short-term throughput, else nothing moves.
   Bundles of the max broker (``getBundleDataForLoadShedding()`` order, not recently unloaded), largest
   metric first (stable), are taken when ``0 < metric <= remaining``, and each taken bundle is planned to go
   to the min broker. A sole bundle is **not** protected (Pulsar only logs).

Placement (``select_broker``): the planned broker if there is one and it is a candidate; otherwise the
candidates are sorted (``String.compareTo``), a random 32-bit int is drawn (from ``rng``: Java's
``new Random().nextInt()`` is not reproducible), the CRC32 of its decimal string picks
``sorted[crc % len(sorted)]``, and that pick is remembered as the plan. No candidates raise
``ZeroDivisionError`` (an ``ArithmeticError``, like Java's ``ArithmeticException`` from ``% 0``; Pulsar's
fallback divides by zero again). One draw is consumed per unplanned placement, even the failing one.

State (``get_state``): ``bundleBrokerMap`` {bundle: broker} (Java keys it by the ``BundleData`` object,
whose hash is its stats, so equal stats collide; keyed by bundle name here), ``brokerHitCountForHigh``,
``brokerHitCountForLow`` {broker: count} (including the zero entries Java's ``computeIfAbsent`` leaves
behind), ``brokerScoreMap`` {broker: last score}.

Departures: the table length of ``brokerScoreMap`` after the broker count shrinks below a past maximum
above 12 is not carried (ties would then iterate as in a fresh map).

Explain hook (``explain``, see :mod:`..explain`): Pulsar's structured lines ``Broker score``, ``sorted broker
list``, ``Broker hit counts`` and, per pair that triggers, ``"broker:[%s] is planning to shed bundles to
broker:[%s]. maxBroker stat:scores:%s, ..."`` (or its "less than minimumThroughputThreshold" variant).
"""
from __future__ import annotations

import zlib
from typing import Any, Iterable, Mapping

import numpy as np

from clusteremu.base.java import INT_MAX, INT_MIN, double_compare_key, java_order, string_compare_key

from ..config import PulsarConfig
from ..explain import Explain, java_str
from ..load_data import BundleData, LoadData
from .bundle_selection import largest_first, short_term_msg_rate, short_term_throughput
from .unload_plan import UnloadPlan

__all__ = ["AvgShedder"]

_MB = 1024.0 * 1024.0


def _structured(message: str, **attrs: Any) -> str:
    """A structured log line (``log.info().attr(k, v)...log(message)``) as ``message k=v k=v``."""
    return " ".join([message, *(f"{k}={java_str(v)}" for k, v in attrs.items())])


class AvgShedder:
    """Pulsar's ``AvgShedder``: a stateful shedding strategy that also places bundles."""

    def __init__(self, config: PulsarConfig, rng: np.random.Generator | None = None) -> None:
        self.config = config
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.bundle_broker_map: dict[str, str] = {}
        self.broker_score_map: dict[str, float] = {}
        self.broker_hit_count_for_high: dict[str, int] = {}
        self.broker_hit_count_for_low: dict[str, int] = {}
        #: set to an Explain to record why (see the module docstring); None: nothing is recorded
        self.explain: Explain | None = None

    # --- state
    def get_state(self) -> dict[str, Any]:
        """The carried maps, keyed by the Java field names (see the module docstring)."""
        return {
            "bundleBrokerMap": dict(self.bundle_broker_map),
            "brokerHitCountForHigh": dict(self.broker_hit_count_for_high),
            "brokerHitCountForLow": dict(self.broker_hit_count_for_low),
            "brokerScoreMap": dict(self.broker_score_map),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`get_state` returned (missing maps read as empty)."""
        self.bundle_broker_map = {str(k): str(v) for k, v in dict(state.get("bundleBrokerMap", {})).items()}
        self.broker_hit_count_for_high = {
            str(k): int(v) for k, v in dict(state.get("brokerHitCountForHigh", {})).items()
        }
        self.broker_hit_count_for_low = {str(k): int(v) for k, v in dict(state.get("brokerHitCountForLow", {})).items()}
        self.broker_score_map = {str(k): float(v) for k, v in dict(state.get("brokerScoreMap", {})).items()}

    def planned_destination(self, bundle: str) -> str | None:
        """The broker ``bundle`` is planned to move to (set when it was selected for unloading), if any."""
        return self.bundle_broker_map.get(bundle)

    # --- shedding
    def find_bundles_for_unloading(self, load: LoadData) -> list[tuple[str, str]]:
        """``findBundlesForUnloading``: (broker, bundle) pairs in Pulsar's order."""
        conf = self.config
        plan = UnloadPlan()  # a fresh multimap per call, as in the newest code
        low_threshold = float(conf["loadBalancerAvgShedderLowThreshold"])
        high_threshold = float(conf["loadBalancerAvgShedderHighThreshold"])
        hit_count_high = conf["loadBalancerAvgShedderHitCountHighThreshold"]
        hit_count_low = conf["loadBalancerAvgShedderHitCountLowThreshold"]

        brokers = self._calculate_scores_and_sort(load)
        pairs = self._find_broker_pairs(brokers, low_threshold, high_threshold)
        explain = self.explain
        if explain is not None:
            for broker in brokers:
                local = load.broker_data[broker].local_data
                explain.add(broker, "score", _structured(
                    "Broker score", broker=broker, score=self.broker_score_map[broker],
                    throughput=local.msg_throughput_in + local.msg_throughput_out,
                    messageRate=local.msg_rate_in + local.msg_rate_out), score=self.broker_score_map[broker])
            explain.add(None, "sorted", _structured("sorted broker list", brokers=brokers),
                        loadBalancerAvgShedderLowThreshold=low_threshold,
                        loadBalancerAvgShedderHighThreshold=high_threshold,
                        loadBalancerAvgShedderHitCountHighThreshold=hit_count_high,
                        loadBalancerAvgShedderHitCountLowThreshold=hit_count_low)
            explain.add(None, "hit-counts", _structured(
                "Broker hit counts", brokerHitCountForHigh=dict(self.broker_hit_count_for_high),
                brokerHitCountForLow=dict(self.broker_hit_count_for_low)),
                brokerHitCountForHigh=dict(self.broker_hit_count_for_high),
                brokerHitCountForLow=dict(self.broker_hit_count_for_low))
            if not pairs:
                explain.add(None, "no-pair", "there is no any overload broker, no need to shedding bundles.")
            for underloaded, overloaded in pairs:
                difference = self.broker_score_map[overloaded] - self.broker_score_map[underloaded]
                for broker in (underloaded, overloaded):
                    explain.add(broker, "paired", f"paired {underloaded} (min) with {overloaded} (max): score "
                                f"difference {java_str(difference)}", pulsar_log=False,
                                pairedWith=overloaded if broker == underloaded else underloaded,
                                scoreDifference=difference,
                                hitCountHigh=self.broker_hit_count_for_high.get(broker, 0),
                                hitCountLow=self.broker_hit_count_for_low.get(broker, 0))
        if not pairs:
            self.broker_hit_count_for_high.clear()
            self.broker_hit_count_for_low.clear()
            return plan.entries()

        high, low = self.broker_hit_count_for_high, self.broker_hit_count_for_low
        sheddable: Mapping[str, BundleData] | None = None  # getBundleDataForLoadShedding(), on first need
        for underloaded, overloaded in pairs:
            # computeIfAbsent(.., 0) with && short-circuiting: entries appear only up to the first hit.
            if not (
                high.setdefault(underloaded, 0) >= hit_count_high
                or high.setdefault(overloaded, 0) >= hit_count_high
                or low.setdefault(underloaded, 0) >= hit_count_low
                or low.setdefault(overloaded, 0) >= hit_count_low
            ):
                if explain is not None:
                    for broker in (underloaded, overloaded):
                        explain.add(broker, "hit-count-below", f"{overloaded} and {underloaded}: no hit count has "
                                    f"reached loadBalancerAvgShedderHitCountHighThreshold={hit_count_high} or "
                                    f"loadBalancerAvgShedderHitCountLowThreshold={hit_count_low} yet",
                                    pulsar_log=False)
                continue
            for counters in (high, low):
                counters.pop(underloaded, None)
                counters.pop(overloaded, None)
            if sheddable is None:
                sheddable = load.get_bundle_data_for_load_shedding()
            self._select_bundles_for_unloading(load, overloaded, underloaded, plan, sheddable)
        return plan.entries()

    def _calculate_scores_and_sort(self, load: LoadData) -> list[str]:
        self.broker_score_map.clear()
        weights = self.config.resource_weights()
        for broker in load.brokers_in_java_order():
            local = load.broker_data[broker].local_data
            self.broker_score_map[broker] = local.max_resource_usage_with_weight(*weights) * 100
        in_hash_map_order = java_order(self.broker_score_map, "hashmap")
        return sorted(in_hash_map_order, key=lambda b: double_compare_key(self.broker_score_map[b]))

    def _find_broker_pairs(self, brokers: list[str], low_threshold: float, high_threshold: float) -> list[tuple[str, str]]:
        high, low = self.broker_hit_count_for_high, self.broker_hit_count_for_low
        pairs: list[tuple[str, str]] = []
        i, j = 0, len(brokers) - 1
        while i <= j:
            max_broker, min_broker = brokers[j], brokers[i]
            difference = self.broker_score_map[max_broker] - self.broker_score_map[min_broker]
            if difference < low_threshold:
                for counters in (high, low):
                    counters.pop(max_broker, None)
                    counters.pop(min_broker, None)
            else:
                pairs.append((min_broker, max_broker))
                low[min_broker] = low.get(min_broker, 0) + 1
                low[max_broker] = low.get(max_broker, 0) + 1
                if difference < high_threshold:
                    high.pop(max_broker, None)
                    high.pop(min_broker, None)
                else:
                    high[min_broker] = high.get(min_broker, 0) + 1
                    high[max_broker] = high.get(max_broker, 0) + 1
            i += 1
            j -= 1
        return pairs

    def _select_bundles_for_unloading(
        self, load: LoadData, overloaded: str, underloaded: str, plan: UnloadPlan, sheddable: Mapping[str, BundleData]
    ) -> None:
        conf = self.config
        min_local = load.broker_data[underloaded].local_data
        max_local = load.broker_data[overloaded].local_data
        max_unload_percentage = conf["maxUnloadPercentage"]
        msg_required = (
            (max_local.msg_rate_in + max_local.msg_rate_out) - (min_local.msg_rate_in + min_local.msg_rate_out)
        ) * max_unload_percentage
        throughput_required = (
            (max_local.msg_throughput_in + max_local.msg_throughput_out)
            - (min_local.msg_throughput_in + min_local.msg_throughput_out)
        ) * max_unload_percentage

        if msg_required > conf["minUnloadMessage"]:
            metric, remaining = short_term_msg_rate, msg_required
        elif throughput_required > conf["minUnloadMessageThroughput"]:
            metric, remaining = short_term_throughput, throughput_required
        else:
            if self.explain is not None:
                self.explain.add(overloaded, "below-min-unload", (
                    "broker:[%s] is planning to shed bundles to broker:[%s],but the throughput %s MByte/s is "
                    "less than minimumThroughputThreshold %s MByte/s, and the msgRate %s rate/s"
                    " is also less than minimumMsgRateThreshold %s rate/s, skipping bundle unload.") % (
                    overloaded, underloaded, java_str(throughput_required / _MB),
                    java_str(conf["minUnloadMessageThroughput"] / _MB), java_str(msg_required),
                    java_str(float(conf["minUnloadMessage"]))))
            return
        if self.explain is not None:
            max_throughput = max_local.msg_throughput_in + max_local.msg_throughput_out
            min_throughput = min_local.msg_throughput_in + min_local.msg_throughput_out
            self.explain.add(overloaded, "shed", (
                "broker:[%s] is planning to shed bundles to broker:[%s]. "
                "maxBroker stat:scores:%s, throughput:%s, msgRate:%s. "
                "minBroker stat:scores:%s, throughput:%s, msgRate:%s. "
                "isMsgRateToOffload:%s,  trafficMarkedToOffload:%s") % (
                overloaded, underloaded, java_str(self.broker_score_map.get(overloaded)), java_str(max_throughput),
                java_str(max_local.msg_rate_in + max_local.msg_rate_out),
                java_str(self.broker_score_map.get(underloaded)), java_str(min_throughput),
                java_str(min_local.msg_rate_in + min_local.msg_rate_out),
                java_str(metric is short_term_msg_rate), java_str(remaining)),
                destination=underloaded, trafficMarkedToOffload=remaining,
                isMsgRateToOffload=metric is short_term_msg_rate)
            self.explain.add(underloaded, "receive", f"{underloaded} is the planned destination of what "
                             f"{overloaded} sheds", pulsar_log=False)

        for bundle, traffic in largest_first(load, set(max_local.bundles), metric, sheddable):
            if traffic > 0 and traffic <= remaining:
                plan.put(overloaded, bundle)
                self.bundle_broker_map[bundle] = underloaded
                remaining -= traffic

    # --- placement
    def select_broker(self, candidates: Iterable[str], bundle: str, load: LoadData | None = None) -> str:
        """``selectBroker``: the planned destination of ``bundle`` if it is a candidate, else a uniformly
        random candidate (CRC32 of a random int over the sorted candidates), remembered as the new plan.

        Raises ``ZeroDivisionError`` when ``candidates`` is empty, as Java throws ``ArithmeticException``.
        """
        candidate_list = list(candidates)
        planned = self.bundle_broker_map.get(bundle)
        if planned is None or planned not in candidate_list:
            broker = self._expected_broker(candidate_list)
            self.bundle_broker_map[bundle] = broker
            return broker
        return planned

    def _expected_broker(self, candidates: list[str]) -> str:
        sorted_brokers = sorted(candidates, key=string_compare_key)
        random_int = int(self.rng.integers(INT_MIN, INT_MAX + 1))  # a uniform Java int
        hash_code = zlib.crc32(str(random_int).encode("utf-8"))
        if not sorted_brokers:
            raise ZeroDivisionError("/ by zero: AvgShedder.selectBroker has no candidate broker")
        return sorted_brokers[hash_code % len(sorted_brokers)]
