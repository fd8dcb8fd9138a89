"""The extensible load manager in the cluster model: transfers through the service-unit channel (issue 4, item 6),
and the unload scheduler's ``transfer_shedder_stats`` (issue 18 §2)."""
from __future__ import annotations

import math
from collections import defaultdict

import pytest

from clusteremu.base.errors import InputError
from clusteremu.emulator.runner import execute
from clusteremu.emulator.trace import open_run
from clusteremu.scenarios.loader import validate_scenario

# broker-1 has a quarter of the others' cores: with the same share of topics it is the hot broker, so both load
# managers move bundles off it within a few shedding cycles.
BASE = {
    "scenario": {"name": "t", "model": "pulsar", "duration_s": 600, "seed": 3},
    "network": {"latency": {"dist": "uniform", "min_ms": 0.5, "max_ms": 1.5}},
    "cluster": {"brokers": 3, "clients": 2, "start_jitter_s": 2.0, "machines": {"broker-1": {"cores": 2}}},
    "workload": {"namespaces": [{"name": "public/default", "bundles": 8}],
                 "tasks": [{"name": "t", "topics": 24, "rate_msgs": 2000}]},
    "config": {"loadBalancerDistributeBundlesEvenlyEnabled": False},
}


def scenario(strategy, config=None):
    data = {k: dict(v) for k, v in BASE.items()}
    data["strategy"] = strategy
    data["config"] = {**BASE["config"], **(config or {})}
    return validate_scenario(data, "test")


def run(tmp_path, sc, name):
    return list(open_run(execute(sc, tmp_path / name).run_dir).events())


def moved_topics(events):
    """Per moved topic: (seconds from the source's bundle_unloaded to the topic_connected at its new broker,
    the client's own unavailable_s). Only moves by the load manager (not the first connections)."""
    stop_at = {}
    for e in events:
        if e.kind == "bundle_unloaded" and e.reason == "shedding":
            stop_at[e.bundle] = (e.t, e.agent)
    out = {}
    disconnected = {}
    for e in events:
        if e.kind == "topic_disconnected" and e.reason == "unload":
            disconnected[e.topic] = (e.t, e.broker)
        elif e.kind == "topic_connected" and e.topic in disconnected:
            _t, source = disconnected.pop(e.topic)
            # the unload of the bundle this topic was in: the latest one by that source before the reconnect
            starts = [t for b, (t, src) in stop_at.items() if src == source and t <= e.t]
            out[e.topic] = (e.t - max(starts), e.unavailable_s)
    return out


def test_extensible_transfer_is_shorter_than_modular_unload(tmp_path):
    modular = run(tmp_path, scenario({"load_manager": "modular", "shedding": "UniformLoadShedder"}), "modular")
    extensible = run(tmp_path, scenario({"load_manager": "extensible"}), "extensible")
    m, x = moved_topics(modular), moved_topics(extensible)
    assert m and x, f"both must move topics: modular {len(m)}, extensible {len(x)}"
    m_stop = sorted(v[0] for v in m.values())
    x_stop = sorted(v[0] for v in x.values())
    m_client = sorted(v[1] for v in m.values())
    x_client = sorted(v[1] for v in x.values())
    figures = (f"modular: {len(m)} topics, source stop -> connected {m_stop[0]*1000:.1f}..{m_stop[-1]*1000:.1f} ms, "
               f"client unavailable {m_client[0]*1000:.1f}..{m_client[-1]*1000:.1f} ms; "
               f"extensible: {len(x)} topics, {x_stop[0]*1000:.1f}..{x_stop[-1]*1000:.1f} ms, "
               f"client {x_client[0]*1000:.1f}..{x_client[-1]*1000:.1f} ms")
    # Every extensible move is shorter than every modular one: no back-off, no lookup round.
    assert x_stop[-1] < m_stop[0], figures
    assert x_client[-1] < m_client[0], figures
    # The modular client waits its back-off and looks up again; the extensible one connects at once.
    hops = {e.topic: e.hops for e in extensible if e.kind == "topic_connected" and e.topic in x}
    assert set(hops.values()) == {0}, hops


def test_transfer_goes_through_the_channel_and_never_owns_twice(tmp_path, owners_over_time):
    events = run(tmp_path, scenario({"load_manager": "extensible"}), "x")
    owners_over_time(events)  # asserts single ownership at every instant
    decided = [e for e in events if e.kind == "unload_decided"]
    assert decided and all(e.destination for e in decided)  # loadBalancerTransferEnabled: transfers
    states = defaultdict(list)
    for e in events:
        if e.kind == "service_unit_state":
            states[e.bundle].append((e.state, e.src, e.dst))
    for d in decided:
        seq = [s for s, _src, _dst in states[d.bundle]]
        i = seq.index("Releasing")
        assert seq[i:i + 3] == ["Releasing", "Assigning", "Owned"], seq
        assert states[d.bundle][i + 2][2] == d.destination
        # the source stops serving before the destination owns the bundle
        stop = next(e.t for e in events if e.kind == "bundle_unloaded" and e.bundle == d.bundle and e.t >= d.t)
        owned = next(e for e in events if e.kind == "bundle_owned" and e.bundle == d.bundle and e.t >= d.t)
        assert stop < owned.t and owned.agent == d.destination and owned.via == "transfer"


