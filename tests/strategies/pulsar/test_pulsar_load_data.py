"""LoadData JSON (Pulsar's names), validation paths, bundle history averaging and the shedding view."""
import json
import math

import pytest

from clusteremu.base.errors import InputError
from clusteremu.strategies.pulsar.load_data import (
    BundleData,
    LoadData,
    LocalBrokerData,
    NamespaceBundleStats,
    TimeAverageBrokerData,
    TimeAverageMessageData,
)
from clusteremu.strategies.pulsar.resource_usage import ResourceUsage

# Shaped like `pulsar-admin broker-stats load-report` (trimmed), plus leader-side data.
SNAPSHOT = {
    "brokerData": {
        "10.0.0.1:8080": {
            "localData": {
                "webServiceUrl": "http://10.0.0.1:8080",
                "pulsarServiceUrl": "pulsar://10.0.0.1:6650",
                "persistentTopicsEnabled": True,
                "nonPersistentTopicsEnabled": True,
                "cpu": {"usage": 350.5, "limit": 800.0},
                "memory": {"usage": 1500.0, "limit": 4096.0},
                "directMemory": {"usage": 100.0, "limit": 4096.0},
                "bandwidthIn": {"usage": 20000.0, "limit": 10000000.0},
                "bandwidthOut": {"usage": 30000.0, "limit": 10000000.0},
                "msgThroughputIn": 1024.0,
                "msgThroughputOut": 2048.0,
                "msgRateIn": 10.0,
                "msgRateOut": 20.0,
                "lastUpdate": 1718000000000,
                "lastStats": {"public/default/0x00000000_0x80000000": {
                    "msgRateIn": 10.0, "msgThroughputIn": 1024.0, "msgRateOut": 20.0, "msgThroughputOut": 2048.0,
                    "consumerCount": 1, "producerCount": 1, "topics": 3, "cacheSize": 0}},
                "numTopics": 3, "numBundles": 1, "numConsumers": 1, "numProducers": 1,
                "bundles": ["public/default/0x00000000_0x80000000"],
                "lastBundleGains": [], "lastBundleLosses": [],
                "brokerVersionString": "3.3.0",
                "loadManagerClassName": "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl",
                "loadReportType": "LocalBrokerData",
                "protocols": {},
            },
            "timeAverageData": {"shortTermMsgThroughputIn": 1024.0, "shortTermMsgThroughputOut": 2048.0,
                                "shortTermMsgRateIn": 10.0, "shortTermMsgRateOut": 20.0,
                                "longTermMsgThroughputIn": 1000.0, "longTermMsgThroughputOut": 2000.0,
                                "longTermMsgRateIn": 9.0, "longTermMsgRateOut": 19.0},
            "preallocatedBundleData": {},
        }
    },
    "bundleData": {
        "public/default/0x00000000_0x80000000": {
            "shortTermData": {"maxSamples": 10, "numSamples": 10, "msgThroughputIn": 1024.0,
                              "msgThroughputOut": 2048.0, "msgRateIn": 10.0, "msgRateOut": 20.0},
            "longTermData": {"maxSamples": 1000, "numSamples": 57, "msgThroughputIn": 1000.0,
                             "msgThroughputOut": 2000.0, "msgRateIn": 9.0, "msgRateOut": 19.0},
            "topics": 3,
        }
    },
    "recentlyUnloadedBundles": {"public/default/0x80000000_0xffffffff": 1717999990000},
}


def test_from_json_reads_pulsar_names():
    load = LoadData.from_json(SNAPSHOT)
    local = load.broker_data["10.0.0.1:8080"].local_data
    assert local.cpu == ResourceUsage(350.5, 800.0)
    assert local.msg_rate_out == 20.0 and local.num_topics == 3
    assert local.last_stats["public/default/0x00000000_0x80000000"].topics == 3
    assert local.extra == {"loadReportType": "LocalBrokerData", "protocols": {}}
    bd = load.bundle_data["public/default/0x00000000_0x80000000"]
    assert bd.long_term_data.num_samples == 57 and bd.short_term_data.max_samples == 10
    assert load.broker_data["10.0.0.1:8080"].time_average_data.long_term_msg_rate_out == 19.0
    assert load.recently_unloaded_bundles == {"public/default/0x80000000_0xffffffff": 1717999990000}


def test_to_json_round_trips():
    load = LoadData.from_json(SNAPSHOT)
    again = LoadData.from_json(json.loads(json.dumps(load.to_json())))
    assert again == load
    assert again.to_json() == load.to_json()
    assert load.to_json()["brokerData"]["10.0.0.1:8080"]["localData"]["loadReportType"] == "LocalBrokerData"


@pytest.mark.parametrize(
    "mutate,where,reason",
    [
        (lambda s: s["brokerData"]["10.0.0.1:8080"]["localData"]["cpu"].__setitem__("usage", "x"),
         'brokerData["10.0.0.1:8080"].localData.cpu.usage', 'expected a number, got "x"'),
        (lambda s: s["brokerData"]["10.0.0.1:8080"]["localData"].__setitem__("bundles", ["a", 3]),
         'brokerData["10.0.0.1:8080"].localData.bundles[1]', "expected a string, got 3"),
        (lambda s: s["bundleData"]["public/default/0x00000000_0x80000000"]["shortTermData"].__setitem__("msgRateIn", True),
         'bundleData["public/default/0x00000000_0x80000000"].shortTermData.msgRateIn', "expected a number, got true"),
        (lambda s: s["recentlyUnloadedBundles"].__setitem__("b", 1.5),
         'recentlyUnloadedBundles["b"]', "expected an epoch-millisecond integer, got 1.5"),
        (lambda s: s["brokerData"].__setitem__("b2", []), 'brokerData["b2"]', "expected an object, got []"),
        (lambda s: s.__setitem__("brokers", {}), "brokers", "unknown LoadData field"),
    ],
)
def test_from_json_errors_name_the_json_path(mutate, where, reason):
    snap = json.loads(json.dumps(SNAPSHOT))
    mutate(snap)
    with pytest.raises(InputError) as err:
        LoadData.from_json(snap, "snap.json")
    assert err.value.where == f"snap.json: {where}"
    assert err.value.reason.startswith(reason)


