"""The public API of ``clusteremu.strategies.pulsar``: names, create, lazy targets."""
import numpy as np
import pytest

from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar import registry

IMPL = "org.apache.pulsar.broker.loadbalance.impl."


def test_simple_and_fully_qualified_names_resolve_to_the_same_class():
    for simple in ("OverloadShedder", "ThresholdShedder", "UniformLoadShedder", "AvgShedder"):
        assert registry.resolve(simple) is registry.resolve(IMPL + simple)
        assert type(pulsar.create(IMPL + simple)).__name__ == simple


def test_names_per_kind():
    shedding, placement = pulsar.names("shedding"), pulsar.names("placement")
    for name in ("OverloadShedder", "ThresholdShedder", "UniformLoadShedder", "AvgShedder", "TransferShedder",
                 "org.apache.pulsar.broker.loadbalance.extensions.scheduler.TransferShedder"):
        assert name in shedding
    for name in ("AvgShedder", "LeastLongTermMessageRate", "LeastResourceUsageWithWeight",
                 "RoundRobinBrokerSelector", IMPL + "LeastResourceUsageWithWeight",
                 "org.apache.pulsar.broker.loadbalance.extensions.strategy.LeastResourceUsageWithWeight"):
        assert name in placement
    assert "LeastLongTermMessageRate" not in shedding
    with pytest.raises(ValueError):
        pulsar.names("allocation")


def test_targets_are_module_colon_class_strings():
    assert registry.target("LeastLongTermMessageRate") == (
        "clusteremu.strategies.pulsar.placement.least_long_term_message_rate:LeastLongTermMessageRate")
    assert registry.target(
        "org.apache.pulsar.broker.loadbalance.extensions.strategy.LeastResourceUsageWithWeight"
    ) == "clusteremu.strategies.pulsar.extensible.least_resource_usage_with_weight:LeastResourceUsageWithWeight"
    assert registry.target("TransferShedder") == "clusteremu.strategies.pulsar.extensible.transfer_shedder:TransferShedder"


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(KeyError) as err:
        pulsar.create("NoSuchShedder")
    assert "AvgShedder" in str(err.value) and "NoSuchShedder" in str(err.value)


def test_create_takes_a_dict_with_defaults_and_an_rng():
    shedder = pulsar.create("AvgShedder", {"maxUnloadPercentage": 0.5}, rng=np.random.default_rng(3))
    assert shedder.config["maxUnloadPercentage"] == 0.5
    assert shedder.config["loadBalancerAvgShedderHitCountLowThreshold"] == 8
    default = pulsar.create("AvgShedder")
    again = pulsar.create("AvgShedder")
    # the default generator is numpy.random.default_rng(0): reproducible
    assert default.select_broker(["a", "b", "c", "d"], "x") == again.select_broker(["a", "b", "c", "d"], "x")
