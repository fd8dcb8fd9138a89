"""Bundle split under the extensible load manager (issue 18): every broker's SplitScheduler, the channel's
``Splitting`` → children ``Owned`` → parent ``Deleted`` path (as in upstream's ServiceUnitStateChannelTest split
cases and SplitSchedulerTest), the bundle map and the clients.

Three brokers serve one namespace of two bundles of 20 topics each; ``loadBalancerNamespaceBundleMaxTopics`` is 15,
so both bundles are hot from the first run of each owner's scheduler (every 60 s), and split on the fourth hot run
in a row (``loadBalancerNamespaceBundleSplitConditionHitCountThreshold`` = 3). Their children (about 10 topics
each) are not hot, so nothing splits again. Crashes at chosen instants of that run (after the split, right after
``Splitting``, between ``Deleted`` and its tombstone) check the channel owner's clean-up and monitor against real
split records.
"""
from __future__ import annotations

import pytest

from clusteremu.emulator.runner import execute
from clusteremu.emulator.trace import open_run
from clusteremu.scenarios.loader import validate_scenario

INTERVAL_S = 60.0  # loadBalancerSplitIntervalMinutes
THRESHOLD = 3


def run(tmp_path, name, config, faults=()):
    data = {
        "scenario": {"name": name, "model": "pulsar", "duration_s": 330, "seed": 5},
        "network": {"latency": {"dist": "uniform", "min_ms": 0.5, "max_ms": 1.5}},
        "cluster": {"brokers": 3, "clients": 2, "start_jitter_s": 2.0},
        "workload": {"namespaces": [{"name": "public/default", "bundles": 2}],
                     "tasks": [{"name": "t", "topics": 40, "rate_msgs": 2000}]},
        "config": {"loadBalancerNamespaceBundleMaxTopics": 15, **config},
        "strategy": {"load_manager": "extensible"},
        "faults": list(faults),
    }
    return list(open_run(execute(validate_scenario(data, "test"), tmp_path / name).run_dir).events())


@pytest.fixture(scope="module")
def split_run(tmp_path_factory):
    return run(tmp_path_factory.mktemp("ext-split"), "ext-split", {})


def test_each_hot_bundle_splits_on_its_owner_after_the_hit_count_threshold(split_run):
    booted = {e.agent: e.t for e in split_run if e.kind == "broker_booted"}
    decided = [e for e in split_run if e.kind == "ext_split_decided"]
    parents = {"public/default/0x00000000_0x80000000", "public/default/0x80000000_0xffffffff"}
    assert {e.bundle for e in decided} == parents and len(decided) == 2
    owner = {}
    for e in split_run:
        if e.kind == "bundle_owned" and e.bundle in parents:
            owner[e.bundle] = e.agent
    for e in decided:
        assert e.agent == owner[e.bundle] and e.reason == "Topics"
        # the scheduler's first run is one interval after the broker started; hit counts 1..4, split on the 4th
        runs = (e.t - booted[e.agent]) / INTERVAL_S
        assert THRESHOLD + 1 - 0.05 < runs < THRESHOLD + 1 + 0.1


def test_the_channel_goes_splitting_children_owned_parent_deleted(split_run, owners_over_time):
    states = [e for e in split_run if e.kind == "service_unit_state"]
    for d in (e for e in split_run if e.kind == "ext_split_decided"):
        parent = [(e.state, e.src, e.dst, e.reason) for e in states if e.bundle == d.bundle and e.t >= d.t]
        assert parent == [("Splitting", d.agent, "", "split"), ("Deleted", d.agent, "", "split"),
                          ("Init", d.agent, "", "tombstone")]
        for child in d.children:
            assert [(e.state, e.dst, e.reason) for e in states if e.bundle == child] == [("Owned", d.agent, "split")]
        split = next(e for e in split_run if e.kind == "bundle_split" and e.bundle == d.bundle)
        assert split.agent == d.agent and split.children == d.children
    final = owners_over_time(split_run)
    children = {c: d.agent for d in split_run if d.kind == "ext_split_decided" for c in d.children}
    assert {b: final.get(b) for b in children} == children
    assert not any(e.kind == "ext_split_decided" and e.bundle in children for e in split_run)


def test_the_topics_stay_connected_to_the_same_broker(split_run):
    first_split = min(e.t for e in split_run if e.kind == "ext_split_decided")
    after = [e for e in split_run if e.kind in ("topic_connected", "topic_disconnected") and e.t >= first_split]
    assert after == []  # no client sees the split: its topic moved to a child of the same owner
    last = {}
    for e in split_run:
        if e.kind in ("topic_connected", "topic_disconnected"):
            last[e.topic] = e
    assert len(last) == 40 and {e.kind for e in last.values()} == {"topic_connected"}


