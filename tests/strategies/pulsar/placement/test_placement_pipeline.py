"""The modular placement pipeline (reference §8.1): selectBrokerForAssignment / selectBroker."""
import numpy as np
import pytest

from clusteremu.strategies import pulsar
from clusteremu.base.java import java_order
from clusteremu.strategies.pulsar.load_data import BrokerData, BundleData, LoadData, LocalBrokerData, NamespaceBundleStats
from clusteremu.strategies.pulsar.placement import RoundRobinBrokerSelector
from clusteremu.strategies.pulsar.placement.filters import NamespaceIsolationPolicy, NamespacePolicies
from clusteremu.strategies.pulsar.placement.pipeline import select_broker, select_broker_for_assignment
from clusteremu.strategies.pulsar.resource_usage import ResourceUsage

MODULAR = "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl"
BUNDLE = "t/ns/0x00000000_0x40000000"


def add(load, name, cpu=10.0, long_term_rate=0.0, version=None, class_name=MODULAR, topics=0, bundles=()):
    local = LocalBrokerData(
        cpu=ResourceUsage(cpu, 100), load_manager_class_name=class_name, broker_version_string=version,
        num_topics=topics,
    )
    local.last_stats = {b: NamespaceBundleStats() for b in bundles}
    local.bundles = list(bundles)
    data = BrokerData(local_data=local)
    data.time_average_data.long_term_msg_rate_in = long_term_rate
    load.broker_data[name] = data
    return data


def lltmr(seed=0, config=None):
    return pulsar.create("LeastLongTermMessageRate", config or {}, rng=np.random.default_rng(seed))


