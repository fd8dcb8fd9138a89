"""The extension's LeastResourceUsageWithWeight: weightedMaxEMA from the store, no-load-data handling,
the ``<=`` margin test and the random fallback over all candidates."""
from __future__ import annotations

import numpy as np

from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar.extensible import (
    BrokerLoadData,
    LeastResourceUsageWithWeight,
    SystemResourceUsage,
    TransferContext,
)
from clusteremu.strategies.pulsar.resource_usage import ResourceUsage as R

CONF = {
    "loadBalancerCPUResourceWeight": 1.0,
    "loadBalancerMemoryResourceWeight": 0.1,
    "loadBalancerDirectMemoryResourceWeight": 0.1,
    "loadBalancerBandwidthInResourceWeight": 1.0,
    "loadBalancerBandwidthOutResourceWeight": 1.0,
    "loadBalancerHistoryResourcePercentage": 0.5,
    "loadBalancerAverageResourceUsageDifferenceThresholdPercentage": 5,
}


def usage(percent: float) -> SystemResourceUsage:
    u = (percent, 100.0)
    return SystemResourceUsage(R(*u), R(*u), R(*u), R(*u), R(*u))


class Store(dict):
    """broker -> BrokerLoadData with a clock for the reports."""

    clock = 1

    def report(self, broker: str, percent: float, fresh: bool = False) -> None:
        Store.clock += 1
        if fresh or broker not in self:
            self[broker] = BrokerLoadData()
        self[broker].update(usage(percent), 1, 1, 1, 1, 1, 1, CONF, Store.clock)


def strategy(seed: int = 0) -> LeastResourceUsageWithWeight:
    return LeastResourceUsageWithWeight(CONF, np.random.default_rng(seed))


def test_registry_name():
    full = "org.apache.pulsar.broker.loadbalance.extensions.strategy.LeastResourceUsageWithWeight"
    assert isinstance(pulsar.create(full, {}), LeastResourceUsageWithWeight)


def test_picks_the_clearly_underloaded_broker_as_loads_evolve():
    store = Store()
    for broker, percent in (("1", 10), ("2", 30), ("3", 60), ("4", 5)):
        store.report(broker, percent)
    s = strategy()
    candidates = {"1", "2", "3"}
    assert s.select_broker(candidates, "bundle", store) == "1"
    for broker, percent in (("1", 20), ("2", 30), ("3", 50)):
        store.report(broker, percent, fresh=True)
    assert s.select_broker(candidates, "bundle", store) == "1"
    for _ in range(2):
        for broker, percent in (("1", 30), ("2", 30), ("3", 40)):
            store.report(broker, percent)  # EMA with H = 0.5
        assert s.select_broker(candidates, "bundle", store) == "1"
    for broker, percent in (("1", 35), ("2", 20), ("3", 45)):
        store.report(broker, percent)
    assert s.select_broker(candidates, "bundle", store) == "2"
    store.report("1", 35)
    store.report("2", 20)
    store.report("3", 0, fresh=True)  # a restarted broker reports low at once
    assert s.select_broker(candidates, "bundle", store) == "3"


def test_the_load_comes_from_weighted_max_ema_only():
    store = Store()
    for broker, percent in (("1", 10), ("2", 30), ("3", 60), ("4", 5)):
        store.report(broker, percent)
    store["1"].weighted_max_ema = 0.1
    store["2"].weighted_max_ema = 0.3
    store["4"].weighted_max_ema = 0.05
    assert strategy().select_broker({"1", "2", "3"}, "bundle", store) == "1"


def test_margin_is_inclusive():
    store = Store()
    store["a"], store["b"] = BrokerLoadData(weighted_max_ema=0.25), BrokerLoadData(weighted_max_ema=0.35)
    # avg 0.30: 0.25 + 0.05 <= 0.30 holds (with float rounding as Java computes it)
    assert 0.25 + 0.05 <= (0.25 + 0.35) / 2
    for seed in range(20):
        assert strategy(seed).select_broker(["a", "b"], "bundle", store) == "a"


def test_brokers_without_load_data_are_left_out_of_the_average():
    store = Store()
    store.report("1", 50)
    store.report("2", 100)
    assert strategy().select_broker({"1", "2", "5"}, "bundle", store) == "1"


def test_fallback_draws_from_every_candidate_including_those_without_data():
    store = Store()
    store.report("1", 100)
    store.report("2", 100)
    s = strategy(11)
    picks = {s.select_broker(["1", "2", "5"], "bundle", store) for _ in range(60)}
    assert picks == {"1", "2", "5"}
    picks = {s.select_broker(["1", "2", "5"], "bundle", Store()) for _ in range(60)}
    assert picks == {"1", "2", "5"}


def test_no_candidates_gives_none():
    assert strategy().select_broker([], "bundle", Store()) is None


def test_draws_are_reproducible_for_sets_and_sequences():
    store = Store()
    for broker in "abcdef":
        store.report(broker, 50)
    # A set has no order of its own: it is iterated as Java's HashSet would be, whatever Python's hash seed.
    s1, s2 = strategy(3), strategy(3)
    assert [s1.select_broker(set("abcdef"), "x", store) for _ in range(20)] == [
        s2.select_broker(frozenset("fedcba"), "x", store) for _ in range(20)
    ]
    s1, s2 = strategy(9), strategy(9)  # sequences keep their own order
    assert [s1.select_broker(list("abcdef"), "x", store) for _ in range(20)] == [
        s2.select_broker(list("abcdef"), "x", store) for _ in range(20)
    ]


def test_accepts_a_transfer_context_and_its_config_override():
    store = Store()
    store["a"], store["b"] = BrokerLoadData(weighted_max_ema=0.25), BrokerLoadData(weighted_max_ema=0.35)
    wider_margin = {"loadBalancerAverageResourceUsageDifferenceThresholdPercentage": 6}
    ctx = TransferContext(store, {}, list(store), 0, config=wider_margin)
    picks = {strategy(seed).select_broker(["a", "b"], "bundle", ctx) for seed in range(20)}
    assert picks == {"a", "b"}  # a 6 % margin leaves nobody clearly below the average
    assert strategy().get_state() == {}
