"""TopKBundles: filters, ascending output, the tolerance comparator and Pulsar's quickselect."""
from __future__ import annotations

import numpy as np
import pytest

from clusteremu.base.errors import InputError
from clusteremu.strategies.pulsar.extensible import BundleLoadData, TopBundlesLoadData, TopKBundles
from clusteremu.strategies.pulsar.extensible.top_k_bundles import compare_namespace_bundle_stats, partition_sort
from clusteremu.strategies.pulsar.load_data import NamespaceBundleStats as Stats


def bundle(i: int) -> str:
    return f"my-tenant/my-namespace{i}/0x00000000_0x0FFFFFFF"


def names(data: TopBundlesLoadData) -> list[str]:
    return [entry.bundle_name for entry in data.top_bundles_load_data]


def test_top_k_is_emitted_smallest_first_and_zero_traffic_is_kept():
    stats = {bundle(1): Stats(msg_rate_in=100000), bundle(2): Stats(msg_rate_in=500),
             bundle(3): Stats(msg_rate_in=10000), bundle(4): Stats(msg_rate_in=0)}
    top = TopKBundles().update(stats, 3)
    assert names(top) == [bundle(2), bundle(3), bundle(1)]


def test_k_larger_than_the_bundle_count_and_k_zero():
    stats = {bundle(1): Stats(msg_throughput_in=5e6), bundle(2): Stats(msg_throughput_in=1e6)}
    assert names(TopKBundles().update(stats, 10)) == [bundle(2), bundle(1)]
    assert names(TopKBundles().update(stats, 0)) == []


def test_system_namespaces_are_skipped():
    stats = {"pulsar/system/0x00000000_0x0FFFFFFF": Stats(msg_rate_in=500),
             "pulsar/localhost:8080/0x00000000_0xFFFFFFFF": Stats(msg_rate_in=900),
             bundle(1): Stats(msg_rate_in=10000)}
    assert names(TopKBundles().update(stats, 3)) == [bundle(1)]


def test_policy_bound_bundles_only_with_the_flag():
    stats = {bundle(1): Stats(msg_rate_in=500), bundle(2): Stats(msg_rate_in=10000)}
    isolated = lambda b: b == bundle(1)  # noqa: E731
    assert names(TopKBundles().update(stats, 2, isolated)) == [bundle(2)]
    everything = lambda b: True  # noqa: E731
    assert names(TopKBundles().update(stats, 2, everything)) == []
    enabled = TopKBundles({"loadBalancerSheddingBundlesWithPoliciesEnabled": True})
    assert names(enabled.update(stats, 2, everything)) == [bundle(1), bundle(2)]


def test_excluded_namespaces_are_skipped():
    top = TopKBundles({"loadBalancerSheddingExcludedNamespaces": "my-tenant/my-namespace2"})
    stats = {bundle(2): Stats(msg_rate_in=500), bundle(1): Stats(msg_rate_in=10000)}
    assert names(top.update(stats, 2)) == [bundle(1)]


def test_update_replaces_the_previous_report():
    top = TopKBundles()
    top.update({bundle(1): Stats(msg_rate_in=500)}, 2)
    top.update({bundle(2): Stats(msg_rate_in=500)}, 2)
    assert names(top.load_data) == [bundle(2)]


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (Stats(msg_throughput_in=200_001), Stats(msg_throughput_in=100_000), 1),
        (Stats(msg_throughput_in=200_000), Stats(msg_throughput_in=100_000), 0),  # exactly the tolerance
        (Stats(msg_throughput_in=50_000, msg_throughput_out=0), Stats(msg_throughput_out=200_001), -1),
        (Stats(msg_rate_in=60, msg_rate_out=41), Stats(), 1),
        (Stats(msg_rate_in=60, msg_rate_out=40), Stats(), 0),
        (Stats(topics=300, consumer_count=100, producer_count=101), Stats(), 1),
        (Stats(topics=500), Stats(), 0),
        (Stats(cache_size=100_001), Stats(), 1),
        (Stats(cache_size=100_000), Stats(), 0),
        (Stats(msg_throughput_in=float("nan")), Stats(msg_throughput_in=1e9), 0),
    ],
)
def test_comparator_tolerances(a, b, expected):
    assert compare_namespace_bundle_stats(a, b) == expected
    assert compare_namespace_bundle_stats(b, a) == -expected


def test_near_ties_fall_through_to_the_next_signal():
    # 50 KB/s apart counts as equal, so the message rate decides.
    a = Stats(msg_throughput_in=150_000, msg_rate_in=0)
    b = Stats(msg_throughput_in=100_000, msg_rate_in=500)
    assert names(TopKBundles().update({bundle(1): a, bundle(2): b}, 1)) == [bundle(2)]


def test_partition_sort_puts_the_k_largest_first_in_descending_order():
    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(1, 11))
        entries = [(str(i), int(rng.integers(n))) for i in range(n)]
        k = int(rng.integers(1, n + 1))
        actual = list(entries)
        partition_sort(actual, k)
        expected = sorted(entries, key=lambda e: -e[1])
        assert [v for _, v in actual[:k]] == [v for _, v in expected[:k]]
        assert sorted(actual) == sorted(entries)


def test_partition_sort_leaves_equal_values_in_partition_order():
    entries = [("a", 1), ("b", 1), ("c", 1)]
    partition_sort(entries, 2)
    assert entries == [("a", 1), ("b", 1), ("c", 1)]
    entries = [("a", 1), ("b", 3), ("c", 2)]
    partition_sort(entries, 1)
    assert entries[0] == ("b", 3)


def test_json_forms():
    top = TopKBundles().update({bundle(1): Stats(msg_throughput_out=5.0)}, 1)
    obj = top.to_json()
    assert obj["topBundlesLoadData"][0]["bundleName"] == bundle(1)
    assert obj["topBundlesLoadData"][0]["stats"]["msgThroughputOut"] == 5.0
    assert TopBundlesLoadData.from_json(obj) == top
    assert TopBundlesLoadData.from_json(obj["topBundlesLoadData"]) == top
    first = TopBundlesLoadData.from_json(obj).top_bundles_load_data[0]
    assert first == BundleLoadData(bundle(1), Stats(msg_throughput_out=5.0))
    with pytest.raises(InputError) as err:
        TopBundlesLoadData.from_json({"topBundlesLoadData": [{"bundleName": 3}]}, "top")
    assert err.value.where == "top.topBundlesLoadData[0].bundleName"
    with pytest.raises(InputError) as err:
        TopBundlesLoadData.from_json([{"bundleName": "x", "stats": {"msgThroughputIn": "fast"}}], "top")
    assert err.value.where == "top[0].stats.msgThroughputIn"
