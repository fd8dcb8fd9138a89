"""UniformLoadShedder (reference §7.3, §12), including cases transcribed from Pulsar's UniformLoadShedderTest."""
from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar.load_data import BrokerData, BundleData, LoadData, LocalBrokerData

MB = 1024 * 1024


def bundle(rate_in=0.0, throughput_in=0.0, rate_out=0.0, throughput_out=0.0):
    data = BundleData()
    s = data.short_term_data
    s.msg_rate_in, s.msg_throughput_in, s.msg_rate_out, s.msg_throughput_out = rate_in, throughput_in, rate_out, throughput_out
    return data


def add_broker(load, name, **fields):
    local = LocalBrokerData(**fields)
    load.broker_data[name] = BrokerData(local_data=local)
    return local


def shed(load, conf=None):
    return pulsar.create("UniformLoadShedder", conf or {}).find_bundles_for_unloading(load)


def test_no_brokers():
    assert shed(LoadData()) == []


def test_all_traffic_zero():
    load = LoadData()
    add_broker(load, "a", bundles=["x", "y"])
    add_broker(load, "b")
    load.bundle_data.update(x=bundle(), y=bundle())
    assert shed(load) == []


def test_max_unload_bundle_num_per_shedding():
    load = LoadData()
    b1 = add_broker(load, "broker-1")
    add_broker(load, "broker2")
    for i in range(1, 21):
        b1.bundles.append(f"bundle-{i}")
        load.bundle_data[f"bundle-{i}"] = bundle(throughput_in=MB, throughput_out=MB)
    b1.msg_throughput_in = b1.msg_throughput_out = 20 * MB
    assert len(shed(load, {"maxUnloadBundleNumPerShedding": 2})) == 2
    # the idle broker's 0 B/s reads as 1.0 (EPS fix): need (int)((40 MiB/s - 1) * 0.2) = 8 MiB/s - 1 byte,
    # so only three 2 MiB/s bundles fit
    assert len(shed(load)) == 3


def test_overloaded_broker_differs_between_rate_and_throughput():
    rates = [50000, 60000, 70000, 10000, 20000]
    throughputs = [50 * MB, 60 * MB, 70 * MB, 80 * MB, 10 * MB]
    load = LoadData()
    for i in range(5):
        local = add_broker(load, f"broker{i}", msg_rate_in=rates[i], msg_throughput_in=throughputs[i])
        for j in range(5):
            name = f"broker-{i}-bundle-{j}"
            local.bundles.append(name)
            load.bundle_data[name] = bundle(rate_in=rates[i] / 5, throughput_in=throughputs[i] / 5)
    base = {"maxUnloadBundleNumPerShedding": 1, "maxUnloadPercentage": 0.5}
    rate_only = shed(load, {**base, "loadBalancerMsgRateDifferenceShedderThreshold": 50,
                            "loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold": 0})
    assert [b for b, _ in rate_only] == ["broker2"]
    throughput_only = shed(load, {**base, "loadBalancerMsgRateDifferenceShedderThreshold": 0,
                                  "loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold": 2})
    assert [b for b, _ in throughput_only] == ["broker3"]
    both = shed(load, {**base, "loadBalancerMsgRateDifferenceShedderThreshold": 50,
                       "loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold": 2})
    assert [b for b, _ in both] == ["broker2"]  # msg rate has priority


def _non_traffic_load():
    load = LoadData()
    b0 = add_broker(load, "broker0", msg_rate_in=10_000, msg_throughput_in=10 * MB, bundles=["broker-0-bundle-0"])
    load.bundle_data["broker-0-bundle-0"] = bundle(rate_in=10_000, throughput_in=10 * MB)
    b1 = add_broker(load, "broker1", msg_rate_in=100_000, msg_throughput_in=100 * MB)
    for i, (rate, thr) in enumerate([(60_000, 60 * MB), (20_000, 20 * MB), (20_000, 20 * MB), (0, 0), (0, 0)]):
        b1.bundles.append(f"broker-1-bundle-{i}")
        load.bundle_data[f"broker-1-bundle-{i}"] = bundle(rate_in=rate, throughput_in=thr)
    assert b0 is not b1
    return load


def test_bundles_without_traffic_are_not_unloaded():
    load = _non_traffic_load()
    base = {"maxUnloadBundleNumPerShedding": 5, "maxUnloadPercentage": 0.5}
    for extra in ({"loadBalancerMsgRateDifferenceShedderThreshold": 50,
                   "loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold": 0},
                  {"loadBalancerMsgRateDifferenceShedderThreshold": 0,
                   "loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold": 2}):
        decisions = shed(load, {**base, **extra})
        assert sorted(b for _, b in decisions) == ["broker-1-bundle-1", "broker-1-bundle-2"]


