"""LeastResourceUsageWithWeight, modular version (reference §8.2, §12 column LRUW, §13.4).

Includes the cases of Pulsar's ModularLoadManagerStrategyTest.testLeastResourceUsageWithWeight and
testLeastResourceUsageWithWeightWithArithmeticException.
"""
import math
from collections import Counter

import numpy as np
import pytest

from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar.load_data import BrokerData, LoadData, LocalBrokerData
from clusteremu.strategies.pulsar.resource_usage import ResourceUsage

PULSAR_TEST_CONFIG = {
    "loadBalancerCPUResourceWeight": 1.0,
    "loadBalancerMemoryResourceWeight": 0.1,
    "loadBalancerDirectMemoryResourceWeight": 0.1,
    "loadBalancerBandwithInResourceWeight": 1.0,
    "loadBalancerBandwithOutResourceWeight": 1.0,
    "loadBalancerHistoryResourcePercentage": 0.5,
    "loadBalancerAverageResourceUsageDifferenceThresholdPercentage": 5,
}


def broker_data(usage, limit=100, bundles=("0x00000000_0xffffffff",), rate=100.0):
    """Every resource at usage/limit, a message rate and a bundle (as Pulsar's test initBrokerData)."""
    local = LocalBrokerData(msg_rate_in=rate, msg_rate_out=rate, bundles=list(bundles))
    for name in ("cpu", "memory", "direct_memory", "bandwidth_in", "bandwidth_out"):
        setattr(local, name, ResourceUsage(usage, limit))
    return BrokerData(local_data=local)


def cpu_broker(cpu, rate=100.0, bundles=("b",)):
    """Only CPU used (percent of 100)."""
    return BrokerData(local_data=LocalBrokerData(cpu=ResourceUsage(cpu, 100), msg_rate_in=rate, bundles=list(bundles)))


def strategy(config=None, seed=0):
    return pulsar.create("LeastResourceUsageWithWeight", config or {}, rng=np.random.default_rng(seed))


def test_pulsar_least_resource_usage_with_weight_case():
    load = LoadData()
    for name, usage in zip("1234", (10, 30, 60, 5)):
        load.broker_data[name] = broker_data(usage)
    s = strategy(PULSAR_TEST_CONFIG, seed=1)
    s.select_broker(["1", "2", "3", "4"], "x", load)  # puts broker 4 in the history
    candidates = ["1", "2", "3"]
    assert s.select_broker(candidates, "x", load) == "1"
    for usages, expected in (((20, 30, 50), "1"), ((30, 30, 40), "1"), ((30, 30, 40), "1"), ((35, 20, 45), "2")):
        for name, usage in zip("123", usages):
            load.broker_data[name] = broker_data(usage)
        assert s.select_broker(candidates, "x", load) == expected
    # A restarted broker (no bundles) is judged by its current usage only, so it becomes one of the best.
    for name, usage in zip("123", (35, 20, 0)):
        load.broker_data[name] = broker_data(usage)
    load.broker_data["3"].local_data.bundles = []
    assert s.select_broker(candidates, "x", load) == "3"


def test_pulsar_history_of_non_candidates_is_harmless():
    load = LoadData()
    for name, usage in zip("1234", (10, 30, 60, 5)):
        load.broker_data[name] = broker_data(usage)
    s = strategy(PULSAR_TEST_CONFIG)
    s.set_state({"brokerAvgResourceUsageWithWeight": {"1": 0.1, "2": 0.3, "4": 0.05}})
    assert s.select_broker(["1", "2", "3"], "x", load) == "1"
    assert s.get_state()["brokerAvgResourceUsageWithWeight"]["4"] == 0.05  # not a candidate: untouched


def test_history_is_an_ema_updated_only_for_candidates():
    load = LoadData()
    load.broker_data["a"] = cpu_broker(20)
    load.broker_data["b"] = cpu_broker(40)
    s = strategy({"loadBalancerHistoryResourcePercentage": 0.9})
    s.select_broker(["a", "b"], "x", load)
    load.broker_data["a"] = cpu_broker(80)
    s.select_broker(["a"], "x", load)
    history = s.get_state()["brokerAvgResourceUsageWithWeight"]
    a20 = float(np.float32(np.float32(20) / np.float32(100)) * np.float32(100)) / 100
    a80 = float(np.float32(np.float32(80) / np.float32(100)) * np.float32(100)) / 100
    assert history["a"] == a20 * 0.9 + (1 - 0.9) * a80
    assert history["b"] == float(np.float32(np.float32(40) / np.float32(100)) * np.float32(100)) / 100


def test_no_candidates_gives_none_and_updates_nothing():
    s = strategy()
    assert s.select_broker([], "x", LoadData()) is None
    assert s.get_state() == {"brokerAvgResourceUsageWithWeight": {}}


def test_all_usage_equal_is_a_random_choice_among_all():
    load = LoadData()
    for name in "abc":
        load.broker_data[name] = cpu_broker(0)
    s = strategy(seed=4)
    choice = s.select(list("abc"), "x", load)
    assert choice.random_fallback and choice.best == ("a", "b", "c")
    assert set(Counter(s.select_broker(list("abc"), "x", load) for _ in range(300))) == {"a", "b", "c"}


