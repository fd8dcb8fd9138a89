"""The modular load manager's placement pipeline (reference §8.1), as pure functions of the leader's data.

Follows ``ModularLoadManagerImpl.selectBrokerForAssignment`` / ``selectBroker`` / ``preallocateBundle`` (newest).
The emulated leader calls :func:`select_broker_for_assignment` on a lookup of an unowned bundle and
:func:`select_broker` for the destination of a bundle it sheds.

API::

    d = select_broker_for_assignment(bundle, available_brokers, load, strategy, config,
                                     broker_to_namespace_to_bundle_range=ns_map, policies=policies,
                                     preallocated_bundle_to_broker=prealloc, excluded_namespace_selector=rr)
    d.broker                 # chosen broker id, or None
    d.preallocation          # Preallocation to record (None when short-circuited or nothing was chosen)
    d.preallocation.apply(load, ns_map, prealloc)    # the caller's bookkeeping, as Pulsar does it
    select_broker(bundle, available_brokers, load, strategy, config, ...)   # same, no preallocation

Arguments: ``bundle`` is ``tenant/ns/0x..._0x...``; ``available_brokers`` the registered brokers (the
``/loadbalance/brokers`` children); ``load`` the leader's :class:`~clusteremu.strategies.pulsar.load_data.LoadData`;
``strategy`` the placement strategy object (``select_broker(candidates, bundle, load)``, see
:mod:`.strategy`); ``config`` ServiceConfiguration keys. Optional: ``broker_to_namespace_to_bundle_range``
(default: rebuilt from ``load`` — reported plus preallocated bundles), ``policies``
(:class:`~.filters.NamespacePolicies`, default none), ``preallocated_bundle_to_broker`` (default: read off
``load``'s preallocated bundle data), ``excluded_namespace_selector`` (the leader's
:class:`~.round_robin.RoundRobinBrokerSelector`, required when the bundle's namespace is in
``loadBalancerSheddingExcludedNamespaces``), ``has_non_persistent_topic`` (the bundle was looked up for a
non-persistent topic), ``stored_bundle_data`` (bundle data the metadata store holds, tried before defaults).

Steps:

1. (assignment only) A bundle already preallocated returns its broker, nothing else happens.
2. Bundle data: ``load.bundle_data[bundle]``, else stored data, else defaults (50 msg/s and 50000 B/s, in and
   out; 0 samples). Pulsar inserts it into ``loadData.bundleData`` (``bundle_data_defaulted`` tells the caller).
3. Candidates := ``applyNamespacePolicies``; ``filterBrokersWithLargeTopicCount``; the anti-affinity filter;
   ``removeMostServicingBrokersForNamespace`` when ``loadBalancerDistributeBundlesEvenlyEnabled`` or the
   namespace is ``pulsar/system``; then the filter pipeline ``BrokerLoadManagerClassFilter``,
   ``BrokerVersionFilter``. A filter error, or an empty result, restores the policy-allowed brokers.
4. The strategy — :class:`~.round_robin.RoundRobinBrokerSelector` for ``loadBalancerSheddingExcludedNamespaces`` —
   chooses among them; no choice → ``None``.
5. If the chosen broker's 4-argument weighted max usage is **strictly** above
   ``loadBalancerBrokerOverloadedThresholdPercentage / 100``, the policy-allowed brokers are added back and
   the *placement strategy* (never the round-robin one) chooses again; its answer replaces the first one
   unless it is ``None``.
6. (assignment only) The bundle is preallocated to the broker: its data goes into the broker's
   ``preallocatedBundleData``, the bundle → broker map and the namespace → bundle-range map.

The candidate *set* Java passes around is a ``HashSet`` that every step edits in place; its iteration order
(which the round-robin cache, ties and float sums see) is that of
:class:`~clusteremu.base.java.JavaHashMapOrder` (``"hashmap"``). Departure:
that set lives as long as the leader and its table only grows, so after the cluster once had more brokers than
now Java's table is larger than the fresh one replayed here and the order of colliding brokers can differ.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Collection, Iterable, Mapping, MutableMapping

from clusteremu.base.java import JavaHashMapOrder, java_order

from ..config import PulsarConfig, as_config
from ..load_data import BundleData, LoadData, default_bundle_stats
from ..split.bundles import namespace_of_bundle, range_of_bundle
from .filters import (
    SYSTEM_NAMESPACE,
    BrokerFilterError,
    NamespacePolicies,
    apply_namespace_policies,
    broker_to_namespace_to_bundle_range_of,
    brokers_within_topic_limit,
    config_flag,
    filter_anti_affinity_group_owned_brokers,
    filter_broker_versions,
    filter_load_manager_class,
    remove_most_servicing_brokers_for_namespace,
)
from .strategy import BrokerChoice, PlacementStrategy, unique_candidates

__all__ = ["PlacementDecision", "Preallocation", "select_broker", "select_broker_for_assignment"]


@dataclass(frozen=True)
class Preallocation:
    """``preallocateBundle(bundle, broker)``: what the leader records once it assigned ``bundle`` to ``broker``."""

    bundle: str
    broker: str
    bundle_data: BundleData

    def apply(
        self,
        load: LoadData,
        broker_to_namespace_to_bundle_range: MutableMapping[str, MutableMapping[str, set[str]]] | None = None,
        preallocated_bundle_to_broker: MutableMapping[str, str] | None = None,
    ) -> None:
        """Record the preallocation in the leader's own structures (those given)."""
        data = load.bundle_data.setdefault(self.bundle, self.bundle_data)
        load.broker_data[self.broker].preallocated_bundle_data[self.bundle] = data
        if preallocated_bundle_to_broker is not None:
            preallocated_bundle_to_broker[self.bundle] = self.broker
        if broker_to_namespace_to_bundle_range is not None:
            by_namespace = broker_to_namespace_to_bundle_range.setdefault(self.broker, {})
            by_namespace.setdefault(namespace_of_bundle(self.bundle), set()).add(range_of_bundle(self.bundle))


