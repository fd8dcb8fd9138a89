"""The modular load manager's automatic bundle split decision (reference §9.1), as pure functions.

``BundleSplitterTask.findBundlesToSplit`` picks hot bundles; ``ModularLoadManagerImpl.checkNamespaceBundleSplit``
(run by the leader at the end of every ``updateAll``) turns them into split requests, each with an "unload the
children" flag. The split itself — boundaries from ``defaultNamespaceBundleSplitAlgorithm``, children owned by
the same broker, then optionally unloaded — happens on the owning broker (see :mod:`.algorithms` and
:func:`.bundles.split_bundle`).

API::

    from clusteremu.strategies.pulsar.split import auto_split
    auto_split.find_bundles_to_split(load, config, namespace_bundles)           # -> {bundle: broker}
    auto_split.check_namespace_bundle_split(load, config, is_leader=True, known_brokers=brokers,
        namespace_bundles=ns_bundles, available_brokers=brokers, policies=policies,
        broker_to_namespace_to_bundle_range=ns_map)                             # -> [BundleSplitDecision]

``load`` is the leader's :class:`~clusteremu.strategies.pulsar.load_data.LoadData`; ``config`` ServiceConfiguration keys;
``namespace_bundles`` maps a namespace to its current bundle ranges (``"0x..._0x..."``; the namespace's
``NamespaceBundles``) — a namespace missing from it has the single full bundle, as Pulsar's bundle factory
assumes when no boundaries are stored.

``find_bundles_to_split``, for every broker (``ConcurrentHashMap`` order) and every bundle in its ``lastStats``:

* skip bundles with fewer than 2 topics (a 1-topic bundle is never split);
* rate and throughput are the **long-term** averages (in + out) of the bundle's history, 0 without history;
* hot if ``topics > loadBalancerNamespaceBundleMaxTopics``, or (``loadBalancerNamespaceBundleMaxSessions > 0``
  and producers + consumers ``>`` it), or rate ``> loadBalancerNamespaceBundleMaxMsgRate`` (msg/s), or
  throughput ``> loadBalancerNamespaceBundleMaxBandwidthMbytes * 1024 * 1024`` (bytes/s) — all strict;
* a hot bundle is selected only while ``bundle count of its namespace + bundles selected so far in it <
  loadBalancerNamespaceMaximumBundles``. The result is a ``HashMap`` bundle → broker: a bundle reported by
  two brokers keeps the later broker but counts twice against its namespace, as in Pulsar.

``check_namespace_bundle_split`` returns nothing unless ``loadBalancerAutoBundleSplitEnabled``, this broker is
the leader and more than one broker is known. Then, per selected bundle (``HashMap`` order): skip it when
``canSplitBundle`` fails (range too small) or the range is no longer one of its namespace's bundles;
otherwise split it, unloading the children iff ``loadBalancerAutoUnloadSplitBundlesEnabled`` and both
shedding guards allow moving it (``shouldNamespacePoliciesUnload`` and ``shouldAntiAffinityNamespaceUnload``,
see :mod:`clusteremu.strategies.pulsar.placement.filters`). The caller also does what Pulsar does around each split:
forget the bundle's history (``loadData.bundleData`` and the stored bundle data) and its ``lastStats`` entry.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Collection, Mapping, Sequence

from clusteremu.base.java import java_order

from ..config import PulsarConfig, as_config
from ..load_data import LoadData
from ..placement.filters import (
    NamespacePolicies,
    broker_to_namespace_to_bundle_range_of,
    should_anti_affinity_namespace_unload,
    should_namespace_policies_unload,
)
from .bundles import FULL_RANGE, BundleRange, bundle_namespace, bundle_range_name, can_split_bundle

__all__ = ["BundleSplitDecision", "check_namespace_bundle_split", "find_bundles_to_split", "namespace_bundle_count"]

_MIB = 1024 * 1024


@dataclass(frozen=True)
class BundleSplitDecision:
    """One split request: ``splitNamespaceBundle(namespace, range, unload, algorithm=null)`` on ``broker``'s bundle."""

    bundle: str
    broker: str
    unload: bool

    @property
    def namespace(self) -> str:
        return bundle_namespace(self.bundle)

    @property
    def bundle_range(self) -> str:
        return bundle_range_name(self.bundle)


def _ranges_of(namespace: str, namespace_bundles: Mapping[str, Sequence[str]] | None) -> list[BundleRange]:
    if namespace_bundles is None or namespace not in namespace_bundles:
        return [FULL_RANGE]
    return [BundleRange.parse(r) for r in namespace_bundles[namespace]]