def test_broker_with_zero_bundles_restarts_its_history():
    load = LoadData()
    load.broker_data["a"] = cpu_broker(90)
    load.broker_data["b"] = cpu_broker(50)
    s = strategy({"loadBalancerHistoryResourcePercentage": 0.9})
    s.select_broker(["a", "b"], "x", load)
    load.broker_data["a"] = cpu_broker(10, bundles=())
    s.select_broker(["a", "b"], "x", load)
    assert s.get_state()["brokerAvgResourceUsageWithWeight"]["a"] == pytest.approx(0.1)


def test_broker_with_zero_message_rate_restarts_its_history():
    load = LoadData()
    load.broker_data["a"] = cpu_broker(90)
    s = strategy({"loadBalancerHistoryResourcePercentage": 0.9})
    s.select_broker(["a"], "x", load)
    load.broker_data["a"] = cpu_broker(10, rate=0.0)
    s.select_broker(["a"], "x", load)
    assert s.get_state()["brokerAvgResourceUsageWithWeight"]["a"] == pytest.approx(0.1)
    load.broker_data["a"] = cpu_broker(50, rate=1.0)  # rate back: EMA again
    s.select_broker(["a"], "x", load)
    assert s.get_state()["brokerAvgResourceUsageWithWeight"]["a"] == pytest.approx(0.1 * 0.9 + 0.1 * 0.5)


def test_broker_with_one_bundle_is_fine():
    load = LoadData()
    load.broker_data["one"] = cpu_broker(10, bundles=("only",))
    load.broker_data["hot"] = cpu_broker(70)
    assert strategy().select_broker(["hot", "one"], "x", load) == "one"


def test_usage_above_100_percent_is_kept():
    load = LoadData()
    load.broker_data["over"] = cpu_broker(150)
    load.broker_data["low"] = cpu_broker(10)
    s = strategy()
    assert s.select_broker(["over", "low"], "x", load) == "low"
    assert s.get_state()["brokerAvgResourceUsageWithWeight"]["over"] == pytest.approx(1.5)


def test_nan_usage_signal_is_ignored():
    load = LoadData()
    nan = cpu_broker(10)
    nan.local_data.bandwidth_in = ResourceUsage(float("nan"), 100)
    load.broker_data["nan"] = nan
    load.broker_data["hot"] = cpu_broker(60)
    s = strategy()
    assert s.select_broker(["nan", "hot"], "x", load) == "nan"
    assert s.get_state()["brokerAvgResourceUsageWithWeight"]["nan"] == pytest.approx(0.1)


def test_ties_are_random_among_the_qualifying():
    load = LoadData()
    load.broker_data["a"] = cpu_broker(10)
    load.broker_data["b"] = cpu_broker(10)
    load.broker_data["c"] = cpu_broker(90)
    s = strategy(seed=8)
    choices = Counter(s.select_broker(list("abc"), "x", load) for _ in range(200))
    assert set(choices) == {"a", "b"}


def test_difference_exactly_at_the_threshold_qualifies():
    # Histories 0.0 and 0.2 average 0.1; 0.0 + 0.1 <= 0.1 holds with equality.
    load = LoadData()
    load.broker_data["low"] = cpu_broker(0)
    load.broker_data["high"] = cpu_broker(20)
    s = strategy()
    s.set_state({"brokerAvgResourceUsageWithWeight": {}})
    choice = s.select(["low", "high"], "x", load)
    assert not choice.random_fallback and choice.best == ("low",)


def test_just_under_the_threshold_falls_back_to_random():
    load = LoadData()
    load.broker_data["low"] = cpu_broker(1)
    load.broker_data["high"] = cpu_broker(20)
    assert strategy().select(["low", "high"], "x", load).random_fallback


def test_candidate_missing_from_load_data_raises_after_updating_the_earlier_ones():
    load = LoadData()
    load.broker_data["a"] = cpu_broker(10)
    s = strategy()
    with pytest.raises(KeyError):
        s.select_broker(["a", "ghost"], "x", load)
    assert "a" in s.get_state()["brokerAvgResourceUsageWithWeight"]


def test_on_active_brokers_change_drops_departed_history():
    s = strategy()
    s.set_state({"brokerAvgResourceUsageWithWeight": {"a": 0.1, "b": 0.2, "c": 0.3}})
    s.on_active_brokers_change({"a", "c", "d"})
    assert s.get_state() == {"brokerAvgResourceUsageWithWeight": {"a": 0.1, "c": 0.3}}


def test_state_round_trips_and_keeps_nan():
    s = strategy()
    s.set_state({"brokerAvgResourceUsageWithWeight": {"a": float("nan"), "b": 0.5}})
    state = s.get_state()["brokerAvgResourceUsageWithWeight"]
    assert math.isnan(state["a"]) and state["b"] == 0.5
