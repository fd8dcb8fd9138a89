"""The worked example of the AvgShedder article (seed 000): broker scores 20, 51, 52, 80, 80, 80.

The article contrasts ThresholdShedder (+ LeastResourceUsageWithWeight, whose placement is not tested
here) with AvgShedder. Only the shedding decisions are checked: ThresholdShedder, average 60.5, judges
the three 80-point brokers overloaded and sheds from all of them at once; AvgShedder pairs the highest
with the lowest broker, waits for the second high-threshold hit, then moves half of the pair's traffic
difference to the 20-point broker ("20,51,52,80,80,80 becomes 50,50,51,52,80,80").
"""
from clusteremu.strategies import pulsar
from clusteremu.base.java import java_order
from clusteremu.strategies.pulsar.load_data import BrokerData, BundleData, LoadData, LocalBrokerData
from clusteremu.strategies.pulsar.resource_usage import ResourceUsage

MB = 1024 * 1024
SCORES = {"broker-a": 20, "broker-b": 51, "broker-c": 52, "broker-d": 80, "broker-e": 80, "broker-f": 80}
BUNDLE_RATE = 1000.0        # msg/s per bundle (in + out)
BUNDLE_THROUGHPUT = 1 * MB  # B/s per bundle (in + out)


def article_cluster():
    """Traffic proportional to the score: a score-s broker owns s bundles of 1000 msg/s and 1 MiB/s."""
    load = LoadData()
    for broker, score in SCORES.items():
        local = LocalBrokerData(cpu=ResourceUsage(score, 100))
        for i in range(score):
            name = f"{broker}/bundle-{i}"
            local.bundles.append(name)
            data = BundleData()
            data.short_term_data.msg_rate_in = data.short_term_data.msg_rate_out = BUNDLE_RATE / 2
            data.short_term_data.msg_throughput_in = data.short_term_data.msg_throughput_out = BUNDLE_THROUGHPUT / 2
            load.bundle_data[name] = data
        local.msg_rate_in = local.msg_rate_out = score * BUNDLE_RATE / 2
        local.msg_throughput_in = local.msg_throughput_out = score * BUNDLE_THROUGHPUT / 2
        load.broker_data[broker] = BrokerData(local_data=local)
    return load


def test_threshold_shedder_sheds_from_all_three_80_point_brokers():
    decisions = pulsar.create("ThresholdShedder").find_bundles_for_unloading(article_cluster())
    assert {b for b, _ in decisions} == {"broker-d", "broker-e", "broker-f"}
    # each must shed 80 MiB/s * (0.80 - 0.605 - 0.10 + 0.05) = 11.6 MiB/s: twelve 1 MiB/s bundles
    for broker in ("broker-d", "broker-e", "broker-f"):
        assert sum(1 for b, _ in decisions if b == broker) == 12


def test_avg_shedder_shares_one_pair_evenly_after_two_high_hits():
    load = article_cluster()
    shedder = pulsar.create("AvgShedder", {"maxUnloadPercentage": 0.5})
    assert shedder.find_bundles_for_unloading(load) == []
    state = shedder.get_state()
    # (20, 80) is a high hit; (51, 80) and (52, 80) only low hits
    high_hits = {b: n for b, n in state["brokerHitCountForHigh"].items() if n > 0}  # Java leaves 0 entries too
    assert high_hits == {"broker-a": 1, paired_80(): 1}
    assert all(state["brokerHitCountForLow"][b] == 1 for b in SCORES)

    decisions = shedder.find_bundles_for_unloading(load)
    assert {b for b, _ in decisions} == {paired_80()}
    assert {shedder.planned_destination(bundle) for _, bundle in decisions} == {"broker-a"}
    moved = len(decisions) * BUNDLE_RATE
    assert 80 * BUNDLE_RATE - moved == 20 * BUNDLE_RATE + moved == 50 * BUNDLE_RATE  # "80 and 20 become 50 and 50"
    # the inner pairs keep counting towards their 8 low hits
    assert shedder.get_state()["brokerHitCountForLow"]["broker-b"] == 2


def paired_80():
    """The 80-point broker sorted last: ties keep the brokerScoreMap (HashMap) order."""
    return [b for b in java_order(SCORES, "hashmap") if SCORES[b] == 80][-1]