def namespace_bundle_count(namespace: str, namespace_bundles: Mapping[str, Sequence[str]] | None) -> int:
    """``NamespaceService.getBundleCount``: the number of bundles the namespace has now (1 if unknown)."""
    if namespace_bundles is None or namespace not in namespace_bundles:
        return 1
    return len(namespace_bundles[namespace])


def find_bundles_to_split(
    load: LoadData,
    config: Mapping[str, Any] | PulsarConfig | None = None,
    namespace_bundles: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, str]:
    """``BundleSplitterTask.findBundlesToSplit``: hot bundles → the broker reporting them, in ``HashMap`` order."""
    cfg = as_config(config)
    max_bundle_count = cfg["loadBalancerNamespaceMaximumBundles"]
    max_topics = cfg["loadBalancerNamespaceBundleMaxTopics"]
    max_sessions = cfg["loadBalancerNamespaceBundleMaxSessions"]
    max_msg_rate = cfg["loadBalancerNamespaceBundleMaxMsgRate"]
    max_bandwidth = cfg["loadBalancerNamespaceBundleMaxBandwidthMbytes"] * _MIB
    selected: dict[str, str] = {}
    selected_per_namespace: dict[str, int] = {}
    for broker in load.brokers_in_java_order():
        last_stats = load.broker_data[broker].local_data.last_stats
        for bundle in java_order(last_stats, "concurrent"):
            stats = last_stats[bundle]
            if stats.topics < 2:
                continue
            rate = 0.0
            throughput = 0.0
            history = load.bundle_data.get(bundle)
            if history is not None:
                rate = history.long_term_data.total_msg_rate()
                throughput = history.long_term_data.total_msg_throughput()
            hot = (
                stats.topics > max_topics
                or (max_sessions > 0 and stats.consumer_count + stats.producer_count > max_sessions)
                or rate > max_msg_rate
                or throughput > max_bandwidth
            )
            if not hot:
                continue
            namespace = bundle_namespace(bundle)
            already = selected_per_namespace.get(namespace, 0)
            if namespace_bundle_count(namespace, namespace_bundles) + already < max_bundle_count:
                selected[bundle] = broker
                selected_per_namespace[namespace] = already + 1
    return {bundle: selected[bundle] for bundle in java_order(selected, "hashmap")}


def check_namespace_bundle_split(
    load: LoadData,
    config: Mapping[str, Any] | PulsarConfig | None = None,
    *,
    is_leader: bool,
    known_brokers: Collection[str],
    namespace_bundles: Mapping[str, Sequence[str]] | None = None,
    available_brokers: Collection[str] | None = None,
    policies: NamespacePolicies | None = None,
    broker_to_namespace_to_bundle_range: Mapping[str, Mapping[str, Collection[str]]] | None = None,
) -> list[BundleSplitDecision]:
    """``checkNamespaceBundleSplit``: the splits the leader requests now, in Pulsar's order.

    ``available_brokers`` (default: ``known_brokers``) and ``policies`` feed the two shedding guards that
    decide ``unload``; ``broker_to_namespace_to_bundle_range`` defaults to the one derived from ``load``.
    """
    cfg = as_config(config)
    if not cfg["loadBalancerAutoBundleSplitEnabled"] or not is_leader or len(known_brokers) <= 1:
        return []
    unload_split_bundles = cfg["loadBalancerAutoUnloadSplitBundlesEnabled"]
    available = list(available_brokers) if available_brokers is not None else list(known_brokers)
    pols = policies if policies is not None else NamespacePolicies()
    ns_map = (
        broker_to_namespace_to_bundle_range
        if broker_to_namespace_to_bundle_range is not None
        else broker_to_namespace_to_bundle_range_of(load)
    )
    decisions: list[BundleSplitDecision] = []
    for bundle, broker in find_bundles_to_split(load, cfg, namespace_bundles).items():
        namespace = bundle_namespace(bundle)
        bundle_range = bundle_range_name(bundle)
        try:
            target = BundleRange.parse(bundle_range)
        except ValueError:
            continue  # Pulsar logs the failure of this one bundle and goes on with the next
        if not can_split_bundle(target):
            continue
        if target not in _ranges_of(namespace, namespace_bundles):
            continue  # the bundle has been removed (split or merged) since the report
        unload = (
            unload_split_bundles
            and should_namespace_policies_unload(
                namespace, bundle_range, broker, available_brokers=available, policies=pols, load=load
            )
            and should_anti_affinity_namespace_unload(
                namespace,
                bundle_range,
                broker,
                available_brokers=available,
                policies=pols,
                load=load,
                broker_to_namespace_to_bundle_range=ns_map,
            )
        )
        decisions.append(BundleSplitDecision(bundle, broker, bool(unload)))
    return decisions
