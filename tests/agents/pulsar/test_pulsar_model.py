"""The Pulsar model's timing behaviours, in virtual time (issue 4's acceptance checks)."""
from __future__ import annotations

import math
from collections import defaultdict

import pytest

from clusteremu.emulator.runner import execute
from clusteremu.emulator.trace import open_run
from clusteremu.scenarios.loader import load_scenario, validate_scenario

BASE = {
    "scenario": {"name": "t", "model": "pulsar", "duration_s": 300, "seed": 3},
    "network": {"latency": {"dist": "uniform", "min_ms": 0.5, "max_ms": 1.5}},
    "cluster": {"brokers": 3, "clients": 2, "start_jitter_s": 2.0},
    "workload": {"namespaces": [{"name": "public/default", "bundles": 8}],
                 "tasks": [{"name": "t", "topics": 24, "rate_msgs": 500}]},
    "strategy": {"shedding": "ThresholdShedder", "placement": "LeastResourceUsageWithWeight"},
    "config": {"loadBalancerDistributeBundlesEvenlyEnabled": False},
}


def scenario(**sections):
    data = {k: (dict(v) if isinstance(v, dict) else v) for k, v in BASE.items()}
    for k, v in sections.items():
        if isinstance(v, dict) and isinstance(data.get(k), dict):
            data[k] = {**data[k], **v}
        else:
            data[k] = v
    return validate_scenario(data, "test")


def run(tmp_path, sc, name="run", **kw):
    return open_run(execute(sc, tmp_path / name, **kw).run_dir)


def leader_at_end(events):
    leader = None
    for e in events:
        if e.kind == "leader_elected":
            leader = e.agent
    return leader


def test_lookup_hops_unowned_via_non_leader_is_three_owned_at_most_two(tmp_path):
    # Five brokers and 16 bundles, so that the leader hands some first lookups to another broker.
    r = run(tmp_path, scenario(cluster={"brokers": 5, "clients": 2, "start_jitter_s": 2.0},
                               workload={"namespaces": [{"name": "public/default", "bundles": 16}],
                                         "tasks": [{"name": "t", "topics": 24, "rate_msgs": 500}]}))
    events = list(r.events())
    leader = next(e.agent for e in events if e.kind == "leader_elected")
    hops_by_lookup = defaultdict(list)
    connected = [e for e in events if e.kind == "topic_connected"]
    assert len(connected) == 24
    for e in events:
        if e.kind == "lookup_hop":
            hops_by_lookup[e.topic].append(e)
    saw_three = 0
    for topic, hops in hops_by_lookup.items():
        first = hops[0]
        if first.broker != leader and first.response == "redirect" and not first.authoritative:
            # unowned bundle asked of a non-leader: redirect to leader, authoritative redirect, connect
            assert first.target == leader
            if len(hops) == 3:
                assert hops[1].authoritative and hops[1].response == "redirect"
                assert hops[2].response == "connect"
                saw_three += 1
            else:  # the leader chose itself: it connects at once
                assert len(hops) == 2 and hops[1].broker == leader and hops[1].response == "connect"
        elif first.response == "connect" and first.broker != first.target:
            assert len(hops) <= 2  # owned elsewhere: a direct connect answer
    assert saw_three > 0


@pytest.mark.slow
def test_leader_failover_within_session_timeout_and_shedding_resumes(tmp_path, owners_over_time):
    sc = scenario(scenario={"name": "t", "model": "pulsar", "duration_s": 400, "seed": 3},
                  config={"loadBalancerDistributeBundlesEvenlyEnabled": False,
                          "zooKeeperSessionTimeoutMillis": 10_000})
    first = open_run(execute(sc, tmp_path / "probe", until=60).run_dir)
    leader = next(e.agent for e in first.events() if e.kind == "leader_elected")
    data = sc.data
    data["faults"] = [{"kind": "crash", "at": 120.0, "agents": [leader]}]
    r = run(tmp_path, validate_scenario(data, "test"), "failover")
    events = list(r.events())
    elected = [e for e in events if e.kind == "leader_elected"]
    assert len(elected) == 2 and elected[1].agent != leader and elected[1].previous == leader
    gap = elected[1].t - 120.0
    assert 0 < gap <= 10.0 + 2.0 + 1.0  # session timeout + the store's tick + an election round
    assert any(e.kind == "shedding_cycle" and e.agent == elected[1].agent for e in events)
    final = owners_over_time(events)
    assert set(final.values()) <= {"broker-1", "broker-2", "broker-3"} - {leader}
    reconnected = {e.topic for e in events if e.kind == "topic_connected" and e.t > 120}
    lost = {e.topic for e in events if e.kind == "topic_disconnected" and e.reason == "broker_down"}
    assert lost and lost <= reconnected


def test_fixed_rate_sampler_after_a_pause_reports_infinite_cpu_fixed_delay_does_not(tmp_path):
    sc = load_scenario("gc-fixed-rate-infinite-cpu", ["scenario.duration_s=420"])
    rate = list(run(tmp_path, sc, "rate").events())
    bad = [e for e in rate if e.kind == "load_report" and not math.isfinite(e.cpu)]
    assert bad and {e.agent for e in bad} == {"broker-2"} and all(e.t >= 240 for e in bad)
    assert any(e.kind == "unload_decided" and e.source == "broker-2" and e.t > bad[0].t for e in rate)
    sc = load_scenario("gc-fixed-rate-infinite-cpu", ["scenario.duration_s=420", 'cluster.host_usage_mode="fixed_delay"'])
    delay = list(run(tmp_path, sc, "delay").events())
    assert all(math.isfinite(e.cpu) for e in delay if e.kind in ("load_report", "host_usage_sampled"))


@pytest.mark.slow
def test_a_pause_longer_than_the_session_timeout_loses_the_bundles(tmp_path, owners_over_time):
    sc = scenario(config={"loadBalancerDistributeBundlesEvenlyEnabled": False, "zooKeeperSessionTimeoutMillis": 10_000},
                  faults=[{"kind": "pause", "at": 100.0, "duration_s": 20.0, "agents": ["broker-2"]}])
    events = list(run(tmp_path, sc).events())
    expired = [e for e in events if e.kind == "store_session_expired" and e.owner == "broker-2"]
    # The last ping before the pause was at most a ping interval (timeout / 3) earlier; the store notices within a tick.
    assert expired and 100 + 10 - 10 / 3 <= expired[0].t <= 100 + 10 + 2
    lost = [e for e in events if e.kind == "bundle_unloaded" and e.agent == "broker-2" and e.reason == "session_lost"]
    owned_before = {e.bundle for e in events if e.kind == "bundle_owned" and e.agent == "broker-2" and e.t < 100}
    assert owned_before and {e.bundle for e in lost} == owned_before
    reowned = {e.bundle: e.agent for e in events if e.kind == "bundle_owned" and e.t > expired[0].t}
    assert owned_before <= set(reowned)
    owners_over_time(events)