@dataclass(frozen=True)
class PlacementDecision:
    """The outcome of one placement.

    ``candidates`` is the set the first choice was made from (Java iteration order); ``strategy`` says which
    chose (``"placement"`` or ``"round_robin"``); ``retried_overloaded`` that the first choice was overloaded
    and the policy-allowed set was asked again; ``random_fallback`` that the final choice was a random pick over
    all candidates because none qualified (LeastResourceUsageWithWeight, LeastLongTermMessageRate with NaN
    scores); ``preallocated`` that the bundle was already preallocated (step 1).
    """

    bundle: str
    broker: str | None
    bundle_data: BundleData | None = None
    bundle_data_defaulted: bool = False
    candidates: tuple[str, ...] = ()
    strategy: str = "placement"
    retried_overloaded: bool = False
    random_fallback: bool = False
    preallocated: bool = False
    preallocation: Preallocation | None = None


def _choose(strategy: Any, candidates: list[str], bundle: str, load: LoadData) -> BrokerChoice:
    select = getattr(strategy, "select", None)
    if callable(select):
        return select(candidates, bundle, load)
    return BrokerChoice(strategy.select_broker(candidates, bundle, load))


def _bundle_data(
    bundle: str, load: LoadData, stored_bundle_data: Mapping[str, BundleData] | None
) -> tuple[BundleData, bool]:
    data = load.bundle_data.get(bundle)
    if data is not None:
        return data, False
    if stored_bundle_data is not None and bundle in stored_bundle_data:
        return stored_bundle_data[bundle], True
    return BundleData.with_default_stats(default_bundle_stats()), True


