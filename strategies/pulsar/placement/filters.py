"""The modular load manager's broker filters and shedding guards (reference §8.3), as pure functions.

Sources: ``LB/impl/LoadManagerShared.java``, ``LB/impl/SimpleResourceAllocationPolicies.java``,
``common/policies/impl/NamespaceIsolationPolicies.java``, ``NamespaceIsolationPolicyImpl.java``,
``MinAvailablePolicy.java``, ``LB/impl/BrokerLoadManagerClassFilter.java``, ``LB/impl/BrokerVersionFilter.java``
and the guards of ``LB/impl/ModularLoadManagerImpl.java``.

API (every filter takes candidates and returns the kept ones in the given order; nothing is mutated)::

    pols = NamespacePolicies.from_json({...})                      # isolation, anti-affinity, failure domains
    apply_namespace_policies(bundle, available, pols, load)        # applyNamespacePolicies
    filter_brokers_with_large_topic_count(cands, load, max_topics) # filterBrokersWithLargeTopicCount
    filter_anti_affinity_group_owned_brokers(bundle, cands, ns_map, pols)
    remove_most_servicing_brokers_for_namespace(bundle, cands, ns_map)
    filter_load_manager_class(cands, load, class_name)             # BrokerLoadManagerClassFilter
    filter_broker_versions(cands, load, prefer_later_versions)     # BrokerVersionFilter (may raise BrokerFilterError)
    should_namespace_policies_unload(ns, range, broker, available_brokers=.., policies=.., load=..)
    should_anti_affinity_namespace_unload(ns, range, broker, available_brokers=.., policies=.., load=.., broker_to_namespace_to_bundle_range=..)
    broker_to_namespace_to_bundle_range_of(load)                   # the leader's ns_map, rebuilt from LoadData

Terms: a *broker* is its id ``host:port`` (the ``/loadbalance/brokers`` child); a *bundle* is
``tenant/ns/0x..._0x...``; ``ns_map`` is ``brokerToNamespaceToBundleRange`` — broker → namespace → bundle
ranges it owns or has been preallocated.

Behaviour worth knowing:

* Isolation policies match the broker's **host** (``new URL("http://" + broker).getHost()``) against the
  policy's regexes (Java ``String.matches``: whole-string). A namespace with a policy gets its primaries, plus
  its secondaries when ``min_available`` says ``#primaries < min_limit``; shared brokers are never added, so the
  result may be empty. A namespace without a policy gets the *shared* brokers (not a primary of any policy)
  whose report enables the topic kind (persistent, or non-persistent when the bundle has non-persistent
  topics) — a broker without a report is never shared. When several policies match a namespace, the first in
  Java ``HashMap`` order of the policy names wins.
* ``filterBrokersWithLargeTopicCount`` counts reported topics plus the topics of preallocated bundles and
  keeps brokers at or under ``loadBalancerBrokerMaxTopics``; if none is left it keeps them all.
* The anti-affinity filter counts, per broker, the namespaces of the bundle's anti-affinity group it holds
  bundles of (group names compare ignoring case); with ``failureDomainsEnabled`` it first keeps only the
  failure domain(s) holding the fewest; then it keeps the brokers holding the fewest, a broker absent from
  the count holding none. A namespace without (or with a blank) group is not filtered.
* ``removeMostServicingBrokersForNamespace`` keeps the candidates holding the fewest bundles of the namespace.
* ``BrokerLoadManagerClassFilter`` drops brokers whose report names another ``loadManagerClassName`` (or none);
  brokers without a report stay. ``BrokerVersionFilter`` acts only with ``preferLaterVersions`` and keeps the
  brokers running the newest version; a missing report, a missing or invalid version, or no candidates raise
  :class:`BrokerFilterError` (the pipeline then restores the policy-allowed set).
* ``shouldNamespacePoliciesUnload``: moving is allowed only if some broker other than the current owner passes
  the isolation policy. ``shouldAntiAffinityNamespaceUnload``: allowed unless every policy-allowed broker holds
  the same number of the group's namespaces; allowed when any holds none or fewer than the owner.

Departures: policies are data here rather than metadata-store reads, so the "could not read the policy"
paths of Pulsar (which log and carry on) do not exist. ``failureDomainsEnabled`` and ``preferLaterVersions``
are read from the config mapping when present (``false`` otherwise), since the shared config module does
not list them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Collection, Iterable, Mapping, Sequence

from clusteremu.base.java import INT_MAX, equals_ignore_case, java_order

from ..load_data import LoadData
from ..split.bundles import bundle_name, namespace_of_bundle, range_of_bundle
from .broker_version import BrokerVersion

__all__ = [
    "DEFAULT_DOMAIN",
    "SYSTEM_NAMESPACE",
    "AutoFailoverPolicy",
    "BrokerFilterError",
    "NamespaceIsolationPolicy",
    "NamespacePolicies",
    "anti_affinity_namespace_owned_brokers",
    "anti_affinity_unload_allowed",
    "apply_namespace_policies",
    "broker_host",
    "broker_to_namespace_to_bundle_range_of",
    "brokers_within_topic_limit",
    "config_flag",
    "filter_anti_affinity_group_owned_brokers",
    "filter_broker_versions",
    "filter_brokers_with_large_topic_count",
    "filter_load_manager_class",
    "latest_broker_version",
    "remove_most_servicing_brokers_for_namespace",
    "should_anti_affinity_namespace_unload",
    "should_namespace_policies_unload",
]

#: ``NamespaceName.SYSTEM_NAMESPACE``: its bundles are always spread evenly.
SYSTEM_NAMESPACE = "pulsar/system"
#: Failure domain of a broker that no domain lists (``LoadManagerShared.DEFAULT_DOMAIN``).
DEFAULT_DOMAIN = "default"

NamespaceMap = Mapping[str, Mapping[str, Collection[str]]]


class BrokerFilterError(Exception):
    """``BrokerFilterException``: a filter could not decide; the pipeline restores the policy-allowed brokers."""


def config_flag(config: Mapping[str, Any] | None, key: str, default: bool = False) -> bool:
    """A boolean ServiceConfiguration key that may be absent from the shared defaults (``true``/``false`` strings ok)."""
    if config is None:
        return default
    value = config.get(key, default)
    if isinstance(value, str):
        return value.strip().lower() == "true"
    return bool(value)


# ---------------------------------------------------------------------------------------------------------
# Hosts


@lru_cache(maxsize=1 << 16)  # every placement asks for every broker's host: parse each name once
def broker_host(broker: str) -> str | None:
    """``new URL("http://" + broker).getHost()``; ``None`` where Java throws ``MalformedURLException``.

    ``"host:8080"`` → ``"host"``, ``"[::1]:8080"`` → ``"[::1]"``; a non-numeric port is malformed.
    """
    authority = re.split(r"[/?#]", broker, maxsplit=1)[0]
    at = authority.find("@")
    if at != -1:
        authority = authority[at + 1 :]
    if authority.startswith("["):
        end = authority.find("]")
        if end == -1:
            return None
        host, rest = authority[: end + 1], authority[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port = rest[1:]
    else:
        colon = authority.find(":")
        host, port = (authority, "") if colon == -1 else (authority[:colon], authority[colon + 1 :])
    if port and not port.isdigit():
        return None
    return host


@lru_cache(maxsize=4096)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _matches_any(patterns: Iterable[str], text: str) -> bool:
    return any(_regex(p).fullmatch(text) is not None for p in patterns)


# ---------------------------------------------------------------------------------------------------------
# Policy data


@dataclass(frozen=True)
class AutoFailoverPolicy:
    """``AutoFailoverPolicyData`` of type ``min_available`` (the only type Pulsar implements)."""

    min_limit: int
    usage_threshold: int = 100
    policy_type: str = "min_available"

    def should_failover_to_secondary(self, total_primary_candidates: int) -> bool:
        """``MinAvailablePolicy.shouldFailoverToSecondary(int)``: fewer primaries than ``min_limit``."""
        return total_primary_candidates < self.min_limit

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "AutoFailoverPolicy":
        """From ``{"policy_type": "min_available", "parameters": {"min_limit": "1", "usage_threshold": "80"}}``."""
        policy_type = obj.get("policy_type")
        if policy_type != "min_available":
            raise ValueError(f"Unrecognized auto_failover_policy: {policy_type!r}")
        params = obj.get("parameters") or {}
        if "min_limit" not in params or "usage_threshold" not in params:
            raise ValueError("min_available needs the parameters min_limit and usage_threshold")
        return cls(int(params["min_limit"]), int(params["usage_threshold"]))

    def to_json(self) -> dict[str, Any]:
        return {
            "policy_type": self.policy_type,
            "parameters": {"min_limit": str(self.min_limit), "usage_threshold": str(self.usage_threshold)},
        }


@dataclass(frozen=True)
class NamespaceIsolationPolicy:
    """``NamespaceIsolationData``: namespace regexes, primary and secondary broker-host regexes, failover rule."""

    namespaces: tuple[str, ...]
    primary: tuple[str, ...]
    secondary: tuple[str, ...] = ()
    auto_failover_policy: AutoFailoverPolicy = field(default_factory=lambda: AutoFailoverPolicy(min_limit=1))

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "NamespaceIsolationPolicy":
        return cls(
            tuple(obj.get("namespaces") or ()),
            tuple(obj.get("primary") or ()),
            tuple(obj.get("secondary") or ()),
            AutoFailoverPolicy.from_json(obj.get("auto_failover_policy") or {}),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "namespaces": list(self.namespaces),
            "primary": list(self.primary),
            "secondary": list(self.secondary),
            "auto_failover_policy": self.auto_failover_policy.to_json(),
        }

    def matches_namespace(self, namespace: str) -> bool:
        return _matches_any(self.namespaces, namespace)

    def is_primary_broker(self, host: str) -> bool:
        return _matches_any(self.primary, host)

    def is_secondary_broker(self, host: str) -> bool:
        return _matches_any(self.secondary, host)

    def should_failover(self, total_primary_candidates: int) -> bool:
        return self.auto_failover_policy.should_failover_to_secondary(total_primary_candidates)


@dataclass(frozen=True)
class NamespacePolicies:
    """The policy data placement reads: the cluster's isolation policies, anti-affinity groups, failure domains.

    * ``isolation_policies`` — policy name → policy (the cluster's ``NamespaceIsolationPolicies``); ``None``
      when the cluster has none (same effect as an empty mapping).
    * ``anti_affinity_groups`` — namespace → ``namespaceAntiAffinityGroup`` of its local policies.
    * ``broker_failure_domains`` — broker id → failure domain name (used with ``failureDomainsEnabled``).
    """

    isolation_policies: Mapping[str, NamespaceIsolationPolicy] | None = None
    anti_affinity_groups: Mapping[str, str] = field(default_factory=dict)
    broker_failure_domains: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any] | None) -> "NamespacePolicies":
        """From ``{"namespaceIsolationPolicies": {name: NamespaceIsolationData}, "antiAffinityGroups": {ns: group},
        "failureDomains": {domain: {"brokers": [broker, ...]}}}`` (every key optional)."""
        obj = obj or {}
        raw = obj.get("namespaceIsolationPolicies")
        isolation = None if raw is None else {n: NamespaceIsolationPolicy.from_json(p) for n, p in raw.items()}
        domains: dict[str, str] = {}
        for domain, data in (obj.get("failureDomains") or {}).items():
            for broker in data.get("brokers", ()):
                domains[broker] = domain
        return cls(isolation, dict(obj.get("antiAffinityGroups") or {}), domains)

    def _policies_in_java_order(self) -> list[NamespaceIsolationPolicy]:
        if not self.isolation_policies:
            return []
        return [self.isolation_policies[n] for n in java_order(self.isolation_policies, "hashmap")]

    def policy_by_namespace(self, namespace: str) -> NamespaceIsolationPolicy | None:
        """``getPolicyByNamespace``: the first policy (``HashMap`` order) with a regex matching the namespace."""
        for policy in self._policies_in_java_order():
            if policy.matches_namespace(namespace):
                return policy
        return None

    def are_isolation_policies_present(self, namespace: str) -> bool:
        return self.policy_by_namespace(namespace) is not None

    def is_primary_broker(self, namespace: str, host: str) -> bool:
        policy = self.policy_by_namespace(namespace)
        return policy is not None and policy.is_primary_broker(host)

    def is_secondary_broker(self, namespace: str, host: str) -> bool:
        policy = self.policy_by_namespace(namespace)
        return policy is not None and policy.is_secondary_broker(host)

    def is_shared_broker(self, host: str) -> bool:
        """Not a primary broker of any policy (true when the cluster has no policies)."""
        return not any(p.is_primary_broker(host) for p in self._policies_in_java_order())

    def should_failover_to_secondaries(self, namespace: str, total_primary_candidates: int) -> bool:
        policy = self.policy_by_namespace(namespace)
        return policy is not None and policy.should_failover(total_primary_candidates)

    def anti_affinity_group(self, namespace: str) -> str | None:
        """The namespace's anti-affinity group, ``None`` when unset or blank (``StringUtils.isBlank``)."""
        group = self.anti_affinity_groups.get(namespace)
        if group is None or group.strip() == "":
            return None
        return group


# ---------------------------------------------------------------------------------------------------------
# The namespace map


def broker_to_namespace_to_bundle_range_of(
    load: LoadData, reported: dict[str, tuple[Any, dict[str, set[str]]]] | None = None
) -> dict[str, dict[str, set[str]]]:
    """``brokerToNamespaceToBundleRange`` as ``updateBundleData`` rebuilds it: each broker's reported bundles
    (``lastStats`` keys) plus its preallocated ones, by namespace.

    ``reported``: a cache the caller keeps between calls, of each broker's reported part, reused while the
    broker's ``lastStats`` is the same object (the leader's are never changed in place). The result's sets are
    then shared with the cache: read them only."""
    out: dict[str, dict[str, set[str]]] = {}
    for broker, data in load.broker_data.items():
        stats = data.local_data.last_stats
        hit = reported.get(broker) if reported is not None else None
        if hit is not None and hit[0] is stats:
            by_namespace = hit[1]
        else:
            by_namespace = _by_namespace(stats, {})
            if reported is not None:
                reported[broker] = (stats, by_namespace)
        if data.preallocated_bundle_data:
            by_namespace = _by_namespace(data.preallocated_bundle_data,
                                         {ns: set(ranges) for ns, ranges in by_namespace.items()})
        out[broker] = by_namespace
    if reported is not None:
        for broker in [b for b in reported if b not in load.broker_data]:
            del reported[broker]
    return out


def _by_namespace(bundles: Iterable[str], into: dict[str, set[str]]) -> dict[str, set[str]]:
    for bundle in bundles:
        into.setdefault(namespace_of_bundle(bundle), set()).add(range_of_bundle(bundle))
    return into


def _unique(brokers: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(brokers))


# ---------------------------------------------------------------------------------------------------------
# Filters


def apply_namespace_policies(
    bundle: str,
    available_brokers: Iterable[str],
    policies: NamespacePolicies,
    load: LoadData,
    *,
    has_non_persistent_topic: bool = False,
) -> list[str]:
    """``applyNamespacePolicies``: the brokers allowed to own ``bundle`` by the isolation policies.

    Returned in the order Java adds them to the candidate set: the primaries, then (if added) the
    secondaries or shared brokers, each group in ``HashSet`` iteration order.
    """
    namespace = namespace_of_bundle(bundle)
    present = policies.are_isolation_policies_present(namespace)
    primaries: list[str] = []
    secondaries: list[str] = []
    every_broker_shared = not policies.isolation_policies  # is_shared_broker's answer when there are no policies
    for broker in _unique(available_brokers):
        host = broker_host(broker)
        if host is None:
            continue
        if present:
            if policies.is_primary_broker(namespace, host):
                primaries.append(broker)
            elif policies.is_secondary_broker(namespace, host):
                secondaries.append(broker)
            continue
        report = load.broker_data.get(broker)
        local = report.local_data if report is not None else None
        if has_non_persistent_topic:
            if local is None or not local.non_persistent_topics_enabled:
                continue
        elif local is None or not local.persistent_topics_enabled:
            continue
        if every_broker_shared or policies.is_shared_broker(host):
            secondaries.append(broker)
    if present:
        out = java_order(primaries, "hashmap")
        if policies.should_failover_to_secondaries(namespace, len(primaries)):
            out += java_order(secondaries, "hashmap")
        return out
    return java_order(secondaries, "hashmap")


def brokers_within_topic_limit(candidates: Iterable[str], load: LoadData, max_topics: int) -> list[str]:
    """The candidates whose reported + preallocated topics are ``<= max_topics`` (possibly none)."""
    kept = []
    for broker in _unique(candidates):
        data = load.broker_data.get(broker)
        total = 0
        if data is not None:
            preallocated = data.preallocated_bundle_data
            total = data.local_data.num_topics
            if preallocated:
                total = sum(b.topics for b in preallocated.values()) + total
        if total <= max_topics:
            kept.append(broker)
    return kept


def filter_brokers_with_large_topic_count(candidates: Iterable[str], load: LoadData, max_topics: int) -> list[str]:
    """``filterBrokersWithLargeTopicCount`` (``loadBalancerBrokerMaxTopics``): drop brokers over the topic
    limit, unless that would drop them all."""
    cands = _unique(candidates)
    kept = brokers_within_topic_limit(cands, load, max_topics)
    return kept if kept else cands


def anti_affinity_namespace_owned_brokers(
    namespace: str, broker_to_namespace_to_bundle_range: NamespaceMap, policies: NamespacePolicies
) -> dict[str, int] | None:
    """``getAntiAffinityNamespaceOwnedBrokers``: broker → number of namespaces of ``namespace``'s anti-affinity
    group it holds bundles of; ``None`` when the namespace has no group. Brokers holding none are absent."""
    group = policies.anti_affinity_group(namespace)
    if group is None:
        return None
    counts: dict[str, int] = {}
    for broker, by_namespace in broker_to_namespace_to_bundle_range.items():
        for ns, ranges in by_namespace.items():
            if not ranges:
                continue
            other = policies.anti_affinity_groups.get(ns)
            if other is not None and equals_ignore_case(group, other):
                counts[broker] = counts.get(broker, 0) + 1
    return counts


def _filter_domains_not_having_least_anti_affinity_namespaces(
    counts: Mapping[str, int], candidates: list[str], broker_to_domain: Mapping[str, str]
) -> list[str]:
    """``filterDomainsNotHavingLeastNumberAntiAffinityNamespaces``."""
    if not broker_to_domain:
        return candidates
    per_domain: dict[str, int] = {}
    for broker in candidates:
        domain = broker_to_domain.get(broker, DEFAULT_DOMAIN)
        per_domain[domain] = per_domain.get(domain, 0) + counts.get(broker, 0)
    least = min(per_domain.values(), default=INT_MAX)
    return [
        b
        for b in candidates
        if per_domain.get(broker_to_domain.get(b, DEFAULT_DOMAIN)) is None
        or per_domain[broker_to_domain.get(b, DEFAULT_DOMAIN)] == least
    ]


def filter_anti_affinity_group_owned_brokers(
    bundle: str,
    candidates: Iterable[str],
    broker_to_namespace_to_bundle_range: NamespaceMap,
    policies: NamespacePolicies,
    *,
    failure_domains_enabled: bool = False,
) -> list[str]:
    """``filterAntiAffinityGroupOwnedBrokers``: keep the brokers (and, with failure domains, the domains)
    holding the fewest namespaces of the bundle's anti-affinity group."""
    cands = _unique(candidates)
    if not cands:
        return cands
    counts = anti_affinity_namespace_owned_brokers(
        namespace_of_bundle(bundle), broker_to_namespace_to_bundle_range, policies
    )
    if counts is None:
        return cands
    if failure_domains_enabled:
        cands = _filter_domains_not_having_least_anti_affinity_namespaces(
            counts, cands, policies.broker_failure_domains
        )
    least = INT_MAX
    for broker in cands:
        if broker not in counts:
            least = 0  # a broker missing from the count holds none of the group
            break
        least = min(least, counts[broker])
    if least == 0:
        return [b for b in cands if not (b in counts and counts[b] > 0)]
    return [b for b in cands if counts.get(b) == least]


def remove_most_servicing_brokers_for_namespace(
    bundle: str, candidates: Iterable[str], broker_to_namespace_to_bundle_range: NamespaceMap
) -> list[str]:
    """``removeMostServicingBrokersForNamespace`` (``loadBalancerDistributeBundlesEvenlyEnabled``): keep the
    candidates holding the fewest bundle ranges of the bundle's namespace (unknown = 0)."""
    cands = _unique(candidates)
    if not cands:
        return cands
    namespace = namespace_of_bundle(bundle)
    empty: Mapping[str, Collection[str]] = {}
    held = [len(broker_to_namespace_to_bundle_range.get(b, empty).get(namespace, ())) for b in cands]
    least = min(held)
    return [b for b, n in zip(cands, held) if n <= least]


def filter_load_manager_class(candidates: Iterable[str], load: LoadData, load_manager_class_name: str) -> list[str]:
    """``BrokerLoadManagerClassFilter``: drop brokers whose report names another load manager class."""
    dropped = {
        broker
        for broker, data in load.broker_data.items()
        if data.local_data.load_manager_class_name != load_manager_class_name
    }
    return [b for b in _unique(candidates) if b not in dropped]


def latest_broker_version(candidates: Sequence[str], load: LoadData) -> BrokerVersion:
    """``BrokerVersionFilter.getLatestVersionNumber``; raises :class:`BrokerFilterError` when undecidable."""
    if not candidates:
        raise BrokerFilterError("Unable to determine latest version since broker set was empty")
    latest: BrokerVersion | None = None
    for broker in candidates:
        data = load.broker_data.get(broker)
        if data is None:
            raise BrokerFilterError(f'No broker data for broker "{broker}"')
        text = data.local_data.broker_version_string
        if not text:
            raise BrokerFilterError(f'No version string in load report for broker "{broker}"')
        try:
            version = BrokerVersion.parse(text)
        except ValueError:
            raise BrokerFilterError(f'Invalid version string in load report for broker "{broker}": "{text}"') from None
        if latest is None or latest.build_aware_key() < version.build_aware_key():
            latest = version
    assert latest is not None
    return latest


def filter_broker_versions(candidates: Iterable[str], load: LoadData, prefer_later_versions: bool) -> list[str]:
    """``BrokerVersionFilter`` (``preferLaterVersions``): keep the brokers running the newest version."""
    cands = _unique(candidates)
    if not prefer_later_versions:
        return cands
    latest = latest_broker_version(cands, load)
    return [
        b for b in cands if BrokerVersion.parse(load.broker_data[b].local_data.broker_version_string or "") == latest
    ]


# ---------------------------------------------------------------------------------------------------------
# Shedding guards


def anti_affinity_unload_allowed(
    namespace: str,
    current_broker: str,
    candidate_brokers: Sequence[str],
    broker_to_namespace_to_bundle_range: NamespaceMap,
    policies: NamespacePolicies,
) -> bool:
    """``LoadManagerShared.shouldAntiAffinityNamespaceUnload``: moving helps only if some candidate holds fewer
    of the group's namespaces than the others (or none)."""
    counts = anti_affinity_namespace_owned_brokers(namespace, broker_to_namespace_to_bundle_range, policies)
    if not counts:
        return True
    least = INT_MAX
    current = 0
    for broker in candidate_brokers:
        n = counts.get(broker, 0)
        if broker == current_broker:
            current = n
        least = min(least, n)
    if least == 0 or current > least:
        return True
    least_owners = sum(1 for b in candidate_brokers if counts.get(b, 0) == least)
    return len(candidate_brokers) != least_owners


def should_namespace_policies_unload(
    namespace: str,
    bundle_range: str,
    current_broker: str,
    *,
    available_brokers: Iterable[str],
    policies: NamespacePolicies,
    load: LoadData,
) -> bool:
    """``ModularLoadManagerImpl.shouldNamespacePoliciesUnload``: a broker other than ``current_broker`` may own it."""
    allowed = apply_namespace_policies(bundle_name(namespace, bundle_range), available_brokers, policies, load)
    return any(b != current_broker for b in allowed)


def should_anti_affinity_namespace_unload(
    namespace: str,
    bundle_range: str,
    current_broker: str,
    *,
    available_brokers: Iterable[str],
    policies: NamespacePolicies,
    load: LoadData,
    broker_to_namespace_to_bundle_range: NamespaceMap,
) -> bool:
    """``ModularLoadManagerImpl.shouldAntiAffinityNamespaceUnload``: true without an anti-affinity group, else
    :func:`anti_affinity_unload_allowed` over the policy-allowed brokers."""
    if policies.anti_affinity_group(namespace) is None:
        return True
    allowed = apply_namespace_policies(bundle_name(namespace, bundle_range), available_brokers, policies, load)
    return anti_affinity_unload_allowed(
        namespace, current_broker, allowed, broker_to_namespace_to_bundle_range, policies
    )
