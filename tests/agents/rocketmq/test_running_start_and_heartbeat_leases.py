"""``cluster.start = "running"`` (a cluster already running, every group settled at t = 0) and
``workload.heartbeats = "lease"`` (the consumers' periodic heartbeats as kernel leases), checked against the cold
start and the one-by-one heartbeats they stand for.

The heartbeat cases are the broker's ``ClientHousekeepingService`` ones: a client that stops heartbeating (a crash,
a stop-the-world pause longer than ``channelExpiredTimeout``, a partition from one broker) loses its channel 120 s
after its last heartbeat (at the scan, every 10 s) or after its last traffic (Netty's idle handler), and a client
that comes back registers again with its next heartbeat. Each is run with both heartbeat models and the brokers'
decisions compared."""
from __future__ import annotations

import copy

import pytest

from clusteremu.agents.rocketmq.names import parse_queue_key
from clusteremu.agents.rocketmq.views import RocketMQViews
from clusteremu.base.errors import InputError
from clusteremu.emulator.testing import assert_never
from clusteremu.emulator.trace.query import Trace
from clusteremu.scenarios.loader import load_scenario
from clusteremu.strategies.rocketmq import create, sort_mq_all
from clusteremu.tools.analysis.rocketmq import run_figures

RUNNING = {"cluster.start": "running", "workload.heartbeats": "lease"}

# Two groups of three consumers, each group's topic on two of the four brokers (16 queues); two consumers join
# at 100 s (one per group), consumer-3 (group 1) is lost at 200 s.
SMALL = {
    "scenario": {"name": "rocketmq-running-small", "description": "two small groups, a scale-out and a crash",
                 "model": "rocketmq", "duration_s": 400.0, "seed": 7},
    "network": {"latency": {"dist": "uniform", "min_ms": 0.5, "max_ms": 2.0}},
    "cluster": {"brokers": 4, "queues_per_broker": 8, "consumers": 6, "start_jitter_s": 10.0},
    "workload": {"groups": 2, "topic_brokers": 2, "consumption": "closed_form"},
    "faults": [{"kind": "scale_out", "at": 100.0, "agents": ["consumer-7", "consumer-8"]},
               {"kind": "crash", "at": 200.0, "agents": ["consumer-3"]}],
}


def test_a_running_start_holds_the_strategys_allocation_of_one_shared_view_at_t0(emulate):
    run = emulate(SMALL, **RUNNING)
    trace = Trace(run)
    v = RocketMQViews(trace)
    assert len(v.queues()) == 32
    assert all(len(h) == 1 for h in v.allocation_at(0.0).values())
    assert v.overlap_seconds(within=(0.0, 100.0)) == 0.0 and v.orphan_seconds(within=(0.0, 100.0)) == 0.0
    # settled: until the scale-out nothing moves, nobody registers or is notified
    for kind in ("queue_taken", "queue_dropped", "consumer_ids_changed_notified", "consumer_registered"):
        assert_never(run, kind, within=(1e-9, 100.0))
    starts = trace.select("rebalance_result", where=lambda r: r.trigger == "running")
    assert sorted(r.agent for r in starts) == [f"consumer-{i}" for i in range(1, 7)]
    for r in starts:
        # the view the trace names is the whole group, as every broker of its topic registered it
        group = v.group_of(r)
        cids = v.cid_all(r)
        assert set(cids) == {e.cid for e in trace.select("consumer_started", within=(0.0, 0.0),
                                                         where=lambda e: e.group == group)}
        topic = r.allocated[0].rsplit("/", 2)[0]
        mq_all = sort_mq_all([parse_queue_key(q) for q in v.queues() if q.startswith(topic + "/")])
        want = create("AllocateMessageQueueAveragely").allocate(group, r.cid, mq_all, list(cids))
        assert list(r.allocated) == [f"{mq.topic}/{mq.broker_name}/{mq.queue_id}" for mq in want]
        assert r.t == 0.0 and r.balanced
    # a settled group's rebalance services run in step (its last membership change woke them together): the
    # first timer rebalances of a group lie within the members' milliseconds of lag, the groups apart
    by_group: dict[str, list[float]] = {}
    for r in starts:
        first = trace.first("rebalance_result", where=lambda e, c=r.agent: e.agent == c and e.trigger == "timer")
        by_group.setdefault(v.group_of(r), []).append(first.t)
    assert len(by_group) > 1 and all(0.0 <= t < 20.01 for ts in by_group.values() for t in ts)
    assert all(max(ts) - min(ts) < 0.005 for ts in by_group.values())
    assert len({round(min(ts), 1) for ts in by_group.values()}) == len(by_group)


def test_after_the_start_a_running_cluster_handles_the_scale_out_and_the_crash_as_a_cold_one(emulate):
    cold = RocketMQViews(Trace(emulate(SMALL)))
    warm_trace = Trace(emulate(SMALL, **RUNNING))
    warm = RocketMQViews(warm_trace)
    # the same client ids, so the same settled allocations after each change
    for t in (190.0, 395.0):
        assert warm.allocation_at(t) == cold.allocation_at(t)
    # the new consumers start cold: they register at their topic's brokers, which notify their groups
    joined = warm_trace.select("consumer_registered", within=(100.0, 200.0))
    assert sorted({e.consumer for e in joined}) == ["consumer-7", "consumer-8"] and len(joined) == 4
    # the crashed consumer's channels expire at both brokers of its topic, as in the cold run, 120-130 s after
    # its last heartbeat (the scan) or 120 s after its last traffic (the idle handler; which request went to
    # which broker last depends on each rebalance's random broker, so the two runs need not pick the same one)
    for trace in (warm_trace, cold.trace):
        expired = trace.select("channel_expired")
        assert sorted((e.agent, e.consumer) for e in expired) == [("broker-a", "consumer-3"), ("broker-b", "consumer-3")]
        assert all(120.0 - 1e-6 <= e.silent_s <= 130.0 and 200.0 < e.t <= 330.0 for e in expired)