def test_no_split_when_disabled_or_below_the_threshold(tmp_path):
    off = run(tmp_path, "ext-split-off", {"loadBalancerAutoBundleSplitEnabled": False})
    assert not any(e.kind in ("ext_split_decided", "bundle_split") for e in off)
    high = run(tmp_path, "ext-split-high", {"loadBalancerNamespaceBundleSplitConditionHitCountThreshold": 5})
    assert not any(e.kind in ("ext_split_decided", "bundle_split") for e in high)


def test_after_the_split_lookups_and_clean_ups_use_the_children(tmp_path):
    # The owner of a split parent crashes 30 s after the split: the channel owner's clean-up overrides the
    # children (not the parent, which no longer exists) to the other brokers, and the clients' lookups of the
    # parent's topics find the children there.
    data_faults = [{"kind": "crash", "at": 270.0, "agents": ["broker-1"]}]
    events = run(tmp_path, "ext-split-crash", {"zooKeeperSessionTimeoutMillis": 10000}, faults=data_faults)
    d = next(e for e in events if e.kind == "ext_split_decided" and e.agent == "broker-1")
    overrides = {e.bundle: e.dst for e in events if e.kind == "service_unit_state" and e.reason == "inactive_broker"}
    assert set(overrides) == set(d.children) and "broker-1" not in overrides.values()
    last = {}
    for e in events:
        if e.kind in ("topic_connected", "topic_disconnected"):
            last[e.topic] = e
    assert len(last) == 40 and {e.kind for e in last.values()} == {"topic_connected"}
    assert "broker-1" not in {e.broker for e in last.values()}
    assert not any(e.kind == "service_unit_state" and e.bundle == d.bundle and e.t > 270.0 for e in events)


def test_a_deleted_parent_left_by_its_broker_is_tombstoned_by_the_monitor(tmp_path, split_run):
    # The splitting broker (not the channel owner) crashes between publishing its parent Deleted and seeing it (the
    # instants of the split run, which this run repeats up to then): the channel owner's monitor tombstones the
    # record once it is older than loadBalancerServiceUnitStateTombstoneDelayTimeInSeconds.
    leader = next(e.agent for e in split_run if e.kind == "leader_elected")
    deleted = next(e for e in split_run if e.kind == "service_unit_state" and e.state == "Deleted" and e.agent != leader)
    events = run(tmp_path, "ext-split-tombstone",
                 {"loadBalancerServiceUnitStateTombstoneDelayTimeInSeconds": 30},
                 faults=[{"kind": "crash", "at": deleted.t + 1e-5, "agents": [deleted.agent]}])
    parent = [(e.agent, e.state, e.reason) for e in events if e.kind == "service_unit_state"
              and e.bundle == deleted.bundle and e.t >= deleted.t]
    assert parent == [(deleted.agent, "Deleted", "split"), (leader, "Init", "tombstone")]
    tombstoned = next(e.t for e in events if e.kind == "service_unit_state" and e.reason == "tombstone"
                      and e.bundle == deleted.bundle)
    assert deleted.t + 30 < tombstoned <= deleted.t + 30 + 60  # the first monitor run after the delay


def test_a_split_left_splitting_by_its_broker_is_finished_by_another(tmp_path, split_run):
    # The splitting broker (not the channel owner) crashes right after publishing Splitting: the channel owner's
    # clean-up overrides the Splitting to another broker (with the children in the record), which splits the
    # bundle; every client ends up connected to a live broker.
    leader = next(e.agent for e in split_run if e.kind == "leader_elected")
    splitting = next(e for e in split_run if e.kind == "service_unit_state" and e.state == "Splitting"
                     and e.agent != leader)
    events = run(tmp_path, "ext-split-takeover", {"zooKeeperSessionTimeoutMillis": 10000},
                 faults=[{"kind": "crash", "at": splitting.t + 1e-5, "agents": [splitting.agent]}])
    override = next(e for e in events if e.kind == "service_unit_state" and e.bundle == splitting.bundle
                    and e.reason == "inactive_broker")
    assert (override.agent, override.state) == (leader, "Splitting") and override.src not in ("", splitting.agent)
    split = next(e for e in events if e.kind == "bundle_split" and e.bundle == splitting.bundle)
    assert split.agent == override.src and split.children == next(
        e.children for e in split_run if e.kind == "ext_split_decided" and e.bundle == splitting.bundle)
    assert [e.state for e in events if e.kind == "service_unit_state" and e.bundle == splitting.bundle
            and e.t > override.t] == ["Deleted", "Init"]
    last = {}
    for e in events:
        if e.kind in ("topic_connected", "topic_disconnected"):
            last[e.topic] = e
    assert {e.kind for e in last.values()} == {"topic_connected"} and splitting.agent not in {e.broker for e in last.values()}
