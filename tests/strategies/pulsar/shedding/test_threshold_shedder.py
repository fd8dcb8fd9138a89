"""ThresholdShedder (reference §7.1, §12), including cases transcribed from Pulsar's ThresholdShedderTest."""
import math

import pytest

from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar.load_data import BrokerData, BundleData, LoadData, LocalBrokerData
from clusteremu.strategies.pulsar.resource_usage import ResourceUsage

MB = 1024 * 1024


def bundle(throughput_in=0.0, throughput_out=0.0):
    data = BundleData()
    data.short_term_data.msg_throughput_in = throughput_in
    data.short_term_data.msg_throughput_out = throughput_out
    return data


def add_broker(load, name, **fields):
    local = LocalBrokerData(**fields)
    load.broker_data[name] = BrokerData(local_data=local)
    return local


def overloaded_with_ten_bundles():
    """broker-1 at 99.9 % bandwidth with bundle-i of i MiB/s in and out; broker2 idle with its own bundles."""
    load = LoadData()
    b1 = add_broker(load, "broker-1", bandwidth_in=ResourceUsage(999, 1000), bandwidth_out=ResourceUsage(999, 1000))
    b2 = add_broker(load, "broker2")
    total = 0.0
    for i in range(1, 11):
        b1.bundles.append(f"bundle-{i}")
        load.bundle_data[f"bundle-{i}"] = bundle(i * MB, i * MB)
        load.bundle_data[f"broker2-bundle-{10 + i}"] = bundle(i * MB, i * MB)
        b2.bundles.append(f"broker2-bundle-{10 + i}")
        total += i * MB
    b1.msg_throughput_in = b1.msg_throughput_out = total
    return load


def test_no_brokers():
    assert pulsar.create("ThresholdShedder").find_bundles_for_unloading(LoadData()) == []


def test_all_usage_zero_sheds_nothing():
    load = overloaded_with_ten_bundles()
    for data in load.broker_data.values():
        data.local_data.bandwidth_in = data.local_data.bandwidth_out = ResourceUsage(0, 1000)
    assert pulsar.create("ThresholdShedder").find_bundles_for_unloading(load) == []


def test_broker_with_no_bundles_sheds_nothing():
    load = LoadData()
    add_broker(load, "broker-1", bandwidth_in=ResourceUsage(999, 1000), bandwidth_out=ResourceUsage(999, 1000))
    add_broker(load, "broker-2")
    assert pulsar.create("ThresholdShedder").find_bundles_for_unloading(load) == []


def test_broker_with_a_single_bundle_is_protected():
    load = LoadData()
    add_broker(load, "broker-1", bandwidth_in=ResourceUsage(999, 1000), bandwidth_out=ResourceUsage(999, 1000),
               bundles=["bundle-1"], msg_throughput_in=100 * MB)
    add_broker(load, "broker-2")
    load.bundle_data["bundle-1"] = bundle(100 * MB)
    assert pulsar.create("ThresholdShedder").find_bundles_for_unloading(load) == []


def test_largest_bundles_first_until_the_target_is_reached():
    assert pulsar.create("ThresholdShedder").find_bundles_for_unloading(overloaded_with_ten_bundles()) == [
        ("broker-1", "bundle-10"), ("broker-1", "bundle-9"), ("broker-1", "bundle-8")]


def test_recently_unloaded_bundles_are_excluded():
    load = overloaded_with_ten_bundles()
    load.recently_unloaded_bundles.update({"bundle-10": 1, "bundle-9": 1})
    assert pulsar.create("ThresholdShedder").find_bundles_for_unloading(load) == [
        ("broker-1", "bundle-8"), ("broker-1", "bundle-7"), ("broker-1", "bundle-6"), ("broker-1", "bundle-5")]


