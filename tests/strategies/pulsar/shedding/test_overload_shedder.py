"""OverloadShedder (reference §7.2, §12), including cases transcribed from Pulsar's OverloadShedderTest."""
import math

from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar.load_data import BrokerData, BundleData, LoadData, LocalBrokerData
from clusteremu.strategies.pulsar.resource_usage import ResourceUsage

MB = 1024 * 1024
CONF = {"loadBalancerBrokerOverloadedThresholdPercentage": 85}


def bundle(throughput_in=0.0, throughput_out=0.0):
    data = BundleData()
    data.short_term_data.msg_throughput_in = throughput_in
    data.short_term_data.msg_throughput_out = throughput_out
    return data


def add_broker(load, name, **fields):
    local = LocalBrokerData(**fields)
    load.broker_data[name] = BrokerData(local_data=local)
    return local


def overloaded(load, name="broker-1", usage=999):
    local = add_broker(load, name, bandwidth_in=ResourceUsage(usage, 1000), bandwidth_out=ResourceUsage(usage, 1000))
    total = 0.0
    for i in range(1, 11):
        local.bundles.append(f"{name}/bundle-{i}")
        load.bundle_data[f"{name}/bundle-{i}"] = bundle(i * MB, i * MB)
        total += i * MB
    local.msg_throughput_in = local.msg_throughput_out = total
    return local


def shed(load, conf=CONF):
    return pulsar.create("OverloadShedder", conf).find_bundles_for_unloading(load)


def test_no_brokers():
    assert shed(LoadData()) == []


def test_broker_with_no_bundles():
    load = LoadData()
    add_broker(load, "broker-1", bandwidth_in=ResourceUsage(999, 1000), bandwidth_out=ResourceUsage(999, 1000))
    assert shed(load) == []


def test_broker_not_overloaded():
    load = LoadData()
    overloaded(load, usage=500)
    assert shed(load) == []


def test_sole_bundle_is_protected():
    load = LoadData()
    add_broker(load, "broker-1", bandwidth_in=ResourceUsage(999, 1000), bundles=["bundle-1"], msg_throughput_in=1e9)
    load.bundle_data["bundle-1"] = bundle(1000, 1000)
    assert shed(load) == []


def test_largest_bundles_first_until_below_the_threshold():
    load = LoadData()
    overloaded(load)
    add_broker(load, "another-broker", bundles=["another-bundle"])
    load.bundle_data["another-bundle"] = bundle(50 * MB)
    assert shed(load) == [("broker-1", "broker-1/bundle-10"), ("broker-1", "broker-1/bundle-9")]


def test_recently_unloaded_bundles_are_excluded():
    load = LoadData()
    overloaded(load)
    load.recently_unloaded_bundles.update({"broker-1/bundle-10": 1, "broker-1/bundle-9": 1})
    assert shed(load) == [("broker-1", "broker-1/bundle-8"), ("broker-1", "broker-1/bundle-7")]


def test_usage_exactly_at_the_threshold_is_overloaded():
    load = LoadData()
    overloaded(load, usage=750)  # 75 % exactly in float32
    assert shed(load, {"loadBalancerBrokerOverloadedThresholdPercentage": 75}) != []
    assert shed(load, {"loadBalancerBrokerOverloadedThresholdPercentage": 76}) == []


def test_unweighted_max_ignores_weights_and_memory():
    load = LoadData()
    local = overloaded(load, usage=0)
    local.cpu = ResourceUsage(90, 100)
    local.memory = ResourceUsage(100, 100)
    # CPU weight 0 does not matter: OverloadShedder uses the unweighted max
    assert shed(load, {**CONF, "loadBalancerCPUResourceWeight": 0.0}) != []
    local.cpu = ResourceUsage(10, 100)
    assert shed(load) == []  # memory alone does not count


def test_usage_above_100_percent_sheds_more():
    load = LoadData()
    local = overloaded(load, usage=0)
    local.cpu = ResourceUsage(200, 100)
    # need = 110 MiB/s * (2.0 - 0.85 + 0.05) = 132 MiB/s: more than the whole broker, every bundle goes
    assert len(shed(load)) == 10


def test_nan_signal_is_ignored():
    load = LoadData()
    local = overloaded(load)
    local.cpu = ResourceUsage(math.nan, 100)
    assert shed(load) == [("broker-1", "broker-1/bundle-10"), ("broker-1", "broker-1/bundle-9")]


def test_every_overloaded_broker_sheds_independently_in_hash_map_order():
    from clusteremu.base.java import java_order

    load = LoadData()
    for name in ("b-one", "b-two", "b-three"):
        overloaded(load, name)
    add_broker(load, "idle")
    decisions = shed(load)
    brokers = list(dict.fromkeys(b for b, _ in decisions))
    assert brokers == java_order(["b-one", "b-two", "b-three"], "hashmap")
    assert len(decisions) == 6


def test_all_usage_zero_sheds_nothing():
    load = LoadData()
    overloaded(load, usage=0)
    add_broker(load, "idle")
    assert shed(load) == []
