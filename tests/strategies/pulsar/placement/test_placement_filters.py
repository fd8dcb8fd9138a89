"""The modular placement filters and shedding guards (reference §8.3).

Includes Pulsar's LoadManagerSharedTest.testRemoveMostServicingBrokersForNamespace,
BrokerLoadManagerClassFilterTest, BrokerVersionFilterTest and the isolation-policy cases of
ModularLoadManagerImplTest (testNamespaceIsolationPoliciesForPrimaryAndSecondaryBrokers,
testLoadSheddingWithNamespaceIsolationPolicies).
"""
import pytest

from clusteremu.strategies.pulsar.load_data import BrokerData, BundleData, LoadData, LocalBrokerData
from clusteremu.strategies.pulsar.placement import filters as f
from clusteremu.strategies.pulsar.placement.filters import NamespaceIsolationPolicy, NamespacePolicies

MODULAR = "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl"
EXTENSIBLE = "org.apache.pulsar.broker.loadbalance.extensions.ExtensibleLoadManagerImpl"


def load_with(*brokers, **fields):
    load = LoadData()
    for b in brokers:
        load.broker_data[b] = BrokerData(local_data=LocalBrokerData(**fields))
    return load


def isolation(namespaces, primary, secondary, min_limit):
    return NamespaceIsolationPolicy.from_json(
        {
            "namespaces": namespaces,
            "primary": primary,
            "secondary": secondary,
            "auto_failover_policy": {
                "policy_type": "min_available",
                "parameters": {"min_limit": str(min_limit), "usage_threshold": "80"},
            },
        }
    )


# --- applyNamespacePolicies --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "min_limit, available, expected",
    [
        (1, ["broker3:8080", "broker10:8080", "broker21:8080"], {"broker10:8080"}),
        (1, ["broker3:8080", "broker21:8080"], {"broker21:8080"}),
        (1, ["broker3:8080"], set()),
        (2, ["broker3:8080", "broker10:8080", "broker21:8080"], {"broker10:8080", "broker21:8080"}),
        (2, ["broker3:8080", "broker21:8080"], {"broker21:8080"}),
        (2, ["broker3:8080"], set()),
    ],
)
def test_pulsar_isolation_primaries_secondaries_and_min_available(min_limit, available, expected):
    policy = isolation(["my-property/use/my-ns.*"], ["broker10"], ["broker21"], min_limit)
    pols = NamespacePolicies({"my-ns-isolation-policies": policy})
    load = load_with(*available)
    got = f.apply_namespace_policies("my-property/use/my-ns/0x00000000_0xffffffff", available, pols, load)
    assert set(got) == expected


def test_without_policy_only_shared_brokers_enabled_for_the_topic_kind():
    pols = NamespacePolicies({"p": isolation(["other/ns"], ["reserved"], [], 1)})
    load = load_with("a:1", "reserved:1")
    load.broker_data["np-only:1"] = BrokerData(local_data=LocalBrokerData(persistent_topics_enabled=False))
    available = ["a:1", "reserved:1", "np-only:1", "no-report:1"]
    persistent = f.apply_namespace_policies("t/ns/0x00000000_0xffffffff", available, pols, load)
    assert set(persistent) == {"a:1"}  # reserved is some namespace's primary; no report means not shared
    non_persistent = f.apply_namespace_policies(
        "t/ns/0x00000000_0xffffffff", available, pols, load, has_non_persistent_topic=True
    )
    assert set(non_persistent) == {"a:1", "np-only:1"}


def test_policies_match_the_broker_host_by_whole_regex():
    pols = NamespacePolicies({"p": isolation(["t/ns"], ["host-1"], [], 1)})
    load = load_with("host-1:8080", "host-10:8080")
    got = f.apply_namespace_policies("t/ns/0x00000000_0xffffffff", ["host-1:8080", "host-10:8080"], pols, load)
    assert got == ["host-1:8080"]


def test_isolation_policy_result_may_be_empty_and_shared_brokers_never_join():
    pols = NamespacePolicies({"p": isolation(["t/ns"], ["gone"], ["also-gone"], 1)})
    load = load_with("shared:1")
    assert f.apply_namespace_policies("t/ns/0x00000000_0xffffffff", ["shared:1"], pols, load) == []


def test_malformed_broker_ids_are_skipped():
    load = load_with("ok:1", "bad:port")
    assert f.apply_namespace_policies("t/ns/0x0_0x1", ["ok:1", "bad:port"], NamespacePolicies(), load) == ["ok:1"]


