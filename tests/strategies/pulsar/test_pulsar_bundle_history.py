"""The leader's bundle history (updateBundleData) and the report-dict helpers the emulated leader uses."""
import pytest

from strategies import pulsar


def report(**bundle_rates):
    return {"lastStats": {b: {"msgRateIn": r, "msgThroughputIn": 10 * r} for b, r in bundle_rates.items()}}


def test_first_sample_replaces_the_defaults_then_a_running_mean():
    history = pulsar.BundleHistory()
    assert history.bundle_json("new")["shortTermData"]["msgRateIn"] == 50.0  # default stats, 0 samples
    history.update_all({"b1": report(x=100.0)})
    assert history.to_json()["x"]["shortTermData"]["msgRateIn"] == 100.0
    assert history.to_json()["x"]["longTermData"]["numSamples"] == 1
    history.update_all({"b1": report(x=200.0)})
    assert history.to_json()["x"]["shortTermData"]["msgRateIn"] == pytest.approx(150.0)


def test_short_term_becomes_an_ema_after_ten_samples():
    history = pulsar.BundleHistory()
    for _ in range(10):
        history.update_all({"b1": report(x=100.0)})
    history.update_all({"b1": report(x=200.0)})
    short = history.to_json()["x"]["shortTermData"]
    assert short["numSamples"] == 10 and short["msgRateIn"] == pytest.approx(110.0)
    assert history.to_json()["x"]["longTermData"]["msgRateIn"] == pytest.approx(100.0 + 100.0 / 11)


def test_bundles_nobody_reports_are_dropped_and_shared_bundles_get_two_samples():
    history = pulsar.BundleHistory()
    history.update_all({"b1": report(x=100.0, y=1.0), "b2": report(x=300.0)})
    assert history.to_json()["x"]["shortTermData"]["numSamples"] == 2
    history.update_all({"b1": report(x=100.0)})
    assert set(history.to_json()) == {"x"}
    assert pulsar.LoadData.from_json({"bundleData": history.to_json()}).bundle_data["x"].topics == 0


def test_weighted_max_4_of_a_report_dict():
    r = {"cpu": {"usage": 30, "limit": 100}, "memory": {"usage": 99, "limit": 100},
         "bandwidthIn": {"usage": 20, "limit": 100}}
    assert pulsar.weighted_max_4(r, {}) == 0.30000001907348633
    assert pulsar.weighted_max_4(r, {"loadBalancerCPUResourceWeight": 0.5}) == pytest.approx(0.2, rel=1e-6)
    assert pulsar.weighted_max_4(r, {"loadBalancerBandwithInResourceWeight": 2.0}) == pytest.approx(0.4, rel=1e-6)


def test_canonical_name():
    assert pulsar.canonical_name("AvgShedder") == pulsar.canonical_name(
        "org.apache.pulsar.broker.loadbalance.impl.AvgShedder")
    assert pulsar.canonical_name("LeastResourceUsageWithWeight") != pulsar.canonical_name(
        "org.apache.pulsar.broker.loadbalance.extensions.strategy.LeastResourceUsageWithWeight")
    with pytest.raises(KeyError):
        pulsar.canonical_name("Nope")