def test_without_transfer_the_bundle_is_unloaded_and_reassigned_on_lookup(tmp_path, owners_over_time):
    events = run(tmp_path, scenario({"load_manager": "extensible"}, {"loadBalancerTransferEnabled": False}), "u")
    owners_over_time(events)
    decided = [e for e in events if e.kind == "unload_decided"]
    assert decided and not any(e.destination for e in decided)
    frees = [e for e in events if e.kind == "service_unit_state" and e.state == "Free" and e.reason == "unload"]
    assert {e.bundle for e in frees} == {e.bundle for e in decided}
    moved = moved_topics(events)
    assert moved and all(v[1] >= 0.09 for v in moved.values())  # back-off (100 ms less up to 10 %) and lookup


def test_lookups_of_unowned_bundles_are_assigned_by_the_channel_owner(tmp_path):
    events = run(tmp_path, scenario({"load_manager": "extensible"}), "a")
    leader = next(e.agent for e in events if e.kind == "leader_elected")
    placed = [e for e in events if e.kind == "bundle_placed"]
    assert len(placed) == 8 and {e.agent for e in placed} == {leader}
    assert {e.strategy for e in placed} == {"LeastResourceUsageWithWeight"}
    first = [e for e in events if e.kind == "topic_connected" and e.unavailable_s == 0.0]
    assert len(first) == 24 and all(e.hops == 1 for e in first)  # the answer waits for Owned: one hop


def test_a_modular_strategy_is_refused_for_the_extensible_load_manager():
    with pytest.raises(InputError) as err:
        scenario({"load_manager": "extensible", "shedding": "ThresholdShedder"})
    assert "strategy.shedding" in str(err.value)
    with pytest.raises(InputError) as err:
        scenario({"load_manager": "modular", "shedding": "TransferShedder"})
    assert "strategy.shedding" in str(err.value)


def test_bundles_of_a_killed_leader_are_overridden_to_the_other_brokers(tmp_path, owners_over_time):
    data = {k: dict(v) for k, v in BASE.items()}
    data["strategy"] = {"load_manager": "extensible"}
    data["config"] = {**BASE["config"], "zooKeeperSessionTimeoutMillis": 10_000}
    data["scenario"] = {**BASE["scenario"], "duration_s": 120}
    data["faults"] = [{"kind": "leader_kill", "at": 50.0}]
    events = run(tmp_path, validate_scenario(data, "test"), "k")
    killed = next(e.agent for e in events if e.kind == "agent_stopped")
    # the new channel owner's first monitor run schedules the killed broker's clean-up (doCleanup): forced Owned
    moved = {e.bundle for e in events if e.kind == "service_unit_state" and e.state == "Owned"
             and e.reason == "inactive_broker" and e.src == killed}
    had = {e.bundle for e in events if e.kind == "bundle_owned" and e.agent == killed and e.t < 50.0}
    assert had and moved == had
    assert not any(e.kind == "service_unit_state" and e.state == "Free" for e in events)
    final = owners_over_time(events)
    assert len(final) == 8 and killed not in final.values()
    last = {}
    for e in events:
        if e.kind in ("topic_connected", "topic_disconnected"):
            last[e.topic] = e
    assert {e.kind for e in last.values()} == {"topic_connected"} and killed not in {e.broker for e in last.values()}


def test_each_cycle_that_computed_the_stats_writes_the_counters_load_avg_and_std(tmp_path):
    # broker-1 is hot at first, so the shedder acts, then balanced enough that its cycles end in HitCount
    events = run(tmp_path, scenario({"load_manager": "extensible"}), "x")
    stats = [e for e in events if e.kind == "transfer_shedder_stats"]
    cycles = [e for e in events if e.kind == "shedding_cycle"]
    assert stats and len(stats) <= len(cycles)
    # What the leader's load-data store held at each cycle: every broker's latest published weightedMaxEMA.
    checked = 0
    for s in stats:
        latest: dict[str, float] = {}
        for e in events:
            if e.kind == "broker_load_data" and e.t < s.t - 0.01:  # published, and read by the leader since
                latest[e.agent] = e.weighted_max_ema / 100.0
        loads = list(latest.values())
        avg = sum(loads) / len(loads)
        std = math.sqrt(max(0.0, sum(x * x for x in loads) / len(loads) - avg * avg))
        assert (s.load_avg, s.load_std) == pytest.approx((avg, std), abs=1e-9), s
        assert s.target_std == 0.25  # loadBalancerBrokerLoadTargetStd's default
        checked += 1
    assert checked == len(stats)
    outcomes = {(s.label, s.reason) for s in stats}
    assert ("Skip", "HitCount") in outcomes and ("Success", "") in outcomes, outcomes
    # A cycle skipped before the stats (CoolDown after the transfers) writes none; every other cycle one.
    written = {(s.t, s.agent) for s in stats}
    before_stats = {"CoolDown", "OutDatedData", "NoBrokers", "NoLoadData"}
    assert any(c.skipped == "CoolDown" for c in cycles)
    for c in cycles:
        assert ((c.t, c.agent) in written) == (c.skipped not in before_stats), c


def test_transfers_give_the_same_trace_whatever_the_placement(tmp_path):
    sc = scenario({"load_manager": "extensible"})
    one = execute(sc, tmp_path / "one").run_dir
    three = execute(sc, tmp_path / "three", agents="inproc:3").run_dir
    assert open_run(one).manifest["events"]["digest"] == open_run(three).manifest["events"]["digest"]
