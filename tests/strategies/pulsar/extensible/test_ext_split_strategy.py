"""DefaultNamespaceBundleSplitStrategyImpl, SplitCounter and SplitDecision.

The cases of upstream's ``DefaultNamespaceBundleSplitStrategyTest`` as data: one broker reporting two bundles of
one namespace (the whole range, and its first sixteenth), five topics each, all limits at 100, one split per
cycle and a hit-count threshold of 3; plus the rules the upstream test leaves out.
"""
from __future__ import annotations

from dataclasses import replace

import pytest

from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar.extensible import (Split, SplitContext, SplitCounter, SplitDecision, SplitLabel,
                                                     SplitReason)
from clusteremu.strategies.pulsar.load_data import NamespaceBundleStats
from clusteremu.strategies.pulsar.split.algorithms import TopicTraffic

WHOLE = "tenant/namespace/0x00000000_0xFFFFFFFF"
SIXTEENTH = "tenant/namespace/0x00000000_0x0FFFFFFF"
BROKER = "broker-1"
CHILDREN = {WHOLE: ("0x00000000_0x7fffffff", "0x7fffffff_0xffffffff"),
            SIXTEENTH: ("0x00000000_0x07ffffff", "0x07ffffff_0x0fffffff")}
MIB = 1024 * 1024

CONFIG = {
    "loadBalancerNamespaceMaximumBundles": 100,
    "loadBalancerNamespaceBundleMaxTopics": 100,
    "loadBalancerNamespaceBundleMaxSessions": 100,
    "loadBalancerNamespaceBundleMaxMsgRate": 100,
    "loadBalancerNamespaceBundleMaxBandwidthMbytes": 100,
    "loadBalancerMaxNumberOfBundlesToSplitPerCycle": 1,
    "loadBalancerNamespaceBundleSplitConditionHitCountThreshold": 3,
}

# what makes both bundles hot, per reason (the rest of the stats: five topics, nothing else)
HOT = {
    SplitReason.MsgRate: dict(msg_rate_in=51, msg_rate_out=51),
    SplitReason.Topics: dict(topics=101),
    SplitReason.Sessions: dict(producer_count=51, consumer_count=51),
    SplitReason.Bandwidth: dict(msg_throughput_in=50 * MIB + 1, msg_throughput_out=50 * MIB + 1),
}


def stats(**fields) -> NamespaceBundleStats:
    return NamespaceBundleStats(**{"topics": 5, **fields})


def context(bundle_stats=None, **changes) -> SplitContext:
    bundle_stats = bundle_stats if bundle_stats is not None else {WHOLE: stats(), SIXTEENTH: stats()}
    base = SplitContext(BROKER, bundle_stats, owned_bundles=set(bundle_stats), splitting_bundles=(),
                        namespace_bundle_counts={"tenant/namespace": 0})
    return replace(base, **changes)


def strategy(**config):
    return pulsar.create("DefaultNamespaceBundleSplitStrategyImpl", {**CONFIG, **config})


def decision(bundle: str, reason: SplitReason) -> SplitDecision:
    return SplitDecision(Split(bundle, BROKER, dict.fromkeys(CHILDREN[bundle])), SplitLabel.Success, reason)


def failures(s) -> int:
    return s.counter.get(SplitLabel.Failure, SplitReason.Unknown)


def both_hot(**fields) -> dict[str, NamespaceBundleStats]:
    return {WHOLE: stats(**fields), SIXTEENTH: stats(**fields)}


RATE_HOT = dict(msg_rate_in=101)

# (case, threshold, context changes, stats of both bundles, decisions expected, failures expected)
ONE_CALL_CASES = [
    ("hot at threshold 0: one split, the per-cycle limit", {"bundle_stats": both_hot(**RATE_HOT)},
     [decision(WHOLE, SplitReason.MsgRate)], 0),
    ("fewer than two topics", {"bundle_stats": both_hot(msg_rate_in=101, topics=1)}, [], 0),
    ("namespace already at loadBalancerNamespaceMaximumBundles",
     {"bundle_stats": both_hot(**RATE_HOT), "namespace_bundle_counts": {"tenant/namespace": 100}}, [], 0),
    ("no bundle stats", {"bundle_stats": {}}, [], 0),
    ("not the owner in the channel", {"bundle_stats": both_hot(**RATE_HOT), "owned_bundles": set()}, [], 0),
    ("bundle count unknown: a failure per hot bundle",
     {"bundle_stats": both_hot(**RATE_HOT), "namespace_bundle_counts": {}}, [], 2),
    ("the whole range is Splitting: both bundles share its bounds",
     {"bundle_stats": both_hot(**RATE_HOT), "splitting_bundles": [WHOLE]}, [], 0),
]