def test_the_analysis_takes_a_running_start_for_a_start_up_stable_at_t0_and_grades_the_faults_alike(emulate):
    running, cold = run_figures(emulate(SMALL, **RUNNING).dir), run_figures(emulate(SMALL).dir)
    start, join, crash = running["changes"]["list"]
    assert (start["startup"], start["start"], start["stable_t"], start["takes"], start["skew"]) == (True, 0.0, 0.0, 32, 1.2)
    # no overlap in the start-up: what overlap there is comes from the faults' rebalances (a group's members
    # rebalance within milliseconds of each other, so a take can precede the drop by that much)
    assert running["queues"]["after_start_s"] == 0.0
    assert running["overlap"]["seconds"] == running["overlap"]["after_start_s"] < 0.01
    assert cold["changes"]["startup_stable_s"] > 0.0  # the cold start-up's storm settles seconds later
    _, cold_join, cold_crash = cold["changes"]["list"]
    for mine, theirs in ((join, cold_join), (crash, cold_crash)):
        assert (mine["takes"], mine["net_moved"], mine["consumers"], mine["skew"]) == \
            (theirs["takes"], theirs["net_moved"], theirs["consumers"], theirs["skew"])
    assert join["time_to_stable_s"] == pytest.approx(cold_join["time_to_stable_s"], abs=0.05)
    assert 120.0 <= crash["time_to_stable_s"] <= 140.0 and 120.0 <= cold_crash["time_to_stable_s"] <= 140.0


def _partition(data: dict) -> dict:
    data["faults"] = [{"kind": "partition", "at": 300.0, "duration_s": 150.0,
                       "between": [["consumer-4"], ["broker-a"]]}]
    return data


def _pause(data: dict) -> dict:
    data["faults"][0].update(kind="pause", duration_s=150.0)
    return data


# (what happens to consumer-4 at 300 s, how to make the scenario, until): a crash, a GC pause longer than the
# channel timeout, a partition from one of its two brokers (pulls and heartbeats to broker-a lost)
FAULTS = [("crash", lambda d: d, 440.0), ("pause 150 s", _pause, 460.0), ("partition from broker-a", _partition, 490.0)]


@pytest.mark.parametrize("name, make, until", FAULTS, ids=[f[0] for f in FAULTS])
def test_a_heartbeat_lease_loses_and_regains_the_channels_as_the_heartbeats_would(emulate, name, make, until):
    base = load_scenario("rocketmq-crash-averagely").data
    data = make(copy.deepcopy(base))
    traces = {hb: Trace(emulate(data, until=until, **{"workload.heartbeats": hb})) for hb in ("messages", "lease")}

    def decisions(trace: Trace) -> dict[tuple, float]:
        out = {("expired", e.agent, e.cause): e.t for e in trace.select("channel_expired")}
        out.update({("registered", e.agent): e.t for e in trace.select(
            "consumer_registered", within=(300.0, None), where=lambda e: e.consumer == "consumer-4")})
        return out

    one_by_one, lease = decisions(traces["messages"]), decisions(traces["lease"])
    assert any(k[0] == "expired" for k in one_by_one), one_by_one  # the fault is long enough to lose a channel
    assert lease.keys() == one_by_one.keys()
    # the lease counts a keep-alive at its send time on its grid, the messages at arrival: milliseconds apart
    assert all(abs(t - one_by_one[k]) < 0.05 for k, t in lease.items()), (one_by_one, lease)
    if name != "crash":
        assert any(k[0] == "registered" for k in lease)  # back: its next heartbeat registers it again


def test_heartbeat_leases_send_fewer_messages_for_the_same_decisions_and_none_under_fixed_delay(emulate):
    runs = {hb: emulate("rocketmq-crash-averagely", until=250, **{"workload.heartbeats": hb})
            for hb in ("messages", "lease")}

    def allocations(run) -> list[tuple]:
        return sorted((r.agent, round(r.t, 1), r.trigger, tuple(r.allocated))
                      for r in Trace(run).select("rebalance_result"))

    assert allocations(runs["lease"]) == allocations(runs["messages"])
    # 4 consumers x 2 brokers: a call and its reply every 30 s each, all but the first two per channel leased
    saved = runs["messages"].manifest["stats"]["messages"] - runs["lease"].manifest["stats"]["messages"]
    assert saved >= 4 * 2 * 2 * 5
    # fixed delay: the real grid drifts by each run's calls, a lease's would not; the heartbeats stay calls
    fixed_delay = {hb: emulate("rocketmq-crash-averagely", until=120, cluster__timer_mode="fixed_delay",
                               **{"workload.heartbeats": hb}) for hb in ("messages", "lease")}
    assert fixed_delay["lease"].digest == fixed_delay["messages"].digest is not None


@pytest.mark.parametrize("override, key", [
    (['cluster.start="warm"'], "cluster.start"),
    (['cluster.start="running"', 'strategy.listener="orderly"'], "cluster.start"),
    (['cluster.start="running"', 'config.messageModel="BROADCASTING"'], "cluster.start"),
    (['workload.heartbeats="pings"'], "workload.heartbeats"),
])
def test_bad_start_or_heartbeat_settings_are_refused_with_the_key(override, key):
    with pytest.raises(InputError) as err:
        load_scenario("rocketmq-crash-averagely", override)
    assert key in str(err.value)
