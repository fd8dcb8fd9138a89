"""LeastLongTermMessageRate (reference §8.2, §12 column LLTMR, §13.3).

Includes the case of Pulsar's ModularLoadManagerStrategyTest.testLeastLongTermMessageRate.
"""
import math
from collections import Counter

import numpy as np
import pytest

from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar.load_data import BrokerData, BundleData, LoadData, LocalBrokerData
from clusteremu.strategies.pulsar.resource_usage import ResourceUsage


def broker(load, name, long_term_rate_in=0.0, long_term_rate_out=0.0, cpu=None):
    local = LocalBrokerData()
    if cpu is not None:
        local.cpu = ResourceUsage(cpu, 100)
    data = BrokerData(local_data=local)
    data.time_average_data.long_term_msg_rate_in = long_term_rate_in
    data.time_average_data.long_term_msg_rate_out = long_term_rate_out
    load.broker_data[name] = data
    return data


def strategy(seed=0, config=None):
    return pulsar.create("LeastLongTermMessageRate", config or {}, rng=np.random.default_rng(seed))


def test_pulsar_least_long_term_message_rate_case():
    load = LoadData()
    b1 = broker(load, "1", 100)
    broker(load, "2", 200)
    b3 = broker(load, "3", 300)
    s = strategy()
    assert s.select_broker(["1", "2", "3"], "ns/0x0_0x1", load) == "1"
    b1.time_average_data.long_term_msg_rate_in = 400
    assert s.select_broker(["1", "2", "3"], "ns/0x0_0x1", load) == "2"
    load.broker_data["2"].local_data.cpu = ResourceUsage(90, 100)
    assert s.select_broker(["1", "2", "3"], "ns/0x0_0x1", load) == "3"
    assert b3.time_average_data.long_term_msg_rate_in == 300


def test_score_adds_preallocated_long_term_rates():
    load = LoadData()
    b1 = broker(load, "b1", 100, 50)
    broker(load, "b2", 300)
    pre = BundleData.with_default_stats()  # 50 + 50 msg/s long term
    pre.long_term_data.msg_rate_in = 120.0
    pre.long_term_data.msg_rate_out = 80.0
    b1.preallocated_bundle_data["t/ns/0x00000000_0x80000000"] = pre
    s = strategy()
    assert s.score("b1", load) == 150.0 + 200.0
    assert s.select_broker(["b1", "b2"], "x", load) == "b2"


def test_no_candidates_gives_none_without_drawing():
    rng = np.random.default_rng(5)
    s = pulsar.create("LeastLongTermMessageRate", {}, rng=rng)
    assert s.select_broker([], "x", LoadData()) is None
    assert rng.integers(1 << 30) == np.random.default_rng(5).integers(1 << 30)


def test_all_usage_zero_lets_the_rate_decide():
    load = LoadData()
    broker(load, "a", 10)
    broker(load, "b", 5)
    broker(load, "c", 7)
    assert strategy().select_broker(["a", "b", "c"], "x", load) == "b"


def test_broker_with_zero_bundles_is_fine():
    load = LoadData()
    broker(load, "empty", 0)
    broker(load, "busy", 1)
    assert load.broker_data["empty"].local_data.bundles == []
    assert strategy().select_broker(["busy", "empty"], "x", load) == "empty"


def test_broker_with_one_bundle_is_fine():
    load = LoadData()
    one = broker(load, "one", 3)
    one.local_data.bundles = ["t/ns/0x00000000_0xffffffff"]
    broker(load, "other", 4)
    assert strategy().select_broker(["other", "one"], "x", load) == "one"


def test_overload_is_strictly_above_the_threshold():
    load = LoadData()
    broker(load, "at", 1, cpu=85)  # exactly 85 %: float32 85/100*100 == 85.0, not above
    broker(load, "above", 0, cpu=85.01)
    s = strategy()
    assert s.score("at", load) == 1.0
    assert s.score("above", load) == math.inf
    assert s.select_broker(["above", "at"], "x", load) == "at"


def test_usage_above_100_percent_scores_infinite():
    load = LoadData()
    broker(load, "hot", 0, cpu=140)
    broker(load, "cool", 1e9)
    s = strategy()
    assert s.score("hot", load) == math.inf
    assert s.select_broker(["hot", "cool"], "x", load) == "cool"


def test_all_overloaded_are_all_best_and_drawn_at_random():
    load = LoadData()
    for name in ("a", "b", "c"):
        broker(load, name, 1, cpu=99)
    s = strategy(seed=11)
    choices = Counter(s.select_broker(["a", "b", "c"], "x", load) for _ in range(300))
    assert set(choices) == {"a", "b", "c"}
    choice = s.select(["a", "b", "c"], "x", load)
    assert choice.best == ("a", "b", "c") and not choice.random_fallback