@pytest.mark.parametrize("case, changes, expected, failed", ONE_CALL_CASES, ids=[c[0] for c in ONE_CALL_CASES])
def test_one_call_at_threshold_zero(case, changes, expected, failed):
    s = strategy(loadBalancerNamespaceBundleSplitConditionHitCountThreshold=0)
    assert s.find_bundles_to_split(context(**changes)) == expected
    assert failures(s) == failed


@pytest.mark.parametrize("reason", list(HOT), ids=[r.value for r in HOT])
def test_hit_count_threshold_then_one_split_per_cycle(reason):
    # threshold 3: nothing for three hot cycles, the whole range on the fourth (the per-cycle limit stops the
    # walk before the sixteenth is counted), the sixteenth on the fifth
    s = strategy()
    ctx = context(both_hot(**HOT[reason]))
    expected = [[], [], [], [decision(WHOLE, reason)], [decision(SIXTEENTH, reason)]]
    assert [s.find_bundles_to_split(ctx) for _ in expected] == expected
    assert failures(s) == 0 and s.counter.split_count == 0  # successes are counted once the split completed


def test_a_cool_cycle_starts_the_count_again():
    s = strategy(loadBalancerNamespaceBundleSplitConditionHitCountThreshold=1)
    hot, cool = context({WHOLE: stats(**RATE_HOT)}), context({WHOLE: stats()})
    assert [s.find_bundles_to_split(c) for c in (hot, cool, hot, hot)] == [[], [], [], [decision(WHOLE, SplitReason.MsgRate)]]


def test_the_first_condition_met_names_the_reason():
    s = strategy(loadBalancerNamespaceBundleSplitConditionHitCountThreshold=0)
    everything = stats(topics=101, producer_count=101, msg_rate_in=101, msg_throughput_in=101 * MIB)
    assert s.find_bundles_to_split(context({WHOLE: everything}))[0].reason is SplitReason.Topics
    no_session_limit = strategy(loadBalancerNamespaceBundleSplitConditionHitCountThreshold=0,
                                loadBalancerNamespaceBundleMaxSessions=0)
    assert no_session_limit.find_bundles_to_split(context({WHOLE: stats(producer_count=10 ** 6)})) == []
    at_limit = stats(topics=100, producer_count=50, consumer_count=50, msg_rate_in=100, msg_throughput_in=100 * MIB)
    assert s.find_bundles_to_split(context({WHOLE: at_limit})) == []  # every limit is strict


def test_hit_counts_survive_the_bundle_limit_and_go_with_the_bundle():
    s = strategy(loadBalancerNamespaceBundleSplitConditionHitCountThreshold=0)
    full = context({WHOLE: stats(**RATE_HOT)}, namespace_bundle_counts={"tenant/namespace": 100})
    assert s.find_bundles_to_split(full) == [] and s.find_bundles_to_split(full) == []
    assert s.get_state() == {"splitConditionHitCounts": {WHOLE: 2}}
    s.find_bundles_to_split(context({SIXTEENTH: stats()}))  # the whole range is no longer reported
    assert s.get_state() == {"splitConditionHitCounts": {}}
    s.set_state({"splitConditionHitCounts": {WHOLE: 5}})
    assert s.get_state() == {"splitConditionHitCounts": {WHOLE: 5}}


