"""AvgShedder (reference §7.4, §12, §13.7): hit counting, pairing, selection and placement.

Includes the cases of Pulsar's AvgShedderTest (high hits, low hits, several pairs, planned placement).
"""
import math
import zlib
from collections import Counter

import numpy as np
import pytest

from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar.load_data import BrokerData, BundleData, LoadData, LocalBrokerData
from clusteremu.strategies.pulsar.resource_usage import ResourceUsage

MB = 1024 * 1024


def bundle(rate_in=0.0, rate_out=0.0, throughput_in=0.0, throughput_out=0.0):
    data = BundleData()
    s = data.short_term_data
    s.msg_rate_in, s.msg_rate_out, s.msg_throughput_in, s.msg_throughput_out = rate_in, rate_out, throughput_in, throughput_out
    return data


def add_broker(load, name, cpu, rate=0.0, throughput=0.0):
    """A broker at ``cpu`` percent with ``rate`` msg/s and ``throughput`` B/s, split evenly in/out."""
    local = LocalBrokerData(cpu=ResourceUsage(cpu, 100), msg_rate_in=rate / 2, msg_rate_out=rate / 2,
                            msg_throughput_in=throughput / 2, msg_throughput_out=throughput / 2)
    load.broker_data[name] = BrokerData(local_data=local)
    return local


def give_bundles(load, broker, prefix, count, rate=900.0):
    for i in range(count):
        name = f"{prefix}-{i}"
        load.broker_data[broker].local_data.bundles.append(name)
        load.bundle_data[name] = bundle(rate / 2, rate / 2)


def three_brokers(cpu1, cpu2, cpu3=50):
    load = LoadData()
    add_broker(load, "broker1", cpu1, rate=20000)
    add_broker(load, "broker2", cpu2, rate=2000)
    add_broker(load, "broker3", cpu3, rate=10000)
    give_bundles(load, "broker1", "bundle", 11)
    return load


def avg(config=None, seed=0):
    return pulsar.create("AvgShedder", {"maxUnloadPercentage": 0.5, **(config or {})}, rng=np.random.default_rng(seed))


# --- Pulsar's AvgShedderTest ------------------------------------------------------------------------


def test_hit_high_threshold_twice_then_share_evenly_to_the_planned_partner():
    load = three_brokers(80, 30)
    shedder = avg({"loadBalancerAvgShedderHighThreshold": 40, "loadBalancerAvgShedderHitCountHighThreshold": 2})
    assert shedder.find_bundles_for_unloading(load) == []
    decisions = shedder.find_bundles_for_unloading(load)
    # (20000 - 2000) * 0.5 = 9000 msg/s = ten bundles of 900
    assert len(decisions) == 10 and {b for b, _ in decisions} == {"broker1"}
    for _, name in decisions:
        assert shedder.select_broker(list(load.broker_data), name, load) == "broker2"


def test_hit_low_threshold_n_times():
    load = three_brokers(60, 40)
    shedder = avg({"loadBalancerAvgShedderLowThreshold": 20, "loadBalancerAvgShedderHitCountLowThreshold": 6})
    for _ in range(5):
        assert shedder.find_bundles_for_unloading(load) == []
    decisions = shedder.find_bundles_for_unloading(load)
    assert len(decisions) == 10 and {b for b, _ in decisions} == {"broker1"}
    assert {shedder.select_broker(list(load.broker_data), n, load) for _, n in decisions} == {"broker2"}


def test_several_pairs_in_one_cycle():
    load = LoadData()
    add_broker(load, "broker1", 80, rate=20000)
    add_broker(load, "broker2", 30, rate=2000)
    add_broker(load, "broker3", 75, rate=20000)
    add_broker(load, "broker4", 35, rate=2000)
    give_bundles(load, "broker1", "bundle1", 11)
    give_bundles(load, "broker3", "bundle3", 11)
    shedder = avg({"loadBalancerAvgShedderHighThreshold": 40, "loadBalancerAvgShedderHitCountHighThreshold": 2})
    assert shedder.find_bundles_for_unloading(load) == []
    decisions = shedder.find_bundles_for_unloading(load)
    assert Counter(b for b, _ in decisions) == {"broker1": 10, "broker3": 10}
    for _, name in decisions:
        expected = "broker2" if name.startswith("bundle1-") else "broker4"
        assert shedder.select_broker(list(load.broker_data), name, load) == expected
        assert shedder.planned_destination(name) == expected