def test_non_object_snapshot_is_refused():
    with pytest.raises(InputError):
        LoadData.from_json([1, 2])


def test_jackson_special_numbers_are_accepted():
    load = LoadData.from_json({"brokerData": {"b": {"localData": {"cpu": {"usage": "NaN", "limit": 100},
                                                                  "bandwidthIn": {"usage": "Infinity", "limit": 1}}}}})
    local = load.broker_data["b"].local_data
    assert math.isnan(local.cpu.usage) and local.bandwidth_in.usage == math.inf
    assert load.to_json()["brokerData"]["b"]["localData"]["cpu"]["usage"] == "NaN"


def test_bundles_default_to_the_last_stats_keys():
    load = LoadData.from_json({"brokerData": {"b": {"localData": {"lastStats": {"t/n/0x0_0x1": {}, "t/n/0x1_0x2": {}}}}}})
    assert load.broker_data["b"].local_data.bundles == ["t/n/0x0_0x1", "t/n/0x1_0x2"]


def test_time_average_message_data_running_mean_then_ema():
    data = BundleData.with_default_stats()
    assert data.short_term_data.msg_rate_in == 50.0 and data.short_term_data.msg_throughput_out == 50000.0
    assert data.long_term_data.max_samples == 1000 and data.short_term_data.num_samples == 0
    data.update(NamespaceBundleStats(msg_rate_in=100.0, topics=4))
    assert data.short_term_data.msg_rate_in == 100.0  # the first sample replaces the default
    assert data.topics == 4
    for value in (200.0, 300.0):
        data.update(NamespaceBundleStats(msg_rate_in=value))
    assert data.short_term_data.msg_rate_in == pytest.approx(200.0)  # plain mean of 3 samples
    short = TimeAverageMessageData(max_samples=10, num_samples=10, msg_rate_in=100.0)
    short.update(NamespaceBundleStats(msg_rate_in=200.0))
    assert short.num_samples == 10
    assert short.msg_rate_in == pytest.approx(110.0)  # EMA with weight 1/10 once full


def test_time_average_broker_data_reset_uses_default_stats_for_unknown_bundles():
    known = BundleData.with_default_stats()
    known.update(NamespaceBundleStats(msg_rate_in=7.0, msg_throughput_in=70.0))
    tad = TimeAverageBrokerData()
    tad.reset(["known", "unknown"], {"known": known})
    assert tad.short_term_msg_rate_in == 7.0 + 50.0
    assert tad.long_term_msg_throughput_in == 70.0 + 50000.0


def test_bundle_data_for_load_shedding_excludes_system_namespaces():
    names = [
        "public/default/0x00000000_0x10000000",
        "pulsar/system/0x00000000_0xffffffff",
        "pulsar/standalone/10.0.0.1:8080/0x00000000_0xffffffff",
        "pulsar/10.0.0.1:8080/0x00000000_0xffffffff",
        "sla-monitor/standalone/10.0.0.1:8080/0x00000000_0xffffffff",
        "bundle-1",
    ]
    load = LoadData(bundle_data={n: BundleData() for n in names})
    kept = load.get_bundle_data_for_load_shedding()
    assert set(kept) == {"public/default/0x00000000_0x10000000", "bundle-1"}


def test_print_resource_usage_formats_like_java():
    data = LocalBrokerData(cpu=ResourceUsage(10, 100), memory=ResourceUsage(50, 100),
                           direct_memory=ResourceUsage(90, 100), bandwidth_in=ResourceUsage(30, 100),
                           bandwidth_out=ResourceUsage(20, 100))
    assert data.print_resource_usage() == (
        "cpu: 10.00%, memory: 50.00%, directMemory: 90.00%, bandwidthIn: 30.00%, bandwidthOut: 20.00%"
    )


def test_bundle_stats_read_the_same_with_or_without_the_unchecked_fast_path():
    from clusteremu.strategies.pulsar.load_data import NamespaceBundleStats

    plain = {"msgRateIn": 10, "msgThroughputIn": 1.5e4, "msgRateOut": 20.0, "msgThroughputOut": 3e4,
             "consumerCount": 2, "producerCount": 1, "topics": 3}
    fast = NamespaceBundleStats.from_json(plain, "b")
    slow = NamespaceBundleStats.from_json({**plain, "x": 1}, "b")  # an unknown key takes the checking reader
    slow.extra = {}
    assert fast == slow and isinstance(fast.msg_rate_in, float) and fast.cache_size == 0
    assert NamespaceBundleStats.from_json({**plain, "cacheSize": 7}, "b").cache_size == 7
    with pytest.raises(InputError, match=r"b\.topics.*integer"):
        NamespaceBundleStats.from_json({**plain, "topics": 1.5}, "b")


def test_local_broker_data_takes_already_parsed_last_stats_as_they_are():
    raw = SNAPSHOT["brokerData"]["10.0.0.1:8080"]["localData"]
    parsed = LocalBrokerData.from_json(raw, "localData")
    again = LocalBrokerData.from_json(raw, "localData", last_stats=parsed.last_stats)
    assert again == parsed and again.last_stats is parsed.last_stats
    assert again.extra == parsed.extra == {"loadReportType": "LocalBrokerData", "protocols": {}}
    assert again.to_json() == parsed.to_json()