def test_usage_above_100_percent_is_kept_not_clipped():
    load = LoadData()
    add_broker(load, "broker-2", cpu=ResourceUsage(140, 100), bandwidth_in=ResourceUsage(500, 1000),
               bandwidth_out=ResourceUsage(500, 1000), bundles=["bundle-1", "bundle-2"],
               msg_throughput_in=1.7976931348623157e308)
    add_broker(load, "broker-3", cpu=ResourceUsage(10, 100), bandwidth_in=ResourceUsage(500, 1000),
               bandwidth_out=ResourceUsage(500, 1000), bundles=["bundle-3", "bundle-4"])
    load.bundle_data["bundle-2"] = bundle(1000, 1000)
    # clipped to <= 100 % both brokers would read 50 % and nothing would move
    assert pulsar.create("ThresholdShedder").find_bundles_for_unloading(load) == [("broker-2", "bundle-2")]


def test_nan_usage_signal_is_ignored():
    load = overloaded_with_ten_bundles()
    load.broker_data["broker-1"].local_data.cpu = ResourceUsage(math.nan, 100)
    assert pulsar.create("ThresholdShedder").find_bundles_for_unloading(load) == [
        ("broker-1", "bundle-10"), ("broker-1", "bundle-9"), ("broker-1", "bundle-8")]


def test_infinite_usage_selects_exactly_one_bundle():
    load = overloaded_with_ten_bundles()
    load.broker_data["broker-1"].local_data.cpu = ResourceUsage(math.inf, 100)
    shedder = pulsar.create("ThresholdShedder")
    assert shedder.find_bundles_for_unloading(load) == [("broker-1", "bundle-10")]
    assert shedder.get_state()["brokerAvgResourceUsage"]["broker-1"] == math.inf


def test_equal_to_average_plus_threshold_counts_as_overloaded():
    # exact binary fractions: usages 0.75 and 0.25, average 0.5, threshold 0.25 -> 0.75 >= 0.75
    load = LoadData()
    add_broker(load, "hot", cpu=ResourceUsage(3, 4), bundles=["a", "b"], msg_throughput_in=1000 * MB)
    add_broker(load, "cold", cpu=ResourceUsage(1, 4))
    load.bundle_data.update(a=bundle(600 * MB), b=bundle(400 * MB))
    config = {"loadBalancerBrokerThresholdShedderPercentage": 25}
    assert pulsar.create("ThresholdShedder", config).find_bundles_for_unloading(load) == [("hot", "a")]
    load.broker_data["hot"].local_data.cpu = ResourceUsage(0.7499, 1)
    assert pulsar.create("ThresholdShedder", config).find_bundles_for_unloading(load) == []


def test_minimum_throughput_threshold_skips_small_offloads():
    load = overloaded_with_ten_bundles()  # needs ~49 MiB/s
    config = {"loadBalancerBundleUnloadMinThroughputThreshold": 50}
    assert pulsar.create("ThresholdShedder", config).find_bundles_for_unloading(load) == []
    config = {"loadBalancerBundleUnloadMinThroughputThreshold": 49}
    assert pulsar.create("ThresholdShedder", config).find_bundles_for_unloading(load) != []


def test_history_is_an_ema_updated_for_every_broker_on_every_call():
    load = overloaded_with_ten_bundles()
    shedder = pulsar.create("ThresholdShedder")
    shedder.find_bundles_for_unloading(load)
    first = shedder.get_state()["brokerAvgResourceUsage"]
    assert first == {"broker-1": pytest.approx(0.999, rel=1e-6), "broker2": 0.0}
    load.broker_data["broker-1"].local_data.bandwidth_in = ResourceUsage(0, 1000)
    load.broker_data["broker-1"].local_data.bandwidth_out = ResourceUsage(0, 1000)
    shedder.find_bundles_for_unloading(load)
    assert shedder.get_state()["brokerAvgResourceUsage"]["broker-1"] == pytest.approx(first["broker-1"] * 0.9)