class Scripted:
    """A placement strategy answering from a script, recording the candidates it was offered."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.offered = []

    def select_broker(self, candidates, bundle, load):
        self.offered.append(list(candidates))
        return self.answers.pop(0)


def test_chooses_with_the_strategy_and_preallocates():
    load = LoadData()
    add(load, "a:1", long_term_rate=100)
    add(load, "b:1", long_term_rate=10)
    d = select_broker_for_assignment(BUNDLE, ["a:1", "b:1"], load, lltmr(), {})
    assert d.broker == "b:1" and not d.preallocated and d.strategy == "placement"
    assert d.preallocation is not None and d.preallocation.broker == "b:1"
    assert set(d.candidates) == {"a:1", "b:1"}


def test_already_preallocated_bundle_short_circuits():
    load = LoadData()
    add(load, "a:1")
    add(load, "b:1")
    strategy = Scripted()
    d = select_broker_for_assignment(
        BUNDLE, ["a:1", "b:1"], load, strategy, {}, preallocated_bundle_to_broker={BUNDLE: "a:1"}
    )
    assert d.broker == "a:1" and d.preallocated and d.preallocation is None and strategy.offered == []
    load.broker_data["b:1"].preallocated_bundle_data[BUNDLE] = BundleData()
    derived = select_broker_for_assignment(BUNDLE, ["a:1", "b:1"], load, strategy, {})
    assert derived.broker == "b:1" and derived.preallocated


def test_unknown_bundle_gets_default_stats_and_stored_data_wins():
    load = LoadData()
    add(load, "a:1")
    d = select_broker_for_assignment(BUNDLE, ["a:1"], load, lltmr(), {})
    assert d.bundle_data_defaulted
    short = d.bundle_data.short_term_data
    assert (short.msg_rate_in, short.msg_rate_out, short.msg_throughput_in, short.msg_throughput_out) == (
        50.0, 50.0, 50000.0, 50000.0,
    )
    assert short.num_samples == 0
    stored = BundleData()
    stored.long_term_data.msg_rate_in = 7.0
    d2 = select_broker_for_assignment(BUNDLE, ["a:1"], load, lltmr(), {}, stored_bundle_data={BUNDLE: stored})
    assert d2.bundle_data is stored and d2.bundle_data_defaulted
    known = BundleData()
    load.bundle_data[BUNDLE] = known
    d3 = select_broker_for_assignment(BUNDLE, ["a:1"], load, lltmr(), {})
    assert d3.bundle_data is known and not d3.bundle_data_defaulted


def test_preallocation_makes_the_next_placement_see_the_previous_one():
    load = LoadData()
    add(load, "a:1", long_term_rate=50)
    add(load, "b:1", long_term_rate=60)
    ns_map, prealloc = {}, {}
    cfg = {"loadBalancerDistributeBundlesEvenlyEnabled": False}
    first = select_broker_for_assignment(
        "t/ns/0x00000000_0x40000000", ["a:1", "b:1"], load, lltmr(), cfg,
        broker_to_namespace_to_bundle_range=ns_map, preallocated_bundle_to_broker=prealloc,
    )
    assert first.broker == "a:1"
    first.preallocation.apply(load, ns_map, prealloc)
    assert prealloc == {"t/ns/0x00000000_0x40000000": "a:1"}
    assert ns_map == {"a:1": {"t/ns": {"0x00000000_0x40000000"}}}
    assert "t/ns/0x00000000_0x40000000" in load.broker_data["a:1"].preallocated_bundle_data
    # a:1 now counts 50 + 100 (the default bundle's long-term 50 + 50 msg/s): b:1 is cheaper.
    second = select_broker_for_assignment(
        "t/ns/0x40000000_0x80000000", ["a:1", "b:1"], load, lltmr(), cfg,
        broker_to_namespace_to_bundle_range=ns_map, preallocated_bundle_to_broker=prealloc,
    )
    assert second.broker == "b:1"


def test_filters_apply_in_order_topic_count_then_even_spread():
    load = LoadData()
    add(load, "full:1", long_term_rate=0, topics=60000)
    add(load, "holder:1", long_term_rate=0, bundles=["t/ns/0x40000000_0x80000000"])
    add(load, "fresh:1", long_term_rate=5)
    d = select_broker(BUNDLE, ["full:1", "holder:1", "fresh:1"], load, lltmr(), {})
    # full:1 is over loadBalancerBrokerMaxTopics, holder:1 already serves a bundle of t/ns.
    assert d.candidates == ("fresh:1",) and d.broker == "fresh:1"
    spread_off = select_broker(
        BUNDLE, ["full:1", "holder:1", "fresh:1"], load, lltmr(),
        {"loadBalancerDistributeBundlesEvenlyEnabled": False},
    )
    assert set(spread_off.candidates) == {"holder:1", "fresh:1"} and spread_off.broker == "holder:1"


def test_system_namespace_is_always_spread():
    load = LoadData()
    add(load, "holder:1", bundles=["pulsar/system/0x40000000_0x80000000"])
    add(load, "fresh:1", long_term_rate=5)
    d = select_broker(
        "pulsar/system/0x00000000_0x40000000", ["holder:1", "fresh:1"], load, lltmr(),
        {"loadBalancerDistributeBundlesEvenlyEnabled": False},
    )
    assert d.candidates == ("fresh:1",)


def test_anti_affinity_filter_is_applied():
    load = LoadData()
    add(load, "a:1", long_term_rate=0)
    add(load, "b:1", long_term_rate=9)
    pols = NamespacePolicies(anti_affinity_groups={"t/ns": "g", "t/other": "g"})
    ns_map = {"a:1": {"t/other": {"0x0_0x1"}}}
    d = select_broker(BUNDLE, ["a:1", "b:1"], load, lltmr(), {}, broker_to_namespace_to_bundle_range=ns_map, policies=pols)
    assert d.candidates == ("b:1",)


def test_filter_error_restores_the_policy_allowed_brokers():
    load = LoadData()
    add(load, "a:1", version="3.0.0")
    add(load, "b:1", version=None)  # no version: BrokerVersionFilter gives up
    strategy = Scripted("a:1")
    d = select_broker(BUNDLE, ["a:1", "b:1"], load, strategy, {"preferLaterVersions": True})
    assert set(strategy.offered[0]) == {"a:1", "b:1"}
    add(load, "b:1", version="2.9.0")
    strategy = Scripted("a:1")
    select_broker(BUNDLE, ["a:1", "b:1"], load, strategy, {"preferLaterVersions": "true"})
    assert strategy.offered[0] == ["a:1"]
    assert d.broker == "a:1"


def test_empty_after_filters_restores_the_policy_allowed_brokers():
    load = LoadData()
    add(load, "a:1", class_name="other.LoadManager")
    add(load, "b:1", class_name="other.LoadManager")
    d = select_broker(BUNDLE, ["a:1", "b:1"], load, lltmr(), {})
    assert set(d.candidates) == {"a:1", "b:1"}
    add(load, "c:1")
    d2 = select_broker(BUNDLE, ["a:1", "b:1", "c:1"], load, lltmr(), {})
    assert d2.candidates == ("c:1",)


def test_no_policy_allowed_broker_gives_none():
    load = LoadData()
    add(load, "a:1")
    pols = NamespacePolicies({"p": NamespaceIsolationPolicy(("t/ns",), ("elsewhere",))})
    d = select_broker_for_assignment(BUNDLE, ["a:1"], load, lltmr(), {}, policies=pols)
    assert d.broker is None and d.preallocation is None and d.candidates == ()


def test_overloaded_choice_is_retried_over_all_policy_allowed_brokers():
    load = LoadData()
    add(load, "hot:1", cpu=90, bundles=[])
    add(load, "holder:1", cpu=10, bundles=["t/ns/0x40000000_0x80000000"])
    # Even spread leaves only hot:1 (it holds no bundle of t/ns); it is overloaded, so all are asked again.
    d = select_broker(BUNDLE, ["hot:1", "holder:1"], load, lltmr(), {})
    assert d.candidates == ("hot:1",) and d.retried_overloaded and d.broker == "holder:1"


def test_overload_recheck_is_strict():
    load = LoadData()
    add(load, "edge:1", cpu=85)
    add(load, "holder:1", cpu=10, bundles=["t/ns/0x40000000_0x80000000"])
    d = select_broker(BUNDLE, ["edge:1", "holder:1"], load, lltmr(), {})
    assert d.broker == "edge:1" and not d.retried_overloaded


def test_overload_retry_returning_nothing_keeps_the_first_choice():
    load = LoadData()
    add(load, "hot:1", cpu=99)
    strategy = Scripted("hot:1", None)
    d = select_broker(BUNDLE, ["hot:1"], load, strategy, {})
    assert d.broker == "hot:1" and d.retried_overloaded and len(strategy.offered) == 2


def test_excluded_namespace_uses_round_robin_in_java_set_order():
    load = LoadData()
    names = ["b-%d:8080" % i for i in range(5)]
    for n in names:
        add(load, n)
    cfg = {"loadBalancerSheddingExcludedNamespaces": "t/ns", "loadBalancerDistributeBundlesEvenlyEnabled": False}
    rr = RoundRobinBrokerSelector()
    placement = Scripted()
    picks = [
        select_broker(BUNDLE, names, load, placement, cfg, excluded_namespace_selector=rr).broker for _ in range(5)
    ]
    assert picks == java_order(names, "hashmap")
    assert placement.offered == []
    with pytest.raises(ValueError):
        select_broker(BUNDLE, names, load, placement, cfg)


def test_excluded_namespace_overload_retry_uses_the_placement_strategy():
    load = LoadData()
    add(load, "hot:1", cpu=95)
    add(load, "ok:1", cpu=5)
    cfg = {"loadBalancerSheddingExcludedNamespaces": ["t/ns"], "loadBalancerDistributeBundlesEvenlyEnabled": False}
    rr = RoundRobinBrokerSelector()
    rr.set_state({"count": 0, "ref": ["hot:1", "ok:1"]})
    placement = Scripted("ok:1")
    d = select_broker(BUNDLE, ["hot:1", "ok:1"], load, placement, cfg, excluded_namespace_selector=rr)
    assert d.strategy == "round_robin" and d.retried_overloaded and d.broker == "ok:1"


def test_avg_shedder_as_placement_strategy_returns_its_planned_broker():
    load = LoadData()
    add(load, "a:1")
    add(load, "b:1")
    avg = pulsar.create("AvgShedder", {}, rng=np.random.default_rng(1))
    avg.set_state({**avg.get_state(), "bundleBrokerMap": {BUNDLE: "b:1"}})
    d = select_broker_for_assignment(
        BUNDLE, ["a:1", "b:1"], load, avg, {"loadBalancerDistributeBundlesEvenlyEnabled": False}
    )
    assert d.broker == "b:1"


def test_random_fallback_is_reported():
    load = LoadData()
    add(load, "a:1", cpu=50)
    add(load, "b:1", cpu=52)
    for b in ("a:1", "b:1"):
        load.broker_data[b].local_data.bundles = ["x"]
        load.broker_data[b].local_data.msg_rate_in = 1.0
    lruw = pulsar.create("LeastResourceUsageWithWeight", {}, rng=np.random.default_rng(0))
    d = select_broker(BUNDLE, ["a:1", "b:1"], load, lruw, {"loadBalancerDistributeBundlesEvenlyEnabled": False})
    assert d.random_fallback


def test_chosen_broker_without_load_data_raises():
    load = LoadData()
    pols = NamespacePolicies({"p": NamespaceIsolationPolicy(("t/ns",), ("ghost",))})
    with pytest.raises(KeyError):
        select_broker(BUNDLE, ["ghost:1"], load, Scripted("ghost:1"), {}, policies=pols)
