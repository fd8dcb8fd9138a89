"""The modular automatic split decision (reference §9.1), including Pulsar's BundleSplitterTaskTest cases."""
import pytest

from clusteremu.base.java import java_order
from clusteremu.strategies.pulsar.load_data import BrokerData, BundleData, LoadData, LocalBrokerData, NamespaceBundleStats
from clusteremu.strategies.pulsar.placement.filters import NamespaceIsolationPolicy, NamespacePolicies
from clusteremu.strategies.pulsar.split.auto_split import (
    BundleSplitDecision,
    check_namespace_bundle_split,
    find_bundles_to_split,
    namespace_bundle_count,
)

MIB = 1024 * 1024


def report(load, broker, bundle, topics=2, producers=0, consumers=0):
    data = load.broker_data.setdefault(broker, BrokerData(local_data=LocalBrokerData()))
    data.local_data.last_stats[bundle] = NamespaceBundleStats(
        topics=topics, producer_count=producers, consumer_count=consumers
    )
    data.local_data.bundles.append(bundle)


def history(load, bundle, rate_in=0.0, rate_out=0.0, throughput_in=0.0, throughput_out=0.0):
    data = BundleData()
    lt = data.long_term_data
    lt.msg_rate_in, lt.msg_rate_out, lt.msg_throughput_in, lt.msg_throughput_out = (
        rate_in, rate_out, throughput_in, throughput_out,
    )
    load.bundle_data[bundle] = data


def test_pulsar_bundle_with_one_topic_is_never_split():
    load = LoadData()
    report(load, "broker", "ten/ns/0x00000000_0x80000000", topics=1)
    history(load, "ten/ns/0x00000000_0x80000000", rate_in=30000, rate_out=1)
    assert find_bundles_to_split(load, {}) == {}


def test_pulsar_namespace_maximum_bundles_counts_earlier_selections():
    load = LoadData()
    bundles = ["ten/ns/0x00000000_0x20000000", "ten/ns/0x20000000_0x40000000", "ten/ns/0x40000000_0x60000000"]
    for b in bundles:
        report(load, "broker", b, topics=5)
        history(load, b, rate_in=60000, rate_out=1)
    cfg = {"loadBalancerNamespaceMaximumBundles": 3}
    selected = find_bundles_to_split(load, cfg)  # "ten/ns" unknown: it has 1 bundle now
    assert len(selected) + namespace_bundle_count("ten/ns", None) == 3
    assert find_bundles_to_split(load, cfg, {"ten/ns": ["0x0_0x1", "0x1_0x2", "0x2_0x3"]}) == {}


@pytest.mark.parametrize(
    "topics, sessions, rate, throughput, config, hot",
    [
        (1001, 0, 0, 0, {}, True),
        (1000, 0, 0, 0, {}, False),  # strictly more topics than the maximum
        (2, 1001, 0, 0, {}, True),
        (2, 1000, 0, 0, {}, False),
        (2, 5000, 0, 0, {"loadBalancerNamespaceBundleMaxSessions": 0}, False),  # <= 0 disables
        (2, 0, 30001, 0, {}, True),
        (2, 0, 30000, 0, {}, False),
        (2, 0, 0, 100 * MIB + 1, {}, True),
        (2, 0, 0, 100 * MIB, {}, False),
    ],
)
def test_split_triggers(topics, sessions, rate, throughput, config, hot):
    load = LoadData()
    bundle = "t/ns/0x00000000_0x80000000"
    report(load, "b1", bundle, topics=topics, producers=sessions // 2, consumers=sessions - sessions // 2)
    history(load, bundle, rate_in=rate / 2, rate_out=rate / 2, throughput_in=throughput / 2, throughput_out=throughput / 2)
    assert (find_bundles_to_split(load, config) == {bundle: "b1"}) is hot


def test_rates_are_the_long_term_history_not_the_report():
    load = LoadData()
    bundle = "t/ns/0x00000000_0x80000000"
    report(load, "b1", bundle)
    load.broker_data["b1"].local_data.last_stats[bundle].msg_rate_in = 1e9  # the report's rate is ignored
    assert find_bundles_to_split(load, {}) == {}
    history(load, bundle, rate_in=1e9)
    short_only = load.bundle_data[bundle]
    short_only.long_term_data.msg_rate_in = 0.0
    short_only.short_term_data.msg_rate_in = 1e9
    assert find_bundles_to_split(load, {}) == {}


def test_result_is_in_hash_map_order():
    load = LoadData()
    names = [f"t/ns{i}/0x00000000_0x80000000" for i in range(8)]
    for n in names:
        report(load, "b1", n, topics=2000)
    assert list(find_bundles_to_split(load, {})) == java_order(names, "hashmap")


def two_broker_load():
    load = LoadData()
    report(load, "b1:1", "t/ns/0x00000000_0x80000000", topics=2000)
    report(load, "b2:1", "t/ns/0x80000000_0xffffffff", topics=3)
    return load


NS_BUNDLES = {"t/ns": ["0x00000000_0x80000000", "0x80000000_0xffffffff"]}


def test_check_split_needs_the_feature_the_leadership_and_two_brokers():
    load = two_broker_load()
    brokers = ["b1:1", "b2:1"]
    kw = dict(namespace_bundles=NS_BUNDLES)
    assert check_namespace_bundle_split(load, {}, is_leader=True, known_brokers=brokers, **kw) == [
        BundleSplitDecision("t/ns/0x00000000_0x80000000", "b1:1", True)
    ]
    assert check_namespace_bundle_split(load, {}, is_leader=False, known_brokers=brokers, **kw) == []
    assert check_namespace_bundle_split(load, {}, is_leader=True, known_brokers=["b1:1"], **kw) == []
    off = {"loadBalancerAutoBundleSplitEnabled": False}
    assert check_namespace_bundle_split(load, off, is_leader=True, known_brokers=brokers, **kw) == []


def test_check_split_skips_unsplittable_and_vanished_bundles():
    load = LoadData()
    report(load, "b1:1", "t/ns/0x00000007_0x00000008", topics=2000)
    report(load, "b1:1", "t/ns/0x40000000_0x80000000", topics=2000)
    out = check_namespace_bundle_split(
        load, {}, is_leader=True, known_brokers=["b1:1", "b2:1"],
        namespace_bundles={"t/ns": ["0x00000007_0x00000008", "0x00000000_0x80000000"]},
    )
    assert out == []  # the first cannot be split further, the second is no longer a bundle of t/ns


def test_unload_flag_follows_config_and_guards():
    load = two_broker_load()
    brokers = ["b1:1", "b2:1"]
    no_unload = check_namespace_bundle_split(
        load, {"loadBalancerAutoUnloadSplitBundlesEnabled": False}, is_leader=True, known_brokers=brokers,
        namespace_bundles=NS_BUNDLES,
    )
    assert [d.unload for d in no_unload] == [False]
    pinned = NamespacePolicies({"p": NamespaceIsolationPolicy(("t/ns",), ("b1",))})
    guarded = check_namespace_bundle_split(
        load, {}, is_leader=True, known_brokers=brokers, namespace_bundles=NS_BUNDLES, policies=pinned
    )
    assert [d.unload for d in guarded] == [False]  # only the owner may hold it: splitting, not moving
    assert guarded[0].namespace == "t/ns" and guarded[0].bundle_range == "0x00000000_0x80000000"
