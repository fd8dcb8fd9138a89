"""ServiceConfiguration defaults, typed access, the bandwidth-weight spelling rule and broker.conf parsing."""
import pytest

from clusteremu.base.errors import InputError
from clusteremu.strategies.pulsar.config import DEFAULTS, PulsarConfig, as_config, parse_broker_conf


def test_missing_keys_take_pulsar_defaults():
    cfg = PulsarConfig({})
    assert cfg["loadBalancerLoadSheddingStrategy"] == "org.apache.pulsar.broker.loadbalance.impl.ThresholdShedder"
    assert cfg["loadBalancerBrokerOverloadedThresholdPercentage"] == 85
    assert cfg["loadBalancerHistoryResourcePercentage"] == 0.9
    assert cfg["loadBalancerMemoryResourceWeight"] == 0.0
    assert cfg["loadBalancerDirectMemoryResourceWeight"] == 0.0
    assert cfg["maxUnloadPercentage"] == 0.2
    assert cfg["minUnloadMessageThroughput"] == 1048576
    assert (cfg["loadBalancerAvgShedderLowThreshold"], cfg["loadBalancerAvgShedderHighThreshold"]) == (15, 40)
    assert (cfg["loadBalancerAvgShedderHitCountLowThreshold"], cfg["loadBalancerAvgShedderHitCountHighThreshold"]) == (8, 2)
    assert cfg["maxUnloadBundleNumPerShedding"] == -1
    assert cfg["loadBalancerOverrideBrokerNicSpeedGbps"] is None
    assert cfg.maxUnloadPercentage == 0.2  # attribute access by the Java key name


def test_values_are_converted_to_the_key_type_and_unknown_keys_are_reported():
    cfg = PulsarConfig({"maxUnloadPercentage": "0.5", "lowerBoundarySheddingEnabled": "TRUE",
                        "loadBalancerBrokerMaxTopics": 7.0, "brokerServicePort": 6650, "typoKey": 1})
    assert cfg["maxUnloadPercentage"] == 0.5
    assert cfg["lowerBoundarySheddingEnabled"] is True
    assert cfg["loadBalancerBrokerMaxTopics"] == 7 and isinstance(cfg["loadBalancerBrokerMaxTopics"], int)
    assert cfg.unknown_keys() == ["brokerServicePort", "typoKey"]
    assert cfg["typoKey"] == 1


@pytest.mark.parametrize("key,value", [("maxUnloadPercentage", "half"), ("loadBalancerBrokerMaxTopics", 1.5),
                                       ("lowerBoundarySheddingEnabled", "yes"), ("minUnloadMessage", True)])
def test_bad_values_raise_input_error_naming_the_key(key, value):
    with pytest.raises(InputError, match=key):
        PulsarConfig({key: value})


@pytest.mark.parametrize(
    "new,old,expected",
    [(1.0, 1.0, 1.0), (0.5, 1.0, 0.5), (1.0, 0.3, 0.3), (0.5, 0.3, 0.5), (0.0, 1.0, 0.0)],
)
def test_bandwidth_weight_getters_follow_the_renamed_key_rule(new, old, expected):
    cfg = PulsarConfig({"loadBalancerBandwidthInResourceWeight": new, "loadBalancerBandwithInResourceWeight": old,
                        "loadBalancerBandwidthOutResourceWeight": new, "loadBalancerBandwithOutResourceWeight": old})
    assert cfg.get_load_balancer_bandwidth_in_resource_weight() == expected
    assert cfg.get_load_balancer_bandwidth_out_resource_weight() == expected
    assert cfg.resource_weights() == (1.0, 0.0, expected, expected)


def test_parse_broker_conf_lines():
    lines = [
        "# Load balancer",
        "",
        "   ",
        "loadBalancerLoadSheddingStrategy=org.apache.pulsar.broker.loadbalance.impl.AvgShedder",
        "maxUnloadPercentage = 0.5",
        "loadBalancerAvgShedderHitCountLowThreshold=8",
        "loadBalancerSheddingExcludedNamespaces=public/a, public/b",
        "loadBalancerOverrideBrokerNicSpeedGbps=",
        "clusterName=standalone",
        "maxUnloadPercentage=0.4",
    ]
    values = parse_broker_conf(lines)
    assert values["loadBalancerLoadSheddingStrategy"].endswith(".AvgShedder")
    assert values["maxUnloadPercentage"] == 0.4  # last line wins
    assert values["loadBalancerAvgShedderHitCountLowThreshold"] == 8
    assert values["loadBalancerSheddingExcludedNamespaces"] == frozenset({"public/a", "public/b"})
    assert "loadBalancerOverrideBrokerNicSpeedGbps" not in values  # empty = unset
    assert values["clusterName"] == "standalone"
    assert PulsarConfig(values).unknown_keys() == ["clusterName"]


def test_parse_broker_conf_bad_value_names_line_and_key():
    with pytest.raises(InputError) as err:
        parse_broker_conf(["# c", "loadBalancerBrokerMaxTopics=lots"], "my.conf")
    assert err.value.where == "my.conf:2"
    assert "loadBalancerBrokerMaxTopics" in err.value.reason


def test_parse_broker_conf_line_without_equals_is_refused():
    with pytest.raises(InputError) as err:
        parse_broker_conf(["maxUnloadPercentage 0.5"], "b.conf")
    assert err.value.where == "b.conf:1"


def test_every_default_round_trips_through_its_own_type():
    cfg = PulsarConfig({k: v for k, v in DEFAULTS.items() if v is not None})
    assert cfg.unknown_keys() == []
    assert all(cfg[k] == v for k, v in DEFAULTS.items())


def test_as_config_wraps_mappings_and_keeps_a_config_as_it_is():
    cfg = PulsarConfig({"maxUnloadPercentage": 0.5})
    assert as_config(cfg) is cfg
    assert as_config({"maxUnloadPercentage": 0.5})["maxUnloadPercentage"] == 0.5
    assert as_config(None)["maxUnloadPercentage"] == DEFAULTS["maxUnloadPercentage"]
    with pytest.raises(InputError):
        as_config({"maxUnloadPercentage": "lots"})
