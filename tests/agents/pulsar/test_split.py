"""Automatic bundle split in the modular load manager (issue 4, item 5): the owner splits with the configured
algorithm, the topics follow their hash into the children, and the children may be unloaded afterwards."""
from __future__ import annotations

import pytest

from clusteremu.emulator.runner import execute
from clusteremu.emulator.trace import open_run
from clusteremu.scenarios.loader import validate_scenario
from clusteremu.strategies.pulsar.split.bundles import BundleRange, topic_hash

NS = "public/default"
TOPICS = [f"persistent://{NS}/t-{k}" for k in range(20)]


def scenario(algorithm, unload=False, **config):
    # Two bundles of ten topics each, hot as soon as the leader sees them (more than 6 topics), with room for
    # one split each (at most 4 bundles in the namespace). Shedding is off so that only splits move bundles.
    return validate_scenario({
        "scenario": {"name": "t", "model": "pulsar", "duration_s": 120, "seed": 3},
        "network": {"latency": {"dist": "uniform", "min_ms": 0.5, "max_ms": 1.5}},
        "cluster": {"brokers": 3, "clients": 2, "start_jitter_s": 2.0},
        "workload": {"namespaces": [{"name": NS, "bundles": 2}],
                     "tasks": [{"name": "t", "topics": 20, "rate_msgs": 100}]},
        "strategy": {"shedding": "ThresholdShedder", "placement": "LeastResourceUsageWithWeight"},
        "config": {"loadBalancerDistributeBundlesEvenlyEnabled": False, "loadBalancerNamespaceBundleMaxTopics": 6,
                   "loadBalancerNamespaceMaximumBundles": 4, "defaultNamespaceBundleSplitAlgorithm": algorithm,
                   "loadBalancerAutoUnloadSplitBundlesEnabled": unload, "loadBalancerSheddingEnabled": False,
                   **config},
    }, "test")


def run(tmp_path, sc, name="run"):
    return list(open_run(execute(sc, tmp_path / name).run_dir).events())


def topics_in(bundle):
    r = BundleRange.of_bundle(bundle)
    return [t for t in TOPICS if r.includes(topic_hash(t))]


def splits(events):
    return {e.bundle: e.children for e in events if e.kind == "bundle_split"}


def test_range_equally_divide_halves_each_range(tmp_path):
    events = run(tmp_path, scenario("range_equally_divide"))
    assert splits(events) == {
        f"{NS}/0x00000000_0x80000000": [f"{NS}/0x00000000_0x40000000", f"{NS}/0x40000000_0x80000000"],
        # the last bundle includes 0xffffffff: (0xffffffff - 0x80000000) / 2 rounds down
        f"{NS}/0x80000000_0xffffffff": [f"{NS}/0x80000000_0xbfffffff", f"{NS}/0xbfffffff_0xffffffff"],
    }


def test_topic_count_equally_divide_cuts_between_the_median_hashes(tmp_path):
    events = run(tmp_path, scenario("topic_count_equally_divide"))
    result = splits(events)
    assert len(result) == 2
    for parent, children in result.items():
        hashes = sorted(topic_hash(t) for t in topics_in(parent))
        n = len(hashes)
        lo, hi = hashes[n // 2 - 1], hashes[n // 2]
        cut = lo + (hi - lo) // 2
        assert [BundleRange.of_bundle(c).upper for c in children[:1]] == [cut]
        assert [len(topics_in(c)) for c in children] == [n // 2, n - n // 2]


def test_flow_or_qps_equally_divide_keeps_each_child_under_the_rate_limit(tmp_path):
    # 100 msg/s in + 100 out per topic: a limit of 500 msg/s leaves at most two topics per child.
    events = run(tmp_path, scenario("flow_or_qps_equally_divide", loadBalancerNamespaceBundleMaxMsgRate=500))
    result = splits(events)
    assert len(result) == 2
    for parent, children in result.items():
        assert len(children) == 5
        ranges = [BundleRange.of_bundle(c) for c in children]
        assert ranges[0].lower == BundleRange.of_bundle(parent).lower
        assert ranges[-1].upper == BundleRange.of_bundle(parent).upper
        assert all(a.upper == b.lower for a, b in zip(ranges, ranges[1:]))
        assert [len(topics_in(c)) for c in children] == [2, 2, 2, 2, 2]


def test_specified_positions_without_positions_fails_as_pulsar_does(tmp_path):
    events = run(tmp_path, scenario("specified_positions_divide"))
    assert not splits(events)
    failed = [e for e in events if e.kind == "bundle_split_failed"]
    assert failed and {e.reason for e in failed} == {"SplitBoundaries can't be empty"}


@pytest.mark.parametrize("algorithm", ["range_equally_divide", "topic_count_equally_divide"])
def test_topics_follow_their_hash_and_stay_on_the_owner(tmp_path, algorithm, owners_over_time):
    events = run(tmp_path, scenario(algorithm))
    result = splits(events)
    split_at = max(e.t for e in events if e.kind == "bundle_split")
    owner = {e.bundle: e.agent for e in events if e.kind == "bundle_owned"}
    for parent, children in result.items():
        assert sorted(t for c in children for t in topics_in(c)) == sorted(topics_in(parent))
        assert {owner[c] for c in children} == {owner[parent]}
    assert not [e for e in events if e.kind == "topic_disconnected"]  # nobody moved
    final = owners_over_time(events)
    assert sorted(final) == sorted(c for cs in result.values() for c in cs)
    # The owner's next report still counts every topic, now in four bundles.
    after = [e for e in events if e.kind == "load_report" and e.t > split_at and e.num_bundles]
    assert sum({e.agent: e.num_topics for e in after}.values()) == 20
    assert sum({e.agent: e.num_bundles for e in after}.values()) == 4


def test_unload_split_bundles_moves_the_children(tmp_path, owners_over_time):
    events = run(tmp_path, scenario("range_equally_divide", unload=True))
    children = [c for cs in splits(events).values() for c in cs]
    assert len(children) == 4
    unloaded = {e.bundle: e.topics for e in events if e.kind == "bundle_unloaded" and e.reason == "split"}
    parents = {p: 0 for p in splits(events)}  # the parents end with the split, closing nothing
    assert unloaded == {**parents, **{c: len(topics_in(c)) for c in children}}
    moved = [e for e in events if e.kind == "topic_connected" and e.unavailable_s > 0]
    assert sorted(e.topic for e in moved) == sorted(TOPICS)
    final = owners_over_time(events)
    assert sorted(final) == sorted(children)
    assert len(set(final.values())) > 1, final  # the children spread over the brokers
    # every topic reconnected to the owner of the child that holds its hash
    for e in moved:
        child = next(c for c in children if e.topic in topics_in(c))
        assert e.broker == final[child]


def test_splits_give_the_same_trace_whatever_the_placement(tmp_path):
    sc = scenario("topic_count_equally_divide", unload=True)
    one = execute(sc, tmp_path / "one").run_dir
    three = execute(sc, tmp_path / "three", agents="inproc:3").run_dir
    assert open_run(one).manifest["events"]["digest"] == open_run(three).manifest["events"]["digest"]