def test_per_cycle_limit_zero_means_none_and_namespace_limit_counts_this_cycle():
    s = strategy(loadBalancerNamespaceBundleSplitConditionHitCountThreshold=0,
                 loadBalancerMaxNumberOfBundlesToSplitPerCycle=0)
    second_half = "tenant/namespace/0x80000000_0xffffffff"
    ctx = context({SIXTEENTH: stats(**RATE_HOT), second_half: stats(**RATE_HOT)})
    assert [d.split.service_unit for d in s.find_bundles_to_split(ctx)] == [SIXTEENTH, second_half]
    limited = strategy(loadBalancerNamespaceBundleSplitConditionHitCountThreshold=0,
                       loadBalancerMaxNumberOfBundlesToSplitPerCycle=0, loadBalancerNamespaceMaximumBundles=3)
    # two bundles now, one split chosen this cycle: 2 + 1 reaches 3, so the second waits
    two = replace(ctx, namespace_bundle_counts={"tenant/namespace": 2})
    assert [d.split.service_unit for d in limited.find_bundles_to_split(two)] == [SIXTEENTH]


def test_failures_of_the_range_and_of_the_algorithm():
    s = strategy(loadBalancerNamespaceBundleSplitConditionHitCountThreshold=0)
    tiny = "tenant/namespace/0x00000000_0x00000001"
    assert s.find_bundles_to_split(context({tiny: stats()})) == [] and failures(s) == 1
    # topic_count_equally_divide needs the topics the broker serves: none given, no boundary
    by_topics = strategy(loadBalancerNamespaceBundleSplitConditionHitCountThreshold=0,
                         defaultNamespaceBundleSplitAlgorithm="topic_count_equally_divide")
    assert by_topics.find_bundles_to_split(context({WHOLE: stats(**RATE_HOT)})) == [] and failures(by_topics) == 1
    topics = [f"persistent://tenant/namespace/t{i}" for i in range(5)]
    found = by_topics.find_bundles_to_split(context({WHOLE: stats(**RATE_HOT)}, bundle_topics={WHOLE: topics}))
    assert len(found) == 1 and len(found[0].split.children) == 2
    # flow_or_qps_equally_divide cutting into more than two children is refused (exactly one boundary)
    flow = strategy(loadBalancerNamespaceBundleSplitConditionHitCountThreshold=0,
                    defaultNamespaceBundleSplitAlgorithm="flow_or_qps_equally_divide")
    traffic = {t: TopicTraffic(msg_rate_in=60) for t in topics}
    assert flow.find_bundles_to_split(context({WHOLE: stats(msg_rate_in=300)}, bundle_topics={WHOLE: topics},
                                              topic_stats=traffic)) == []
    assert failures(flow) == 1
    unknown = strategy(loadBalancerNamespaceBundleSplitConditionHitCountThreshold=0,
                       defaultNamespaceBundleSplitAlgorithm="specified_positions_divide")
    assert unknown.find_bundles_to_split(context({WHOLE: stats(**RATE_HOT)})) == [] and failures(unknown) == 1


def test_counter_cells_and_json():
    counter = SplitCounter()
    assert {label.value: sorted(r.value for r in cells) for label, cells in counter.breakdown_counters.items()} == {
        "Success": ["Admin", "Bandwidth", "MsgRate", "Sessions", "Topics"],
        "Skip": ["Balanced"],
        "Failure": ["Unknown"],
    }
    counter.update_decision(decision(WHOLE, SplitReason.Topics))
    counter.update("Skip", "Balanced")
    assert counter.split_count == 1 and counter.get("Success", "Topics") == 1
    with pytest.raises(KeyError):
        counter.update(SplitLabel.Failure, SplitReason.Topics)
    assert SplitCounter.from_json(counter.to_json()).to_json() == counter.to_json()


def test_decisions_compare_by_content_and_serialise_with_pulsar_names():
    a = decision(WHOLE, SplitReason.MsgRate)
    b = SplitDecision(Split(WHOLE, BROKER, {CHILDREN[WHOLE][1]: None, CHILDREN[WHOLE][0]: None}),
                      SplitLabel.Success, SplitReason.MsgRate)
    assert a == b and hash(a) == hash(b) and a.split.children == CHILDREN[WHOLE]
    assert a.to_json() == {"split": {"serviceUnit": WHOLE, "sourceBroker": BROKER,
                                     "splitServiceUnitToDestBroker": dict.fromkeys(CHILDREN[WHOLE])},
                           "label": "Success", "reason": "MsgRate"}
    assert pulsar.canonical_name("DefaultNamespaceBundleSplitStrategyImpl") == \
        "org.apache.pulsar.broker.loadbalance.extensions.strategy.DefaultNamespaceBundleSplitStrategyImpl"