# --- hit-count semantics ----------------------------------------------------------------------------


def test_eight_consecutive_low_hits_with_default_thresholds():
    load = three_brokers(60, 40)  # gap 20: at least Low (15), below High (40)
    shedder = avg()
    for cycle in range(7):
        assert shedder.find_bundles_for_unloading(load) == [], cycle
        assert shedder.get_state()["brokerHitCountForLow"]["broker1"] == cycle + 1
    assert len(shedder.find_bundles_for_unloading(load)) == 10


def test_two_consecutive_high_hits_with_default_thresholds():
    load = three_brokers(90, 40)  # gap 50 >= High (40)
    shedder = avg()
    assert shedder.find_bundles_for_unloading(load) == []
    assert shedder.get_state()["brokerHitCountForHigh"] == {"broker2": 1, "broker1": 1}
    assert len(shedder.find_bundles_for_unloading(load)) == 10


def test_a_quiet_cycle_breaks_the_streak():
    busy, quiet = three_brokers(60, 40), three_brokers(50, 45)
    shedder = avg()
    for _ in range(7):
        shedder.find_bundles_for_unloading(busy)
    assert shedder.find_bundles_for_unloading(quiet) == []
    assert shedder.get_state()["brokerHitCountForLow"] == {}  # no pair at all: both maps cleared
    for _ in range(7):
        assert shedder.find_bundles_for_unloading(busy) == []
    assert shedder.find_bundles_for_unloading(busy) != []


def test_a_low_only_cycle_resets_the_high_count_but_not_the_low_count():
    high, low = three_brokers(90, 40), three_brokers(60, 40)
    shedder = avg()
    shedder.find_bundles_for_unloading(high)
    shedder.find_bundles_for_unloading(low)
    state = shedder.get_state()
    assert "broker1" not in state["brokerHitCountForHigh"] or state["brokerHitCountForHigh"]["broker1"] == 0
    assert state["brokerHitCountForLow"]["broker1"] == 2
    assert shedder.find_bundles_for_unloading(high) == []  # high count is back to 1


def test_gap_equal_to_the_thresholds_counts_as_a_hit():
    # 3/4 and 1/2 of the CPU are exact in float32: scores 75 and 50, gap exactly 25
    load = LoadData()
    add_broker(load, "hot", 0, rate=20000).cpu = ResourceUsage(3, 4)
    add_broker(load, "cold", 0, rate=2000).cpu = ResourceUsage(1, 2)
    give_bundles(load, "hot", "b", 11)
    shedder = avg({"loadBalancerAvgShedderLowThreshold": 25, "loadBalancerAvgShedderHighThreshold": 25,
                   "loadBalancerAvgShedderHitCountHighThreshold": 1})
    assert len(shedder.find_bundles_for_unloading(load)) == 10
    shedder = avg({"loadBalancerAvgShedderLowThreshold": 26, "loadBalancerAvgShedderHitCountLowThreshold": 1})
    assert shedder.find_bundles_for_unloading(load) == []


def test_trigger_resets_counters_even_when_nothing_moves():
    load = three_brokers(90, 40)
    for data in load.broker_data.values():  # traffic too small to move anything
        data.local_data.msg_rate_in = data.local_data.msg_rate_out = 1.0
    shedder = avg()
    shedder.find_bundles_for_unloading(load)
    assert shedder.find_bundles_for_unloading(load) == []
    state = shedder.get_state()
    assert "broker1" not in state["brokerHitCountForHigh"] and "broker1" not in state["brokerHitCountForLow"]
    assert "broker2" not in state["brokerHitCountForHigh"] and "broker2" not in state["brokerHitCountForLow"]
    assert shedder.find_bundles_for_unloading(load) == []  # counting starts again from 1