def test_bundles_that_do_not_fit_are_skipped_not_a_stop_and_there_is_no_slack():
    load = LoadData()
    big = add_broker(load, "big", msg_rate_in=11_000, bundles=["huge", "a", "b", "c"])
    add_broker(load, "small", msg_rate_in=1_000)
    # need = (int)((11000 - 1000) * 0.5) = 5000
    load.bundle_data.update(huge=bundle(rate_in=5_500), a=bundle(rate_in=3_000), b=bundle(rate_in=2_500),
                            c=bundle(rate_in=2_000))
    decisions = shed(load, {"maxUnloadPercentage": 0.5})
    # "huge" (5500 > 5000, within a +1000 slack of old versions) is skipped, "a" fits, "b" no longer fits, "c" fits
    assert decisions == [("big", "a"), ("big", "c")]
    assert big.msg_rate_in == 11_000


def test_required_amount_is_truncated_to_int_before_the_floor_check():
    load = LoadData()
    add_broker(load, "big", msg_rate_in=3001.8, bundles=["a", "b"])
    add_broker(load, "small", msg_rate_in=1000)
    load.bundle_data.update(a=bundle(rate_in=1000.5), b=bundle(rate_in=1.0))
    # (3001.8 - 1000) * 0.5 = 1000.9 -> 1000 >= minUnloadMessage 1000; a (1000.5) no longer fits 1000
    assert shed(load, {"maxUnloadPercentage": 0.5}) == [("big", "b")]
    # 2001.8 * 0.4995 = 999.9 -> 999 < 1000: nothing
    assert shed(load, {"maxUnloadPercentage": 0.4995}) == []


def test_minimum_starts_at_integer_max_value():
    # both brokers above 2^31 B/s: the true ratio is 1.11, but the minimum stays 2147483647.0
    load = LoadData()
    add_broker(load, "a", msg_throughput_in=10e9, bundles=["x", "y"])
    add_broker(load, "b", msg_throughput_in=9e9)
    load.bundle_data.update(x=bundle(throughput_in=5e9), y=bundle(throughput_in=1e9))
    decisions = shed(load, {"loadBalancerMsgRateDifferenceShedderThreshold": 0})
    # need = (int)((10e9 - 2147483647) * 0.2) saturates at 2147483647: only y (1e9) fits
    assert decisions == [("a", "y")]


def test_zero_minimum_uses_one_instead():
    load = LoadData()
    add_broker(load, "busy", msg_rate_in=2000, bundles=["x", "y"])
    add_broker(load, "idle", msg_rate_in=0.0000005)
    load.bundle_data.update(x=bundle(rate_in=300), y=bundle(rate_in=99))
    # min rate ~0 -> 1.0: difference 199900 % > 50 %, need (int)(1999 * 0.2) = 399 < 1000: floor blocks
    assert shed(load) == []
    assert shed(load, {"minUnloadMessage": 399}) == [("busy", "x"), ("busy", "y")]


def test_overloaded_broker_with_one_bundle_is_skipped():
    load = LoadData()
    add_broker(load, "busy", msg_rate_in=100_000, bundles=["only"])
    add_broker(load, "idle", msg_rate_in=1_000)
    load.bundle_data["only"] = bundle(rate_in=1_000)
    assert shed(load) == []


def test_overloaded_broker_without_bundles_sheds_nothing():
    load = LoadData()
    add_broker(load, "busy", msg_rate_in=100_000)
    add_broker(load, "idle", msg_rate_in=1_000, bundles=["x", "y"])
    load.bundle_data.update(x=bundle(rate_in=10), y=bundle(rate_in=10))
    assert shed(load) == []


def test_ties_pick_the_first_broker_in_map_order():
    from clusteremu.base.java import java_order

    load = LoadData()
    for name in ("left", "right"):
        add_broker(load, name, msg_rate_in=50_000, bundles=[f"{name}-1", f"{name}-2"])
        load.bundle_data[f"{name}-1"] = bundle(rate_in=25_000)
        load.bundle_data[f"{name}-2"] = bundle(rate_in=2_000)
    add_broker(load, "idle", msg_rate_in=1_000)
    first = java_order(["left", "right", "idle"], "concurrent")[0]
    assert shed(load) == [(first, f"{first}-2")]


def test_resource_usage_plays_no_role_only_rates_do():
    from clusteremu.strategies.pulsar.resource_usage import ResourceUsage

    load = LoadData()
    add_broker(load, "busy", msg_rate_in=10_000, bundles=["x", "y"], cpu=ResourceUsage(0, 100))
    add_broker(load, "idle", msg_rate_in=1_000, cpu=ResourceUsage(99, 100))
    load.bundle_data.update(x=bundle(rate_in=1_500), y=bundle(rate_in=500))
    assert shed(load) == [("busy", "x")]  # need (int)(9000 * 0.2) = 1800: x fits, then y (500) > 300


def test_recently_unloaded_bundles_are_excluded():
    load = LoadData()
    add_broker(load, "busy", msg_rate_in=10_000, bundles=["x", "y"])
    add_broker(load, "idle", msg_rate_in=1_000)
    load.bundle_data.update(x=bundle(rate_in=1_500), y=bundle(rate_in=500))
    load.recently_unloaded_bundles["x"] = 1
    assert shed(load) == [("busy", "y")]