def test_broker_host_parsing():
    assert f.broker_host("host:8080") == "host"
    assert f.broker_host("host") == "host"
    assert f.broker_host("[::1]:8080") == "[::1]"
    assert f.broker_host("h:x") is None


# --- filterBrokersWithLargeTopicCount ----------------------------------------------------------------


def test_large_topic_count_counts_reported_plus_preallocated_topics():
    load = load_with("a", "b", "c")
    load.broker_data["a"].local_data.num_topics = 8
    load.broker_data["b"].local_data.num_topics = 7  # 7 reported + 4 preallocated = 11
    pre = BundleData()
    pre.topics = 4
    load.broker_data["b"].preallocated_bundle_data["t/ns/0x0_0x1"] = pre
    load.broker_data["c"].local_data.num_topics = 11
    assert f.filter_brokers_with_large_topic_count(["a", "b", "c", "no-data"], load, 10) == ["a", "no-data"]
    assert f.filter_brokers_with_large_topic_count(["a", "b"], load, 8) == ["a"]  # limit is inclusive


def test_large_topic_count_keeps_the_original_set_if_all_are_over():
    load = load_with("a", "b")
    load.broker_data["a"].local_data.num_topics = 9
    load.broker_data["b"].local_data.num_topics = 9
    assert f.filter_brokers_with_large_topic_count(["a", "b"], load, 5) == ["a", "b"]


# --- anti-affinity -------------------------------------------------------------------------------------


def anti_affinity_setup():
    pols = NamespacePolicies(
        anti_affinity_groups={"t/ns1": "group", "t/ns2": "GROUP", "t/ns3": "group", "t/other": "else"}
    )
    ns_map = {
        "b1": {"t/ns1": {"0x0_0x1"}, "t/ns2": {"0x0_0x1"}},
        "b2": {"t/ns3": {"0x0_0x1"}},
        "b3": {"t/other": {"0x0_0x1"}, "t/ns2": set()},  # empty range sets do not count
    }
    return pols, ns_map


def test_anti_affinity_counts_group_namespaces_ignoring_case():
    pols, ns_map = anti_affinity_setup()
    assert f.anti_affinity_namespace_owned_brokers("t/ns4", ns_map, pols) is None
    pols = NamespacePolicies(anti_affinity_groups={**pols.anti_affinity_groups, "t/ns4": "Group"})
    assert f.anti_affinity_namespace_owned_brokers("t/ns4", ns_map, pols) == {"b1": 2, "b2": 1}


def test_anti_affinity_prefers_brokers_holding_none():
    pols, ns_map = anti_affinity_setup()
    assert f.filter_anti_affinity_group_owned_brokers("t/ns1/0x1_0x2", ["b1", "b2", "b3"], ns_map, pols) == ["b3"]


def test_anti_affinity_keeps_the_least_holding_when_all_hold_some():
    pols, ns_map = anti_affinity_setup()
    assert f.filter_anti_affinity_group_owned_brokers("t/ns1/0x1_0x2", ["b1", "b2"], ns_map, pols) == ["b2"]


def test_anti_affinity_without_group_leaves_candidates():
    pols, ns_map = anti_affinity_setup()
    assert f.filter_anti_affinity_group_owned_brokers("t/free/0x1_0x2", ["b1", "b2"], ns_map, pols) == ["b1", "b2"]
    blank = NamespacePolicies(anti_affinity_groups={"t/free": "  "})
    assert f.filter_anti_affinity_group_owned_brokers("t/free/0x1_0x2", ["b1"], ns_map, blank) == ["b1"]


def test_anti_affinity_failure_domains_keep_the_least_loaded_domain():
    # Pulsar's javadoc example: d1 = {b1: 2, b2: 1}, d2 = {b3: 2, b4: 1}, d3 = {b5: 2, b6: 2} -> b2 or b4.
    groups = {f"t/n{i}": "g" for i in range(12)}
    groups["t/new"] = "g"
    owned = {"b1": 2, "b2": 1, "b3": 2, "b4": 1, "b5": 2, "b6": 2}
    ns_map, k = {}, 0
    for broker, count in owned.items():
        ns_map[broker] = {f"t/n{k + j}": {"0x0_0x1"} for j in range(count)}
        k += count
    domains = {"b1": "d1", "b2": "d1", "b3": "d2", "b4": "d2", "b5": "d3", "b6": "d3"}
    pols = NamespacePolicies(anti_affinity_groups=groups, broker_failure_domains=domains)
    got = f.filter_anti_affinity_group_owned_brokers(
        "t/new/0x0_0x1", list(owned), ns_map, pols, failure_domains_enabled=True
    )
    assert got == ["b2", "b4"]
    without_domains = f.filter_anti_affinity_group_owned_brokers("t/new/0x0_0x1", list(owned), ns_map, pols)
    assert without_domains == ["b2", "b4"]