def test_state_round_trip_restores_history():
    load = overloaded_with_ten_bundles()
    a = pulsar.create("ThresholdShedder")
    a.find_bundles_for_unloading(load)
    b = pulsar.create("ThresholdShedder")
    b.set_state(a.get_state())
    assert b.find_bundles_for_unloading(load) == a.find_bundles_for_unloading(load)
    assert b.get_state() == a.get_state()


def _eleven_brokers(low_node, bundles_per_broker):
    load = LoadData()
    throughput = 100 * MB
    for i in range(11):
        local = add_broker(load, f"broker-{i}")
        for j in range(bundles_per_broker(i)):
            name = f"broker-{i}-bundle-{j}"
            load.bundle_data[name] = bundle(0 if i == low_node else throughput, 0 if i == low_node else throughput)
            local.bundles.append(name)
        usage = 0 if i == low_node else 80
        local.bandwidth_in = local.bandwidth_out = ResourceUsage(usage, 100)
        local.msg_throughput_in = local.msg_throughput_out = 0 if i == low_node else throughput
    return load


def test_lower_boundary_shedding_only_when_enabled():
    # 10 brokers at 80 %, one at 0 %: average 72.7 %, nobody above 82.7 %
    load = _eleven_brokers(10, lambda i: 10)
    assert pulsar.create("ThresholdShedder").find_bundles_for_unloading(load) == []
    decisions = pulsar.create("ThresholdShedder", {"lowerBoundarySheddingEnabled": True}).find_bundles_for_unloading(load)
    assert decisions and len({broker for broker, _ in decisions}) == 1


def test_lower_boundary_needs_a_broker_below_the_lower_bound():
    load = _eleven_brokers(-1, lambda i: 10)
    assert pulsar.create("ThresholdShedder", {"lowerBoundarySheddingEnabled": True}).find_bundles_for_unloading(load) == []


def test_lower_boundary_skips_brokers_with_one_bundle():
    load = _eleven_brokers(5, lambda i: 10 if i == 3 else 1)
    decisions = pulsar.create("ThresholdShedder", {"lowerBoundarySheddingEnabled": True}).find_bundles_for_unloading(load)
    assert len(decisions) == 1 and decisions[0][0] == "broker-3"


def test_lower_boundary_pass_updates_the_history_a_second_time():
    load = _eleven_brokers(10, lambda i: 10)
    shedder = pulsar.create("ThresholdShedder", {"lowerBoundarySheddingEnabled": True})
    # histories start below the current 80 % so that the first pass finds nobody above avg + threshold
    shedder.set_state({"brokerAvgResourceUsage": {f"broker-{i}": 0.7 if i != 10 else 0.0 for i in range(11)}})
    decisions = shedder.find_bundles_for_unloading(load)
    u = load.broker_data["broker-0"].local_data.max_resource_usage_with_weight_5(1, 0, 0, 1, 1)
    once = 0.7 * 0.9 + 0.1 * u
    twice = once * 0.9 + 0.1 * u
    assert decisions  # the lower-boundary pass ran and shed
    assert shedder.get_state()["brokerAvgResourceUsage"]["broker-0"] == pytest.approx(twice, rel=1e-12)


def test_two_overloaded_brokers_are_returned_in_hash_map_order():
    from clusteremu.base.java import java_order

    load = LoadData()
    names = ["zeta", "alpha", "mid"]
    for name in names[:2]:
        add_broker(load, name, cpu=ResourceUsage(95, 100), bundles=[f"{name}-a", f"{name}-b"],
                   msg_throughput_in=100 * MB)
        load.bundle_data[f"{name}-a"] = bundle(60 * MB)
        load.bundle_data[f"{name}-b"] = bundle(40 * MB)
    add_broker(load, "mid", cpu=ResourceUsage(5, 100))
    brokers = [b for b, _ in pulsar.create("ThresholdShedder").find_bundles_for_unloading(load)]
    assert brokers == java_order(["zeta", "alpha"], "hashmap")