def test_counters_accumulate_across_partners():
    # the article's example: broker1 and broker2 near 80, broker3 at 20; the max alternates
    shedder = avg({"loadBalancerAvgShedderHitCountLowThreshold": 3, "loadBalancerAvgShedderHighThreshold": 100})

    def cluster(first_high):
        load = LoadData()
        add_broker(load, "broker1", 81 if first_high else 80, rate=20000)
        add_broker(load, "broker2", 80 if first_high else 81, rate=20000)
        add_broker(load, "broker3", 20, rate=2000)
        give_bundles(load, "broker1", "one", 11)
        give_bundles(load, "broker2", "two", 11)
        return load

    assert shedder.find_bundles_for_unloading(cluster(True)) == []   # (broker3, broker1)
    assert shedder.find_bundles_for_unloading(cluster(False)) == []  # (broker3, broker2): broker3 has 2 hits
    decisions = shedder.find_bundles_for_unloading(cluster(False))    # broker3 reaches 3 with any partner
    assert decisions and {b for b, _ in decisions} == {"broker2"}


def test_a_non_extreme_broker_keeps_its_counter_while_the_inner_pair_still_exceeds_low():
    load = LoadData()
    for name, cpu in (("a", 10), ("b", 30), ("c", 60), ("d", 95)):
        add_broker(load, name, cpu, rate=1.0)
    shedder = avg({"loadBalancerAvgShedderHitCountLowThreshold": 100, "loadBalancerAvgShedderHitCountHighThreshold": 100})
    shedder.find_bundles_for_unloading(load)
    shedder.find_bundles_for_unloading(load)
    state = shedder.get_state()
    assert state["brokerHitCountForLow"] == {"a": 2, "d": 2, "b": 2, "c": 2}
    # b and c hold zero entries: Java's computeIfAbsent in the hit check leaves them behind
    assert state["brokerHitCountForHigh"] == {"a": 2, "d": 2, "b": 0, "c": 0}


# --- selection ----------------------------------------------------------------------------------------


def test_message_rate_is_preferred_to_throughput():
    load = LoadData()
    add_broker(load, "hot", 90, rate=20000, throughput=400 * MB)
    add_broker(load, "cold", 10, rate=0, throughput=0)
    load.broker_data["hot"].local_data.bundles = ["many-msgs", "many-bytes"]
    load.bundle_data["many-msgs"] = bundle(rate_in=9000, throughput_in=1 * MB)
    load.bundle_data["many-bytes"] = bundle(rate_in=100, throughput_in=199 * MB)
    shedder = avg({"loadBalancerAvgShedderHitCountHighThreshold": 1})
    # need 10000 msg/s: both bundles fit by msg rate, largest first
    assert shedder.find_bundles_for_unloading(load) == [("hot", "many-msgs"), ("hot", "many-bytes")]
    # with too little msg rate to move, throughput decides: need 200 MiB/s
    load.broker_data["hot"].local_data.msg_rate_in = load.broker_data["hot"].local_data.msg_rate_out = 500
    assert shedder.find_bundles_for_unloading(load) == [("hot", "many-bytes"), ("hot", "many-msgs")]


def test_bundles_that_do_not_fit_are_skipped_and_zero_traffic_is_never_taken():
    load = LoadData()
    add_broker(load, "hot", 90, rate=20000)
    add_broker(load, "cold", 10, rate=0)
    load.broker_data["hot"].local_data.bundles = ["big", "mid", "small", "zero"]
    load.bundle_data.update(big=bundle(12000), mid=bundle(6000), small=bundle(4000), zero=bundle(0))
    shedder = avg({"loadBalancerAvgShedderHitCountHighThreshold": 1})
    assert shedder.find_bundles_for_unloading(load) == [("hot", "mid"), ("hot", "small")]


def test_a_sole_bundle_is_not_protected():
    load = LoadData()
    add_broker(load, "hot", 90, rate=20000)
    add_broker(load, "cold", 10, rate=0)
    give_bundles(load, "hot", "only", 1, rate=5000)
    shedder = avg({"loadBalancerAvgShedderHitCountHighThreshold": 1})
    assert shedder.find_bundles_for_unloading(load) == [("hot", "only-0")]


def test_broker_without_bundles_yields_nothing():
    load = LoadData()
    add_broker(load, "hot", 90, rate=20000)
    add_broker(load, "cold", 10, rate=0)
    assert avg({"loadBalancerAvgShedderHitCountHighThreshold": 1}).find_bundles_for_unloading(load) == []


def test_recently_unloaded_bundles_are_excluded():
    load = three_brokers(90, 40)
    load.recently_unloaded_bundles.update({f"bundle-{i}": 1 for i in range(9)})
    shedder = avg({"loadBalancerAvgShedderHitCountHighThreshold": 1})
    decisions = shedder.find_bundles_for_unloading(load)
    # equal traffic: the two left keep the HashMap order of getBundleDataForLoadShedding()
    assert decisions == [("broker1", b) for b in load.get_bundle_data_for_load_shedding() if b in {"bundle-9", "bundle-10"}]