def select_broker(
    bundle: str,
    available_brokers: Iterable[str],
    load: LoadData,
    strategy: PlacementStrategy,
    config: Mapping[str, Any] | PulsarConfig | None = None,
    *,
    broker_to_namespace_to_bundle_range: Mapping[str, Mapping[str, Collection[str]]] | None = None,
    policies: NamespacePolicies | None = None,
    excluded_namespace_selector: PlacementStrategy | None = None,
    has_non_persistent_topic: bool = False,
    stored_bundle_data: Mapping[str, BundleData] | None = None,
) -> PlacementDecision:
    """``selectBroker(serviceUnit)``: steps 2–5 of the module docstring (no preallocation)."""
    cfg = as_config(config)
    pols = policies if policies is not None else NamespacePolicies()
    ns_map = (
        broker_to_namespace_to_bundle_range
        if broker_to_namespace_to_bundle_range is not None
        else broker_to_namespace_to_bundle_range_of(load)
    )
    namespace = namespace_of_bundle(bundle)
    data, defaulted = _bundle_data(bundle, load, stored_bundle_data)
    available = unique_candidates(available_brokers)

    def policy_allowed() -> list[str]:
        return apply_namespace_policies(
            bundle, available, pols, load, has_non_persistent_topic=has_non_persistent_topic
        )

    cache = JavaHashMapOrder("hashmap")
    cache.put_all(policy_allowed())

    within = brokers_within_topic_limit(cache.keys(), load, cfg["loadBalancerBrokerMaxTopics"])
    if within:
        cache.clear()
        cache.put_all(java_order(within, "hashmap"))

    cache.retain(
        filter_anti_affinity_group_owned_brokers(
            bundle,
            cache.keys(),
            ns_map,
            pols,
            failure_domains_enabled=config_flag(cfg, "failureDomainsEnabled"),
        )
    )

    if cfg["loadBalancerDistributeBundlesEvenlyEnabled"] or namespace == SYSTEM_NAMESPACE:
        cache.retain(remove_most_servicing_brokers_for_namespace(bundle, cache.keys(), ns_map))

    try:
        cache.retain(filter_load_manager_class(cache.keys(), load, cfg["loadManagerClassName"]))
        cache.retain(filter_broker_versions(cache.keys(), load, config_flag(cfg, "preferLaterVersions")))
    except BrokerFilterError:
        cache.put_all(policy_allowed())

    if len(cache) == 0:
        cache.put_all(policy_allowed())

    candidates = cache.keys()
    if namespace in cfg["loadBalancerSheddingExcludedNamespaces"]:
        if excluded_namespace_selector is None:
            raise ValueError(
                f"{bundle} belongs to a namespace in loadBalancerSheddingExcludedNamespaces: pass the leader's "
                "RoundRobinBrokerSelector as excluded_namespace_selector"
            )
        chooser, which = excluded_namespace_selector, "round_robin"
    else:
        chooser, which = strategy, "placement"
    choice = _choose(chooser, candidates, bundle, load)
    decision = dict(
        bundle=bundle,
        bundle_data=data,
        bundle_data_defaulted=defaulted,
        candidates=tuple(candidates),
        strategy=which,
    )
    if choice.broker is None:
        return PlacementDecision(broker=None, **decision)

    chosen = load.broker_data.get(choice.broker)
    if chosen is None:
        raise KeyError(f"no broker data for the chosen broker {choice.broker!r}")
    threshold = cfg["loadBalancerBrokerOverloadedThresholdPercentage"] / 100.0
    retried = False
    if chosen.local_data.max_resource_usage_with_weight(*cfg.resource_weights()) > threshold:
        # Every broker the filters left was overloaded: ask again over all the policy-allowed brokers.
        cache.put_all(policy_allowed())
        retry = _choose(strategy, cache.keys(), bundle, load)
        retried = True
        if retry.broker is not None:
            choice = retry
    return PlacementDecision(
        broker=choice.broker, retried_overloaded=retried, random_fallback=choice.random_fallback, **decision
    )


def _preallocations_of(load: LoadData) -> dict[str, str]:
    out: dict[str, str] = {}
    for broker in load.brokers_in_java_order():
        for bundle in load.broker_data[broker].preallocated_bundle_data:
            out.setdefault(bundle, broker)
    return out


def select_broker_for_assignment(
    bundle: str,
    available_brokers: Iterable[str],
    load: LoadData,
    strategy: PlacementStrategy,
    config: Mapping[str, Any] | PulsarConfig | None = None,
    *,
    broker_to_namespace_to_bundle_range: Mapping[str, Mapping[str, Collection[str]]] | None = None,
    policies: NamespacePolicies | None = None,
    preallocated_bundle_to_broker: Mapping[str, str] | None = None,
    excluded_namespace_selector: PlacementStrategy | None = None,
    has_non_persistent_topic: bool = False,
    stored_bundle_data: Mapping[str, BundleData] | None = None,
) -> PlacementDecision:
    """``selectBrokerForAssignment``: the whole pipeline, steps 1–6 of the module docstring."""
    preallocated = (
        preallocated_bundle_to_broker if preallocated_bundle_to_broker is not None else _preallocations_of(load)
    )
    if bundle in preallocated:
        return PlacementDecision(
            bundle=bundle, broker=preallocated[bundle], bundle_data=load.bundle_data.get(bundle), preallocated=True
        )
    decision = select_broker(
        bundle,
        available_brokers,
        load,
        strategy,
        config,
        broker_to_namespace_to_bundle_range=broker_to_namespace_to_bundle_range,
        policies=policies,
        excluded_namespace_selector=excluded_namespace_selector,
        has_non_persistent_topic=has_non_persistent_topic,
        stored_bundle_data=stored_bundle_data,
    )
    if decision.broker is None or decision.bundle_data is None:
        return decision
    return PlacementDecision(
        bundle=decision.bundle,
        broker=decision.broker,
        bundle_data=decision.bundle_data,
        bundle_data_defaulted=decision.bundle_data_defaulted,
        candidates=decision.candidates,
        strategy=decision.strategy,
        retried_overloaded=decision.retried_overloaded,
        random_fallback=decision.random_fallback,
        preallocation=Preallocation(decision.bundle, decision.broker, decision.bundle_data),
    )
