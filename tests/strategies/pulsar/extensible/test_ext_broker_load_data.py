"""BrokerLoadData: the first-sample/EMA rule, float32 percentages, the unweighted max, rendering, JSON."""
from __future__ import annotations

import pytest

from clusteremu.base.errors import InputError
from clusteremu.strategies.pulsar.extensible import BrokerLoadData, SystemResourceUsage
from clusteremu.strategies.pulsar.resource_usage import ResourceUsage as R

HALF_WEIGHTS = {
    "loadBalancerCPUResourceWeight": 0.5,
    "loadBalancerMemoryResourceWeight": 0.5,
    "loadBalancerDirectMemoryResourceWeight": 0.5,
    "loadBalancerBandwidthInResourceWeight": 0.5,
    "loadBalancerBandwidthOutResourceWeight": 0.5,
    "loadBalancerHistoryResourcePercentage": 0.75,
}


def sample(cpu, memory, direct=(2.0, 100.0), bw_in=(3.0, 100.0), bw_out=(4.0, 100.0)) -> SystemResourceUsage:
    return SystemResourceUsage(R(*cpu), R(*memory), R(*direct), R(*bw_in), R(*bw_out))


def test_fresh_object_looks_fully_loaded():
    data = BrokerLoadData()
    assert (data.max_resource_usage, data.weighted_max_ema, data.msg_throughput_ema) == (1.0, 1.0, 0.0)
    assert (data.updated_at, data.reported_at, data.bundle_count, data.topics) == (0, 0, 0, 0)


def test_first_update_seeds_the_averages_and_later_ones_smooth_them():
    data = BrokerLoadData()
    first = sample((1.0, 100.0), (800.0, 200.0))
    data.update(first, 1, 2, 3, 4, 5, 6, HALF_WEIGHTS, now=1_000)
    assert data.cpu == R(1.0, 100.0) and data.memory == R(800.0, 200.0)
    assert (data.msg_throughput_in, data.msg_throughput_out, data.msg_rate_in, data.msg_rate_out) == (1, 2, 3, 4)
    assert (data.bundle_count, data.topics, data.updated_at) == (5, 6, 1_000)
    assert data.max_resource_usage == 0.04  # memory (400 %) is not part of the unweighted max
    assert data.weighted_max_ema == 2.0  # memory 400 % x 0.5, taken as is on the first sample
    assert data.msg_throughput_ema == 3.0

    data.update(sample((300.0, 100.0), (200.0, 200.0)), 5, 6, 7, 8, 9, 10, HALF_WEIGHTS, now=2_000)
    assert data.max_resource_usage == 3.0  # over 100 % is kept
    assert data.weighted_max_ema == 1.875  # 0.75 * 2.0 + 0.25 * 1.5
    assert data.msg_throughput_ema == 5.0  # 0.75 * 3 + 0.25 * 11
    assert (data.updated_at, data.reported_at) == (2_000, 0)


def test_percentages_are_float32_like_java():
    data = BrokerLoadData()
    data.update(SystemResourceUsage(cpu=R(30, 100)), 0, 0, 0, 0, 0, 0, {}, now=1)
    assert data.weighted_max_ema == 0.30000001907348633
    assert data.max_resource_usage == 0.30000001907348633


def test_default_weights_ignore_memory_and_direct_memory():
    data = BrokerLoadData()
    raw = sample((10, 100), (90, 100), direct=(95, 100), bw_in=(20, 100), bw_out=(5, 100))
    data.update(raw, 0, 0, 0, 0, 0, 0, {}, 1)
    assert data.weighted_max_ema == 0.2
    assert data.max_resource_usage == 0.95  # the unweighted max still sees direct memory


def test_old_bandwidth_weight_spelling_is_honoured():
    data = BrokerLoadData()
    conf = {"loadBalancerBandwithInResourceWeight": 3.0}
    data.update(sample((10, 100), (0, 100), bw_in=(20, 100)), 0, 0, 0, 0, 0, 0, conf, 1)
    assert data.weighted_max_ema == 0.6


