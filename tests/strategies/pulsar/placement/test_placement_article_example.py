"""The AvgShedder article's placement examples (seed 000, BIGO), under LeastResourceUsageWithWeight.

1. Worked example: scores 20, 51, 52, 80, 80, 80 (average 60.5). With the default 10-point threshold only
   the broker at 20 is 10 points under the average (51 + 10 = 61 > 60.5), so every bundle shed from the three
   80s lands on it — the "over-loading" the article describes. (The article says exactly this; it is not a
   random fallback: 20 + 10 <= 60.5.)
2. The logged case: five brokers at 0.0825, 0.1114, 0.0460, 0.2393, 0.0601 (average 0.1079): nobody is 10
   points under, so "Assign randomly as all 5 brokers are overloaded" — the pick may be a high-loaded broker.
"""
from collections import Counter

import numpy as np

from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar.load_data import BrokerData, LoadData, LocalBrokerData
from clusteremu.strategies.pulsar.resource_usage import ResourceUsage


def cluster(scores):
    load = LoadData()
    for i, score in enumerate(scores):
        local = LocalBrokerData(cpu=ResourceUsage(score, 100), msg_rate_in=100.0, bundles=[f"t/ns/b{i}"])
        load.broker_data[f"broker-{i}"] = BrokerData(local_data=local)
    return load


def test_worked_example_sends_every_bundle_to_the_lowest_broker():
    load = cluster([20, 51, 52, 80, 80, 80])
    s = pulsar.create("LeastResourceUsageWithWeight", {}, rng=np.random.default_rng(0))
    brokers = list(load.broker_data)
    choices = [s.select(brokers, "public/default/0x70000000_0x80000000", load) for _ in range(20)]
    assert all(c.best == ("broker-0",) and not c.random_fallback for c in choices)
    assert {c.broker for c in choices} == {"broker-0"}


def test_logged_case_falls_back_to_a_random_broker_possibly_a_loaded_one():
    usage = [8.251018381118773, 11.141611766815185, 4.59994751214981, 23.925241661071778, 6.012571454048156]
    load = cluster(usage)
    brokers = list(load.broker_data)
    picks = Counter()
    for seed in range(60):
        s = pulsar.create("LeastResourceUsageWithWeight", {}, rng=np.random.default_rng(seed))
        choice = s.select(brokers, "public/default/0x70000000_0x80000000", load)
        assert choice.random_fallback and choice.best == tuple(brokers)
        picks[choice.broker] += 1
    assert set(picks) == set(brokers)
    assert picks["broker-3"] > 0  # the most loaded broker (23.9 %) can receive the bundle