def test_no_brokers_and_all_usage_zero():
    shedder = avg()
    assert shedder.find_bundles_for_unloading(LoadData()) == []
    load = three_brokers(0, 0, 0)
    shedder.set_state({"brokerHitCountForLow": {"broker1": 5}, "brokerHitCountForHigh": {"broker1": 1}})
    assert shedder.find_bundles_for_unloading(load) == []
    assert shedder.get_state()["brokerHitCountForLow"] == {} and shedder.get_state()["brokerHitCountForHigh"] == {}


def test_usage_above_100_percent_and_nan_signals():
    load = three_brokers(150, 40)
    load.broker_data["broker2"].local_data.bandwidth_in = ResourceUsage(math.nan, 100)
    shedder = avg({"loadBalancerAvgShedderHitCountHighThreshold": 1})
    assert len(shedder.find_bundles_for_unloading(load)) == 10
    assert shedder.get_state()["brokerScoreMap"]["broker1"] == pytest.approx(150.0)
    assert shedder.get_state()["brokerScoreMap"]["broker2"] == pytest.approx(40.0, rel=1e-6)


def test_tied_scores_pair_in_hash_map_order():
    from clusteremu.base.java import java_order

    load = LoadData()
    for name in ("x1", "x2", "x3"):
        add_broker(load, name, 80, rate=20000)
        give_bundles(load, name, name, 11)
    add_broker(load, "low", 20, rate=2000)
    decisions = avg({"loadBalancerAvgShedderHitCountHighThreshold": 1}).find_bundles_for_unloading(load)
    last_tied = java_order(["x1", "x2", "x3"], "hashmap")[-1]
    assert {b for b, _ in decisions} == {last_tied}


# --- placement ----------------------------------------------------------------------------------------


def test_placement_without_a_plan_is_uniform_over_sorted_candidates_and_remembered():
    shedder = avg(seed=7)
    picks = Counter(shedder.select_broker(["c", "a", "b"], f"bundle-{i}") for i in range(3000))
    assert set(picks) == {"a", "b", "c"} and min(picks.values()) > 900
    first = shedder.select_broker(["a", "b", "c"], "bundle-0")
    assert shedder.get_state()["bundleBrokerMap"]["bundle-0"] == first


def test_placement_index_is_crc32_of_the_random_int_modulo_the_sorted_candidates():
    shedder = avg(seed=11)
    twin = np.random.default_rng(11)
    for i in range(20):
        drawn = int(twin.integers(-(2**31), 2**31))
        index = zlib.crc32(str(drawn).encode()) % 3
        assert shedder.select_broker(["b", "c", "a"], f"n{i}") == ["a", "b", "c"][index]


def test_planned_partner_is_used_only_while_it_is_a_candidate():
    shedder = avg()
    shedder.set_state({"bundleBrokerMap": {"bundle-x": "broker2"}})
    assert shedder.select_broker(["broker1", "broker2"], "bundle-x") == "broker2"
    replacement = shedder.select_broker(["broker1", "broker3"], "bundle-x")
    assert replacement in {"broker1", "broker3"}
    assert shedder.planned_destination("bundle-x") == replacement


def test_empty_candidates_raise_like_java_arithmetic_exception():
    with pytest.raises(ArithmeticError):
        avg().select_broker([], "bundle-1")


def test_state_is_keyed_by_bundle_name_and_round_trips():
    load = three_brokers(90, 40)
    a = avg({"loadBalancerAvgShedderHitCountHighThreshold": 1})
    decisions = a.find_bundles_for_unloading(load)
    state = a.get_state()
    assert set(state["bundleBrokerMap"]) == {n for _, n in decisions}  # identical stats do not collide
    b = avg({"loadBalancerAvgShedderHitCountHighThreshold": 1})
    b.set_state(state)
    assert b.get_state() == state


def test_placement_works_for_brokers_without_load_data():
    load = three_brokers(50, 50)
    broker = avg().select_broker(["new-broker-1", "new-broker-2"], "bundle-0", load)
    assert broker in {"new-broker-1", "new-broker-2"}