# --- removeMostServicingBrokersForNamespace ------------------------------------------------------------


def test_pulsar_remove_most_servicing_brokers_for_namespace_case():
    namespace = "tenant1/ns1"
    bundle = namespace + "/0x00000000_0x40000000"
    ns_map: dict = {}

    def fill(broker, rng):
        ns_map.setdefault(broker, {}).setdefault(namespace, set()).add(rng)

    assert f.remove_most_servicing_brokers_for_namespace(bundle, [], ns_map) == []
    assert f.remove_most_servicing_brokers_for_namespace(bundle, ["broker1"], ns_map) == ["broker1"]
    fill("broker1", "0x40000000_0x80000000")
    assert f.remove_most_servicing_brokers_for_namespace(bundle, ["broker1"], ns_map) == ["broker1"]
    assert f.remove_most_servicing_brokers_for_namespace(bundle, ["broker1", "broker2"], ns_map) == ["broker2"]
    fill("broker2", "0x80000000_0xc0000000")
    assert set(f.remove_most_servicing_brokers_for_namespace(bundle, ["broker1", "broker2"], ns_map)) == {
        "broker1",
        "broker2",
    }
    fill("broker2", "0xc0000000_0xd0000000")
    assert f.remove_most_servicing_brokers_for_namespace(bundle, ["broker1", "broker2"], ns_map) == ["broker1"]
    fill("broker3", "0xd0000000_0xffffffff")
    assert set(f.remove_most_servicing_brokers_for_namespace(bundle, ["broker1", "broker2", "broker3"], ns_map)) == {
        "broker1",
        "broker3",
    }


# --- BrokerLoadManagerClassFilter / BrokerVersionFilter ------------------------------------------------


def test_pulsar_load_manager_class_filter_case():
    load = LoadData()
    load.broker_data["broker1"] = BrokerData(local_data=LocalBrokerData(load_manager_class_name=MODULAR))
    load.broker_data["broker2"] = BrokerData(local_data=LocalBrokerData(load_manager_class_name=EXTENSIBLE))
    load.broker_data["broker3"] = BrokerData(local_data=LocalBrokerData(load_manager_class_name=None))
    brokers = ["broker1", "broker2", "broker3"]
    assert f.filter_load_manager_class(brokers, load, MODULAR) == ["broker1"]
    assert f.filter_load_manager_class(brokers, load, EXTENSIBLE) == ["broker2"]
    assert f.filter_load_manager_class(["no-report"], load, MODULAR) == ["no-report"]


def version_load(**versions):
    load = LoadData()
    for broker, version in versions.items():
        load.broker_data[broker] = BrokerData(local_data=LocalBrokerData(broker_version_string=version))
    return load


def test_pulsar_broker_version_filter_case():
    load = version_load(broker1="1.1.0-SNAPSHOT", broker2="1.1.0-SNAPSHOT", broker3="1.2.0-SNAPSHOT")
    brokers = ["broker1", "broker2", "broker3"]
    latest = f.latest_broker_version(brokers, load)
    assert (latest.major, latest.minor, latest.patch) == (1, 2, 0)
    assert f.filter_broker_versions(brokers, load, prefer_later_versions=True) == ["broker3"]
    assert f.filter_broker_versions(brokers, load, prefer_later_versions=False) == brokers


def test_version_filter_keeps_every_broker_on_the_newest_version_ignoring_build_metadata():
    load = version_load(a="3.0.0+b1", b="3.0.0+b2", c="3.0.0-rc.1", d="2.11.9")
    assert f.filter_broker_versions(["a", "b", "c", "d"], load, True) == ["a", "b"]


@pytest.mark.parametrize(
    "brokers, versions",
    [
        ([], {}),
        (["a", "ghost"], {"a": "1.0.0"}),
        (["a", "b"], {"a": "1.0.0", "b": ""}),
        (["a", "b"], {"a": "1.0.0", "b": "2.10"}),
    ],
)
def test_version_filter_errors(brokers, versions):
    with pytest.raises(f.BrokerFilterError):
        f.filter_broker_versions(brokers, version_load(**versions), True)


# --- shedding guards -----------------------------------------------------------------------------------


