"""The load-report update rule (reference §4), including Pulsar's ModularLoadManagerImplTest.testNeedBrokerDataUpdate."""
import math

import pytest

from clusteremu.strategies.pulsar import report_update as ru
from clusteremu.strategies.pulsar.config import PulsarConfig
from clusteremu.strategies.pulsar.load_data import LocalBrokerData
from clusteremu.strategies.pulsar.resource_usage import ResourceUsage

MINUTE = 60_000


def test_pulsar_need_broker_data_update_case():
    last, current = LocalBrokerData(), LocalBrokerData()
    conf = {"loadBalancerReportUpdateThresholdPercentage": 5}
    now = current.last_update  # just written: only the change can trigger

    def need():
        return ru.need_broker_data_update(last, current, now, conf)

    last.msg_rate_in, current.msg_rate_in = 100, 104
    assert not need()  # 4 %
    current.msg_rate_in = 105.1
    assert need()
    current.msg_rate_in = 94
    assert need()
    current.msg_rate_in = 95.1
    assert not need()
    last.msg_rate_in, current.msg_rate_in = 0, 1e-8
    assert need()  # 0 to non-zero always
    last.msg_rate_in, current.msg_rate_in = 1e-8, 0
    assert need()  # non-zero to zero: 100 %
    last.msg_rate_in = current.msg_rate_in = 0
    assert not need()  # 0 to 0 never
    last.cpu, current.cpu = ResourceUsage(100, 1000), ResourceUsage(106, 1000)
    assert not need()  # 0.6 points
    current.cpu = ResourceUsage(206, 1000)
    assert need()  # 10.6 points
    conf["loadBalancerCPUResourceWeight"] = 0
    assert not need()  # the resource term is weighted
    last.cpu, current.cpu = ResourceUsage(), ResourceUsage()
    last.msg_throughput_in, current.msg_throughput_in = 100, 106
    assert need()
    current.msg_throughput_in = 100
    last.num_bundles, current.num_bundles = 100, 106
    assert need()
    current.num_bundles = 100
    assert not need()


def test_percent_change():
    assert ru.percent_change(0, 0) == 0
    assert ru.percent_change(0, 1e-300) == math.inf
    assert ru.percent_change(0, -5) == math.inf
    assert ru.percent_change(200, 150) == 25.0
    assert ru.percent_change(-100, -150) == 50.0
    assert math.isnan(ru.percent_change(math.nan, 1))


def test_change_exactly_at_the_threshold_does_not_write():
    last, current = LocalBrokerData(msg_rate_in=100), LocalBrokerData(msg_rate_in=110)
    assert ru.max_change_percentage(last, current, {}) == 10.0
    assert not ru.need_broker_data_update(last, current, 0, {})  # default threshold 10: strict >
    current.msg_rate_in = 110.0001
    assert ru.need_broker_data_update(last, current, 0, {})


def test_resource_term_is_absolute_points_from_float32_percentages():
    last = LocalBrokerData(cpu=ResourceUsage(30, 100))
    current = LocalBrokerData(cpu=ResourceUsage(40, 100))
    # 30 % reads 30.000001907348633 in float32, 40 % reads 40.0; the rates are 0 -> 0.
    assert ru.max_change_percentage(last, current, {}) == pytest.approx(100.0 * abs(0.30000001907348633 - 0.4))
    assert ru.max_change_percentage(last, current, {}) != 10.0


def test_resource_term_ignores_memory_and_uses_the_bandwidth_weights():
    last, current = LocalBrokerData(), LocalBrokerData(memory=ResourceUsage(90, 100))
    assert ru.max_change_percentage(last, current, {}) == 0.0
    current = LocalBrokerData(bandwidth_in=ResourceUsage(20, 100))
    assert ru.max_change_percentage(last, current, {}) == pytest.approx(20.0)
    assert ru.max_change_percentage(last, current, {"loadBalancerBandwidthInResourceWeight": 0.5}) == pytest.approx(10.0)


def test_nan_terms_are_ignored_by_the_max():
    last = LocalBrokerData(msg_rate_in=math.nan, msg_throughput_in=100)
    current = LocalBrokerData(msg_rate_in=5, msg_throughput_in=150)
    assert ru.max_change_percentage(last, current, {}) == 50.0


def test_max_interval_forces_a_write_strictly_after_it():
    last = LocalBrokerData(last_update=1_000)
    current = LocalBrokerData(last_update=1_000)
    assert not ru.need_broker_data_update(last, current, 1_000 + 15 * MINUTE, {})
    assert ru.need_broker_data_update(last, current, 1_000 + 15 * MINUTE + 1, {})
    assert ru.update_reason(last, current, 15 * MINUTE + 1, {"loadBalancerReportUpdateMaxIntervalMinutes": 15}) == ru.MAX_INTERVAL
    assert ru.update_reason(last, current, 2 * MINUTE, {"loadBalancerReportUpdateMaxIntervalMinutes": 1}) == ru.MAX_INTERVAL


def test_update_reason_accepts_report_dicts():
    last = {"msgRateIn": 100.0, "msgRateOut": 0.0, "numBundles": 4, "cpu": {"usage": 10, "limit": 100}}
    current = {"msgRateIn": 100.0, "msgRateOut": 0.0, "numBundles": 4, "cpu": {"usage": 10, "limit": 100}}
    assert ru.update_reason(last, current, 5_000, {}) is None
    current["cpu"] = {"usage": 25, "limit": 100}
    assert ru.update_reason(last, current, 5_000, {}) == ru.THRESHOLD
    assert ru.update_reason(last, current, 5_000, PulsarConfig({"loadBalancerReportUpdateThresholdPercentage": 20})) is None
    current["numBundles"] = 5
    assert ru.update_reason(last, current, 5_000, PulsarConfig({"loadBalancerReportUpdateThresholdPercentage": 20})) == ru.THRESHOLD


def test_slow_drift_accumulates_against_the_last_written_report():
    last = LocalBrokerData(msg_rate_in=100)
    rates = [103, 106, 109, 112]
    decisions = [ru.need_broker_data_update(last, LocalBrokerData(msg_rate_in=r), 0, {}) for r in rates]
    assert decisions == [False, False, False, True]


def test_reason_from_figures_is_update_reason():
    cfg = PulsarConfig({"loadBalancerReportUpdateThresholdPercentage": 10})
    last = LocalBrokerData(msg_rate_in=100.0, cpu=ResourceUsage(100, 1000))
    for rate, cpu, since in ((105.0, 100, 0), (111.0, 100, 0), (100.0, 250, 0), (100.0, 100, 16 * MINUTE)):
        current = LocalBrokerData(msg_rate_in=rate, cpu=ResourceUsage(cpu, 1000))
        figures = (ru.report_figures(last, cfg), ru.report_figures(current, cfg))
        assert ru.reason_from_figures(*figures, since, cfg) == ru.update_reason(last, current, since, cfg)
    assert [ru.reason_from_figures((100.0, 0.0, 1.0, 0.1), (r, 0.0, 1.0, 0.1), 0, cfg) for r in (105.0, 111.0)] \
        == [None, ru.THRESHOLD]