def test_history_weight_one_freezes_the_first_sample():
    data = BrokerLoadData()
    conf = {"loadBalancerHistoryResourcePercentage": 1.0}
    data.update(SystemResourceUsage(cpu=R(10, 100)), 1, 1, 0, 0, 0, 0, conf, 1)
    data.update(SystemResourceUsage(cpu=R(90, 100)), 9, 9, 0, 0, 0, 0, conf, 2)
    assert (data.weighted_max_ema, data.msg_throughput_ema) == (0.1, 2.0)


def test_to_string_matches_pulsars_format():
    data = BrokerLoadData()
    data.update(sample((1.0, 100.0), (800.0, 200.0)), 1, 2, 3, 4, 5, 6, HALF_WEIGHTS, now=11)
    data.update(sample((300.0, 100.0), (200.0, 200.0)), 5, 6, 7, 8, 9, 10, HALF_WEIGHTS, now=22)
    assert data.to_string(HALF_WEIGHTS) == (
        "cpu= 300.00%, memory= 100.00%, directMemory= 2.00%, bandwidthIn= 3.00%, bandwidthOut= 4.00%, "
        "cpuWeight= 0.500000, memoryWeight= 0.500000, directMemoryWeight= 0.500000, "
        "bandwidthInResourceWeight= 0.500000, bandwidthOutResourceWeight= 0.500000, "
        "msgThroughputIn= 5.00, msgThroughputOut= 6.00, msgRateIn= 7.00, msgRateOut= 8.00, bundleCount= 9, "
        "maxResourceUsage= 300.00%, weightedMaxEMA= 187.50%, msgThroughputEMA= 5.00, "
        "updatedAt= 22, reportedAt= 0"
    )


def test_to_string_rounds_half_up_like_java():
    data = BrokerLoadData(msg_throughput_in=0.125, msg_rate_in=1.005)
    text = data.to_string({})
    assert "msgThroughputIn= 0.13" in text and "msgRateIn= 1.01" in text


def test_clear_and_copy():
    data = BrokerLoadData()
    other = BrokerLoadData()
    other.update(sample((1.0, 100.0), (800.0, 200.0)), 1, 2, 3, 4, 5, 6, HALF_WEIGHTS, now=7)
    other.reported_at = 8
    data.update_from(other)
    assert data == other
    other.cpu.usage = 99.0
    assert data.cpu.usage == 1.0  # a copy, not a shared object
    data.clear()
    assert data == BrokerLoadData()


def test_json_round_trip_with_pulsar_names():
    data = BrokerLoadData()
    data.update(sample((1.0, 100.0), (800.0, 200.0)), 1, 2, 3, 4, 5, 6, HALF_WEIGHTS, now=7)
    obj = data.to_json()
    assert set(obj) == {
        "cpu", "memory", "directMemory", "bandwidthIn", "bandwidthOut", "msgThroughputIn", "msgThroughputOut",
        "msgRateIn", "msgRateOut", "bundleCount", "topics", "maxResourceUsage", "weightedMaxEMA",
        "msgThroughputEMA", "updatedAt", "reportedAt",
    }
    assert obj["cpu"] == {"usage": 1.0, "limit": 100.0}
    assert BrokerLoadData.from_json(obj) == data


def test_json_defaults_special_numbers_and_errors():
    assert BrokerLoadData.from_json({}) == BrokerLoadData()
    data = BrokerLoadData.from_json({"weightedMaxEMA": "Infinity", "futureField": 1})
    assert data.weighted_max_ema == float("inf")
    with pytest.raises(InputError) as err:
        BrokerLoadData.from_json({"cpu": {"usage": "x"}}, 'store["b1"]')
    assert err.value.where == 'store["b1"].cpu.usage'
    with pytest.raises(InputError) as err:
        BrokerLoadData.from_json({"updatedAt": 1.5}, "d")
    assert err.value.where == "d.updatedAt"
    with pytest.raises(InputError):
        BrokerLoadData.from_json([1, 2], "d")