def test_pulsar_should_namespace_policies_unload_case():
    namespace, bundle_range = "my-tenant/use/my-ns", "0x00000000_0xffffffff"
    load = load_with("localhost:8080", "localhost1:8080")
    available = ["localhost:8080", "localhost1:8080"]
    assert f.should_namespace_policies_unload(
        namespace, bundle_range, "localhost:8080", available_brokers=available, policies=NamespacePolicies(), load=load
    )
    only_broker1 = NamespacePolicies({"p": isolation([namespace + ".*"], ["localhost1"], ["localhost1"], 1)})
    assert not f.should_namespace_policies_unload(
        namespace, bundle_range, "localhost1:8080", available_brokers=available, policies=only_broker1, load=load
    )
    only_broker0 = NamespacePolicies({"p": isolation([namespace + ".*"], ["localhost"], ["localhost"], 1)})
    assert f.should_namespace_policies_unload(
        namespace, bundle_range, "localhost1:8080", available_brokers=available, policies=only_broker0, load=load
    )


def test_should_anti_affinity_namespace_unload():
    load = load_with("b1", "b2", "b3")
    available = ["b1", "b2", "b3"]
    groups = {"t/a": "g", "t/b": "g", "t/c": "g"}
    pols = NamespacePolicies(anti_affinity_groups=groups)

    def allowed(ns_map, current="b1", namespace="t/a", policies=pols):
        return f.should_anti_affinity_namespace_unload(
            namespace, "0x0_0x1", current, available_brokers=available, policies=policies, load=load,
            broker_to_namespace_to_bundle_range=ns_map,
        )

    even = {"b1": {"t/a": {"r"}}, "b2": {"t/b": {"r"}}, "b3": {"t/c": {"r"}}}
    assert not allowed(even)  # every broker holds one: moving cannot help
    some_free = {"b1": {"t/a": {"r"}}, "b2": {"t/b": {"r"}}}
    assert allowed(some_free)  # b3 holds none
    crowded = {"b1": {"t/a": {"r"}, "t/b": {"r"}}, "b2": {"t/c": {"r"}}, "b3": {"t/x": {"r"}}}
    groups_x = NamespacePolicies(anti_affinity_groups={**groups, "t/x": "g"})
    assert allowed(crowded, policies=groups_x)  # the owner holds more than the least
    # b2 already holds the least, but not every candidate does (b1 holds more), so Pulsar still allows it.
    assert allowed(crowded, current="b2", policies=groups_x)
    assert allowed(even, namespace="t/none")  # no anti-affinity group: always allowed


def test_anti_affinity_unload_allowed_when_not_every_candidate_holds_the_least():
    pols = NamespacePolicies(anti_affinity_groups={"t/a": "g", "t/b": "g", "t/c": "g", "t/d": "g"})
    ns_map = {"b1": {"t/a": {"r"}}, "b2": {"t/b": {"r"}}, "b3": {"t/c": {"r"}, "t/d": {"r"}}}
    assert f.anti_affinity_unload_allowed("t/a", "b1", ["b1", "b2", "b3"], ns_map, pols)
    assert not f.anti_affinity_unload_allowed("t/a", "b1", ["b1", "b2"], ns_map, pols)


def test_namespace_map_is_rebuilt_from_reports_and_preallocations():
    load = load_with("b1")
    load.broker_data["b1"].local_data.last_stats = {"t/ns/0x0_0x1": None}  # only the keys are read
    load.broker_data["b1"].preallocated_bundle_data = {"t/ns/0x1_0x2": BundleData(), "t/o/0x0_0x1": BundleData()}
    assert f.broker_to_namespace_to_bundle_range_of(load) == {
        "b1": {"t/ns": {"0x0_0x1", "0x1_0x2"}, "t/o": {"0x0_0x1"}}
    }


def test_first_matching_policy_in_hash_map_order_wins():
    first = isolation(["t/.*"], ["p1"], [], 1)
    second = isolation(["t/ns"], ["p2"], [], 1)
    pols = NamespacePolicies({"zzz": first, "aaa": second})
    from clusteremu.base.java import java_order

    winner = java_order(["zzz", "aaa"], "hashmap")[0]
    assert pols.policy_by_namespace("t/ns") is {"zzz": first, "aaa": second}[winner]


def test_policies_from_json():
    pols = NamespacePolicies.from_json(
        {
            "namespaceIsolationPolicies": {"p": isolation(["t/ns"], ["h"], ["s"], 2).to_json()},
            "antiAffinityGroups": {"t/ns": "g"},
            "failureDomains": {"d1": {"brokers": ["h:1"]}},
        }
    )
    assert pols.policy_by_namespace("t/ns").auto_failover_policy.min_limit == 2
    assert pols.anti_affinity_group("t/ns") == "g"
    assert pols.broker_failure_domains == {"h:1": "d1"}
    with pytest.raises(ValueError):
        f.AutoFailoverPolicy.from_json({"policy_type": "other"})