def test_nan_usage_signal_is_ignored_by_the_max():
    load = LoadData()
    nan_cpu = broker(load, "nan-cpu", 5)
    nan_cpu.local_data.cpu = ResourceUsage(float("nan"), 100)
    nan_cpu.local_data.bandwidth_in = ResourceUsage(95, 100)  # the other signal still counts
    broker(load, "ok", 10)
    s = strategy()
    assert s.score("nan-cpu", load) == math.inf
    nan_cpu.local_data.bandwidth_in = ResourceUsage(10, 100)
    assert s.score("nan-cpu", load) == 5.0


def test_nan_score_never_becomes_best():
    load = LoadData()
    broker(load, "nan", float("nan"))
    broker(load, "slow", 1e12)
    s = strategy()
    assert all(s.select_broker(["nan", "slow"], "x", load) == "slow" for _ in range(20))


def test_all_nan_scores_fall_back_to_every_candidate():
    load = LoadData()
    broker(load, "a", float("nan"))
    broker(load, "b", float("nan"))
    choice = strategy(seed=2).select(["a", "b"], "x", load)
    assert choice.random_fallback and choice.best == ("a", "b")


def test_ties_are_broken_at_random_among_all_minimal():
    load = LoadData()
    broker(load, "a", 5)
    broker(load, "b", 5)
    broker(load, "c", 6)
    s = strategy(seed=3)
    choices = Counter(s.select_broker(["a", "b", "c"], "x", load) for _ in range(400))
    assert set(choices) == {"a", "b"}
    assert 150 < choices["a"] < 250


def test_same_seed_same_choices():
    load = LoadData()
    for name in "abcd":
        broker(load, name, 1)
    s1, s2 = strategy(seed=9), strategy(seed=9)
    picks = [s1.select_broker(list("abcd"), "x", load) for _ in range(20)]
    assert picks == [s2.select_broker(list("abcd"), "x", load) for _ in range(20)]
    assert len(set(picks)) > 1


def test_candidate_missing_from_load_data_raises():
    load = LoadData()
    broker(load, "a", 1)
    with pytest.raises(KeyError):
        strategy().select_broker(["a", "ghost"], "x", load)


def test_duplicates_count_once_like_a_set():
    load = LoadData()
    broker(load, "a", 1)
    broker(load, "b", 1)
    assert strategy().select(["a", "a", "b"], "x", load).best == ("a", "b")


def test_weights_come_from_the_config():
    load = LoadData()
    hot = broker(load, "hot", 0)
    hot.local_data.bandwidth_out = ResourceUsage(95, 100)
    broker(load, "cold", 100)
    assert strategy().select_broker(["hot", "cold"], "x", load) == "cold"
    no_bw = strategy(config={"loadBalancerBandwidthOutResourceWeight": 0.5})
    assert no_bw.select_broker(["hot", "cold"], "x", load) == "hot"


def test_state_is_empty():
    s = strategy()
    assert s.get_state() == {}
    s.set_state({})
    with pytest.raises(ValueError):
        s.set_state({"bestBrokers": []})


def test_remembered_overload_verdicts_match_fresh_ones_as_usages_change():
    # The strategy remembers each set of usage figures' overload verdict; a fresh strategy computes it anew.
    # Brokers take their figures from a few sets (so verdicts are reused), two of them equal but for a zero's sign.
    rng = np.random.default_rng(11)
    figures = [0.0, -0.0, 12.5, 84.9, 85.0, 85.1, 99.0, 120.0, math.nan, 1e-300]
    sets = [[(figures[int(rng.integers(len(figures)))], [100.0, 0.0, -0.0, 50.0][int(rng.integers(4))])
             for _ in range(4)] for _ in range(10)]
    sets += [[(0.0, 100.0), (-0.0, 100.0), (0.0, 0.0), (-0.0, 100.0)],
             [(-0.0, 100.0), (0.0, 100.0), (0.0, -0.0), (0.0, 100.0)]]
    load = LoadData()
    names = [f"b{i}" for i in range(40)]
    for name in names:
        broker(load, name, float(rng.integers(0, 1000)))
    config = {"loadBalancerDirectMemoryResourceWeight": 1.0}
    kept = strategy(config=config)
    verdicts = Counter()
    for _ in range(30):
        for name in names:
            local = load.broker_data[name].local_data
            chosen = sets[int(rng.integers(len(sets)))]
            for field, (usage, limit) in zip(("cpu", "direct_memory", "bandwidth_in", "bandwidth_out"), chosen):
                setattr(local, field, ResourceUsage(usage, limit))
        fresh = strategy(config=config)
        for name in names:
            a, b = kept.score(name, load), fresh.score(name, load)
            assert a == b
            verdicts[a == math.inf] += 1
    assert verdicts[True] > 0 and verdicts[False] > 0  # both verdicts were exercised
