"""``DefaultNamespaceBundleSplitStrategyImpl``: which of a broker's bundles the extensible load manager splits.

Follows ``EXT/strategy/DefaultNamespaceBundleSplitStrategyImpl.java`` (newest stored version: the one with
``splitConditionHitCounts``, the ``Splitting`` check and the children named in the decision, matching the
channel protocol the model follows). Every broker runs it for the bundles *it* serves (``SplitScheduler`` is
started by each broker's load manager, not only by the leader), from its own ``getBundleStats()`` — the full
per-bundle stats, not the top-k report.

API::

    from clusteremu.strategies import pulsar
    from clusteremu.strategies.pulsar.extensible.split_strategy import SplitContext

    s = pulsar.create("DefaultNamespaceBundleSplitStrategyImpl", config)   # or the fully-qualified name
    ctx = SplitContext(broker_id, bundle_stats, owned_bundles, splitting_bundles, namespace_bundle_counts,
                       bundle_topics=..., topic_stats=...)
    decisions = s.find_bundles_to_split(ctx)       # [SplitDecision], Success only, in selection order
    s.counter                                      # SplitCounter (Failure/Unknown counted here)
    s.get_state(); s.set_state(state)              # {"splitConditionHitCounts": {bundle: n}}

One call (``findBundlesToSplit``), with ``bundle_stats`` in the broker's map order:

1. forget the hit counts of bundles no longer in ``bundle_stats``;
2. per bundle: skip it when it has fewer than 2 topics, or when the channel does not have it ``Owned`` by this
   broker; count a Failure and skip it when its range cannot be split (``upper - lower <= 1``);
3. the reason, first that holds (all strict): topics ``> loadBalancerNamespaceBundleMaxTopics`` → ``Topics``;
   ``loadBalancerNamespaceBundleMaxSessions > 0`` and producers + consumers above it → ``Sessions``; msg rate
   in + out ``> loadBalancerNamespaceBundleMaxMsgRate`` → ``MsgRate``; throughput in + out
   ``> loadBalancerNamespaceBundleMaxBandwidthMbytes`` MiB/s → ``Bandwidth``. A hot bundle's hit count goes up
   by one, a cool one's is forgotten;
4. nothing more while the hit count is ``<= loadBalancerNamespaceBundleSplitConditionHitCountThreshold`` (so a
   bundle splits on its threshold+1-th hot cycle in a row);
5. skip it when its namespace's bundle count plus the splits already chosen in it this call reach
   ``loadBalancerNamespaceMaximumBundles`` (the hit count is kept); a namespace whose count is unknown counts a
   Failure (Java: ``getBundleCount`` threw);
6. skip it when a bundle of the channel in ``Splitting`` has a name starting with the namespace and a range
   starting with this bundle's lower bound or ending with its upper bound (string tests, as in Java);
7. the boundary from ``defaultNamespaceBundleSplitAlgorithm``
   (:func:`clusteremu.strategies.pulsar.split.algorithms.get_split_boundaries` over the topics the broker serves
   in it): none, an error, or other than exactly one boundary counts a Failure and skips it;
8. otherwise a ``Success`` decision with the two children ``[lower, boundary)`` and ``[boundary, upper]``
   (no destination), the hit count forgotten; stop once ``loadBalancerMaxNumberOfBundlesToSplitPerCycle``
   decisions were made (``==``, so 0 means no limit).

Departure: Java returns a ``HashSet`` of decisions, which the scheduler publishes in the set's order; this returns
them in the order they were chosen. No model could follow the set's order: ``SplitDecision``'s Lombok
``hashCode`` includes its ``Label`` and ``Reason`` enums, whose hash codes are identity hashes that differ from one
JVM run to the next, so Pulsar itself publishes a run's splits in an order that varies between runs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection, Mapping, Sequence

import numpy as np

from ..config import PulsarConfig, as_config
from ..load_data import NamespaceBundleStats
from ..split import algorithms
from ..split.bundles import BundleRange, can_split_bundle, namespace_of_bundle, range_of_bundle, split_bundle
from .split_counter import SplitCounter
from .split_decision import Split, SplitDecision, SplitLabel, SplitReason

__all__ = ["DefaultNamespaceBundleSplitStrategyImpl", "SplitContext"]

_MIB = 1024 * 1024


@dataclass(frozen=True)
class SplitContext:
    """The inputs of one ``findBundlesToSplit`` on one broker.

    ``bundle_stats``: the broker's ``getBundleStats()`` (bundle name → stats), in its map order;
    ``owned_bundles``: the bundles the channel's table view has ``Owned`` by this broker (``isOwner``);
    ``splitting_bundles``: the bundles whose record is ``Splitting`` (``getOwnershipEntrySet``);
    ``namespace_bundle_counts``: namespace → its current number of bundles (``getBundleCount``);
    ``bundle_topics`` / ``topic_stats``: the topics the broker serves per bundle and their traffic, read by the
    topic-count and flow/QPS split algorithms only.
    """

    broker_id: str
    bundle_stats: Mapping[str, NamespaceBundleStats]
    owned_bundles: Collection[str]
    splitting_bundles: Collection[str]
    namespace_bundle_counts: Mapping[str, int]
    bundle_topics: Mapping[str, Sequence[str]] = field(default_factory=dict)
    topic_stats: Mapping[str, algorithms.TopicTraffic] = field(default_factory=dict)


class DefaultNamespaceBundleSplitStrategyImpl:
    """The extensible load manager's split strategy (see the module docstring)."""

    def __init__(self, config: Mapping[str, Any] | PulsarConfig | None = None,
                 rng: np.random.Generator | None = None, counter: SplitCounter | None = None) -> None:
        self.config = as_config(config)
        self.counter = counter if counter is not None else SplitCounter()
        self.split_condition_hit_counts: dict[str, int] = {}

    # --- state
    def get_state(self) -> dict[str, Any]:
        return {"splitConditionHitCounts": dict(self.split_condition_hit_counts)}

    def set_state(self, state: Mapping[str, Any]) -> None:
        self.split_condition_hit_counts = {str(k): int(v) for k, v in
                                           dict(state.get("splitConditionHitCounts", {})).items()}

    # --- the decision
    def find_bundles_to_split(self, ctx: SplitContext) -> list[SplitDecision]:
        cfg = self.config
        max_bundle_count = cfg["loadBalancerNamespaceMaximumBundles"]
        max_topics = cfg["loadBalancerNamespaceBundleMaxTopics"]
        max_sessions = cfg["loadBalancerNamespaceBundleMaxSessions"]
        max_msg_rate = cfg["loadBalancerNamespaceBundleMaxMsgRate"]
        max_bandwidth = cfg["loadBalancerNamespaceBundleMaxBandwidthMbytes"] * _MIB
        max_split_count = cfg["loadBalancerMaxNumberOfBundlesToSplitPerCycle"]
        threshold = cfg["loadBalancerNamespaceBundleSplitConditionHitCountThreshold"]
        algorithm = cfg["defaultNamespaceBundleSplitAlgorithm"]
        hits = self.split_condition_hit_counts
        for gone in [b for b in hits if b not in ctx.bundle_stats]:
            del hits[gone]
        splitting = {b: range_of_bundle(b) for b in ctx.splitting_bundles}
        chosen_per_namespace: dict[str, int] = {}
        decisions: list[SplitDecision] = []
        for bundle, stats in ctx.bundle_stats.items():
            if stats.topics < 2 or bundle not in ctx.owned_bundles:
                continue
            namespace, bundle_range = namespace_of_bundle(bundle), range_of_bundle(bundle)
            parent = BundleRange.parse(bundle_range)
            if not can_split_bundle(parent):
                self.counter.update(SplitLabel.Failure, SplitReason.Unknown)
                continue
            reason = _reason(stats, max_topics, max_sessions, max_msg_rate, max_bandwidth)
            if reason is SplitReason.Unknown:
                hits.pop(bundle, None)
            else:
                hits[bundle] = hits.get(bundle, 0) + 1
            if hits.get(bundle, 0) <= threshold:
                continue
            count = ctx.namespace_bundle_counts.get(namespace)
            if count is None:
                self.counter.update(SplitLabel.Failure, SplitReason.Unknown)
                continue
            if count + chosen_per_namespace.get(namespace, 0) >= max_bundle_count:
                continue
            lower, upper = bundle_range.split("_")[:2]
            if any(other.startswith(namespace) and (other_range.startswith(lower) or other_range.endswith(upper))
                   for other, other_range in splitting.items()):
                continue  # the bundle (or its parent) is being split
            children = self._children(bundle, parent, algorithm, ctx)
            if children is None:
                self.counter.update(SplitLabel.Failure, SplitReason.Unknown)
                continue
            split = Split(bundle, ctx.broker_id, {str(child): None for child in children})
            decisions.append(SplitDecision(split, SplitLabel.Success, reason))
            chosen_per_namespace[namespace] = chosen_per_namespace.get(namespace, 0) + 1
            hits.pop(bundle, None)
            if len(decisions) == max_split_count:
                break
        return decisions

    def _children(self, bundle: str, parent: BundleRange, algorithm: str,
                  ctx: SplitContext) -> list[BundleRange] | None:
        """``getSplitBoundary`` with the configured algorithm, then the two children; None when it fails."""
        try:
            boundaries = algorithms.get_split_boundaries(
                algorithm, parent, list(ctx.bundle_topics.get(bundle, ())), config=self.config,
                topic_stats=ctx.topic_stats)
        except ValueError:
            return None
        if boundaries is None or len(boundaries) != 1:
            return None
        try:
            return split_bundle(parent, boundaries=boundaries)
        except ValueError:
            return None


def _reason(stats: NamespaceBundleStats, max_topics: int, max_sessions: int, max_msg_rate: int,
            max_bandwidth: int) -> SplitReason:
    """The first split condition the bundle meets, ``Unknown`` when none."""
    if stats.topics > max_topics:
        return SplitReason.Topics
    if max_sessions > 0 and stats.consumer_count + stats.producer_count > max_sessions:
        return SplitReason.Sessions
    if stats.msg_rate_in + stats.msg_rate_out > max_msg_rate:
        return SplitReason.MsgRate
    if stats.msg_throughput_in + stats.msg_throughput_out > max_bandwidth:
        return SplitReason.Bandwidth
    return SplitReason.Unknown
