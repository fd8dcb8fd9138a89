"""The four bundle split algorithms (reference §9.2), including Pulsar's *BundleSplitAlgorithmTest cases."""
import zlib

import pytest

from clusteremu.strategies.pulsar.split import algorithms as a
from clusteremu.strategies.pulsar.split.algorithms import TopicTraffic
from clusteremu.strategies.pulsar.split.bundles import FULL_RANGE, BundleRange

MIB = 1024 * 1024


def crc(name):
    return zlib.crc32(name.encode()) & 0xFFFFFFFF


# --- range_equally_divide ------------------------------------------------------------------------------


def test_pulsar_range_equally_divide_case():
    r = BundleRange(10, 0xFFFFFFFF)
    assert a.range_equally_divide(r) == [10 + (0xFFFFFFFF - 10) // 2]


def test_range_equally_divide_full_bundle_gives_0x7fffffff():
    assert a.range_equally_divide(FULL_RANGE) == [0x7FFFFFFF]
    assert a.range_equally_divide(BundleRange(0x7FFFFFFF, 0xFFFFFFFF)) == [0xBFFFFFFF]


def test_range_equally_divide_of_a_two_hash_range_is_its_lower_bound():
    # (upper - lower) / 2 == 0: the boundary is not strictly inside, so the factory refuses it.
    assert a.range_equally_divide(BundleRange(5, 6)) == [5]


# --- topic_count_equally_divide ------------------------------------------------------------------------


def test_pulsar_topic_count_fewer_than_two_topics():
    assert a.topic_count_equally_divide(["a"]) is None
    assert a.topic_count_equally_divide([]) is None
    assert a.topic_count_equally_divide(None) is None


def test_pulsar_topic_count_equally_divide_case():
    topics = ["a", "b", "c"]
    hashes = sorted(crc(t) for t in topics)
    start, end = hashes[max(len(hashes) // 2 - 1, 0)], hashes[len(hashes) // 2]
    assert a.topic_count_equally_divide(topics) == [start + (end - start) // 2]


def test_topic_count_even_number_splits_between_the_two_middle_hashes():
    topics = [f"persistent://t/ns/topic-{i}" for i in range(10)]
    hashes = sorted(crc(t) for t in topics)
    (boundary,) = a.topic_count_equally_divide(topics)
    assert hashes[4] <= boundary < hashes[5]
    assert sum(h < boundary for h in hashes) == 5


# --- specified_positions_divide ------------------------------------------------------------------------


def test_pulsar_specified_positions_fewer_than_two_topics():
    assert a.specified_positions_divide(BundleRange(0, 100), ["a"], [1, 2]) is None


def test_pulsar_specified_positions_missing_positions_raise():
    with pytest.raises(ValueError):
        a.specified_positions_divide(BundleRange(0, 100), ["a", "b"], None)
    with pytest.raises(ValueError):
        a.specified_positions_divide(BundleRange(0, 100), ["a", "b"], [])
    with pytest.raises(ValueError):  # checked before the topics
        a.specified_positions_divide(BundleRange(0, 100), ["a"], [])


def test_pulsar_specified_positions_case():
    positions = [-1, 0, 1, 100, 200, 500, 800, 1000, 1100]
    got = a.specified_positions_divide(BundleRange(1, 1000), ["topic", "topic2"], list(reversed(positions)))
    assert got == [100, 200, 500, 800]


def test_specified_positions_none_inside_gives_none():
    assert a.specified_positions_divide(BundleRange(1, 1000), ["x", "y"], [1, 1000, 5000]) is None


# --- flow_or_qps_equally_divide ------------------------------------------------------------------------


def test_pulsar_flow_or_qps_split_keeps_every_child_under_the_limits():
    max_rate, max_mbytes, diff = 1010, 100, 10
    stats, topics = {}, []
    for i in range(1, 13):
        rate_in = 24.5 if i < 6 else 25.5
        for j in range(20):
            tp = f"persistent://test-tenant1/test-namespace1/test{i}-partition-{j}"
            topics.append(tp)
            stats[tp] = TopicTraffic(rate_in, 25, 1000, 1000)
    tp = "persistent://test-tenant1/test-namespace1/test695-partition-0"
    topics.append(tp)
    stats[tp] = TopicTraffic(25, 35, 1000, 1000)
    positions = a.flow_or_qps_equally_divide(topics, stats, max_rate, max_mbytes, diff)
    assert positions
    by_hash = {crc(t): stats[t] for t in topics}
    hashes = sorted(by_hash)
    i = 0
    for position in positions:
        rate = throughput = 0.0
        while hashes[i] < position:
            rate += by_hash[hashes[i]].msg_rate_in + by_hash[hashes[i]].msg_rate_out
            throughput += by_hash[hashes[i]].msg_throughput_in + by_hash[hashes[i]].msg_throughput_out
            i += 1
        assert rate < max_rate
        assert throughput < max_mbytes * MIB


def test_pulsar_flow_or_qps_first_position_overloaded():
    topics = [f"persistent://test-tenant1/test-namespace1/test-partition-{i}" for i in range(5)]
    hashes = sorted(crc(t) for t in topics)
    by_hash = {crc(t): t for t in topics}
    stats = {by_hash[hashes[0]]: TopicTraffic(1000, 1000, 1000, 1000)}
    for h in hashes[1:]:
        stats[by_hash[h]] = TopicTraffic(24.5, 25, 1000, 1000)
    positions = a.flow_or_qps_equally_divide(topics, stats, 1010, 100, 10)
    assert positions[0] == hashes[0] + (hashes[1] - hashes[0]) // 2 + 1


def test_flow_or_qps_under_the_limits_plus_difference_gives_none():
    topics = ["t1", "t2", "t3"]
    stats = {t: TopicTraffic(300, 0, 0, 0) for t in topics}  # 900 msg/s < 1000 * 1.1
    assert a.flow_or_qps_equally_divide(topics, stats, 1000, 100, 10) is None
    stats = {t: TopicTraffic(400, 0, 0, 0) for t in topics}  # 1200 msg/s >= 1100
    assert a.flow_or_qps_equally_divide(topics, stats, 1000, 100, 10)


def test_flow_or_qps_throughput_alone_can_trigger():
    topics = ["t1", "t2"]
    stats = {t: TopicTraffic(0, 0, 60 * MIB, 0) for t in topics}  # 120 MiB/s >= 110 MiB/s
    hashes = sorted(crc(t) for t in topics)
    assert a.flow_or_qps_equally_divide(topics, stats, 30000, 100, 10) == [hashes[0] + (hashes[1] - hashes[0]) // 2 + 1]


def test_flow_or_qps_skips_idle_and_unknown_topics():
    stats = {"busy": TopicTraffic(5000, 0, 0, 0), "idle": TopicTraffic(0, 0, 0, 0)}
    assert a.flow_or_qps_equally_divide(["busy", "idle", "unknown"], stats, 1000, 100, 10) is None
    assert a.flow_or_qps_equally_divide(["busy"], stats, 1000, 100, 10) is None


def test_flow_or_qps_cuts_before_the_topic_that_does_not_fit():
    topics = ["a", "b"]
    hashes = sorted(crc(t) for t in topics)
    by_hash = {crc(t): t for t in topics}
    stats = {by_hash[hashes[0]]: TopicTraffic(10, 0, 0, 0), by_hash[hashes[1]]: TopicTraffic(2000, 0, 0, 0)}
    assert a.flow_or_qps_equally_divide(topics, stats, 1000, 100, 10) == [hashes[0] + (hashes[1] - hashes[0]) // 2 + 1]


# --- by name -------------------------------------------------------------------------------------------


def test_pulsar_of_returns_the_algorithm_or_none():
    assert a.of(None) is None
    assert a.of("whatever") is None
    assert a.of("range_equally_divide") is a.range_equally_divide
    assert a.of("topic_count_equally_divide") is a.topic_count_equally_divide
    assert a.of("specified_positions_divide") is a.specified_positions_divide
    assert a.of("flow_or_qps_equally_divide") is a.flow_or_qps_equally_divide


def test_get_split_boundaries_by_config_name():
    r = FULL_RANGE
    assert a.get_split_boundaries("range_equally_divide", r) == [0x7FFFFFFF]
    assert a.get_split_boundaries("topic_count_equally_divide", r, ["x"]) is None
    assert a.get_split_boundaries("specified_positions_divide", r, ["x", "y"], positions=[7]) == [7]
    stats = {"t1": TopicTraffic(20000, 0, 0, 0), "t2": TopicTraffic(20000, 0, 0, 0)}
    flow = a.get_split_boundaries(
        "flow_or_qps_equally_divide", r, ["t1", "t2"], topic_stats=stats,
        config={"loadBalancerNamespaceBundleMaxMsgRate": 30000},
    )
    assert len(flow) == 1
    assert a.get_split_boundaries("flow_or_qps_equally_divide", r, ["t1", "t2"], topic_stats=stats) == flow
    with pytest.raises(ValueError):
        a.get_split_boundaries("nope", r)


def test_topic_traffic_from_topic_stats_json():
    t = TopicTraffic.from_json({"msgRateIn": 1, "msgRateOut": 2, "msgThroughputIn": 3, "msgThroughputOut": 4})
    assert t == TopicTraffic(1.0, 2.0, 3.0, 4.0)
