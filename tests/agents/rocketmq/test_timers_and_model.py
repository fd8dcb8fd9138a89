"""RocketMQ's timer defaults as the trace shows them, the 5.x rebalance loop, the scenario checks, and one trace
whatever the placement of the agents."""
from __future__ import annotations

import numpy as np
import pytest

from clusteremu.agents.rocketmq import config
from clusteremu.agents.rocketmq.views import RocketMQViews
from clusteremu.base.errors import InputError
from clusteremu.emulator.runner import execute
from clusteremu.emulator.trace import open_run
from clusteremu.emulator.testing import assert_count
from clusteremu.emulator.trace.query import Trace
from clusteremu.scenarios.loader import load_scenario


def test_rocketmq_defaults():
    d = config.DEFAULTS
    assert d["pollNameServerInterval"] == 30_000
    assert d["heartbeatBrokerInterval"] == 30_000
    assert d["persistConsumerOffsetInterval"] == 5_000
    assert d["rocketmq.client.rebalance.waitInterval"] == 20_000
    assert d["rocketmq.client.rebalance.minInterval"] == 1_000
    assert d["channelExpiredTimeout"] == 120_000
    assert d["rocketmq.broker.rebalance.lockMaxLiveTime"] == 60_000
    assert d["notifyConsumerIdsChangedEnable"] is True
    assert d["consumeFromWhere"] == "CONSUME_FROM_LAST_OFFSET" and d["messageModel"] == "CLUSTERING"
    assert d["clientRebalance"] is True and d["defaultMessageRequestMode"] == "PULL"


def test_timers_run_at_rocketmqs_periods(emulate):
    run = emulate("rocketmq-slow-consumer-averagely", until=290)
    trace = Trace(run)
    for c in ("consumer-1", "consumer-2", "consumer-3", "consumer-4"):
        # RebalanceService: waitForRunning(20 s) between rebalances once nothing wakes it.
        timer = trace.times_of("rebalance_result", where=lambda r, c=c: r.agent == c and r.trigger == "timer")
        gaps = np.diff(timer)
        assert len(gaps) >= 10 and np.all(np.abs(gaps - 20.0) < 0.05), gaps
    # persistAllConsumerOffset every 5 s (fixed rate): each queue's committed offset moves every 5 s.
    q = "TopicTest/broker-a/0"
    commits = trace.times_of("offset_committed", where=lambda e: e.queue == q and e.t > 20 and e.via == "update")
    assert np.all(np.abs(np.diff(commits) - 5.0) < 0.01), np.diff(commits)
    # Every pull request (one a consume tick, 1 s) also carries the consume offset, which the broker stores.
    pulls = trace.times_of("offset_committed", where=lambda e: e.queue == q and e.t > 20 and e.via == "pull")
    assert len(pulls) > 3 * len(commits) and np.median(np.diff(pulls)) == pytest.approx(1.0, abs=0.01)
    # Heartbeats every 30 s keep the channels alive: nothing expires in a quiet run.
    assert trace.count("channel_expired") == 0
    # The brokers' and consumers' observers report at fixed virtual times.
    stats = trace.times_of("queue_stats", where=lambda e: e.queue == q)
    assert np.allclose(stats, np.arange(5.0, 5.0 * (len(stats) + 1), 5.0))


def test_a_route_change_is_seen_at_each_consumers_next_poll_30_s_apart_at_most(emulate):
    run = emulate("rocketmq-broker-join-circle", until=400)
    (joined,) = assert_count(run, "broker_route_registered", exactly=1, where=lambda e: e.broker == "broker-c")
    seen = assert_count(run, "route_updated", exactly=4, within=(joined.t, None))
    assert all(0 < e.t - joined.t <= 30.0 + 0.05 for e in seen)


def test_5x_retries_an_unbalanced_rebalance_after_one_second(emulate):
    run = emulate("rocketmq-orderly-scale-out-5x", until=330)
    trace = Trace(run)
    retries = trace.select("rebalance_result", where=lambda r: r.trigger == "retry")
    unbalanced = trace.select("rebalance_result", where=lambda r: not r.balanced)
    assert unbalanced, "a lock refused during the scale-out leaves a consumer unbalanced"
    for r in unbalanced:
        nxt = trace.first("rebalance_result", within=(r.t + 1e-9, None), where=lambda x, r=r: x.agent == r.agent)
        assert nxt is not None and nxt.t - r.t < 1.0 + 0.05, (r.t, nxt and nxt.t)
    assert retries
    # 4.9.x waits for the next 20 s timer (or a notification) instead: no retry trigger at all.
    old = Trace(emulate("rocketmq-orderly-scale-out", until=330))
    assert old.count("rebalance_result", where=lambda r: r.trigger == "retry") == 0


@pytest.mark.parametrize("override, key", [
    (["config.pollNameServerInteval=1000"], "config.pollNameServerInteval"),
    (["config.consumeFromWhere=\"CONSUME_FROM_NOWHERE\""], "config.consumeFromWhere"),
    (["config.clientRebalance=false"], "config.clientRebalance"),
    (["faults.0.agents=[\"broker-a\"]"], "faults[0].agents"),
])
def test_bad_scenarios_are_refused_with_the_key(override, key):
    with pytest.raises(InputError) as err:
        load_scenario("rocketmq-scale-out-averagely", override)
    assert key in str(err.value)


@pytest.mark.parametrize("name", ["rocketmq-scale-out-consistent-hash", "rocketmq-pop-crash"])
def test_one_trace_in_process_and_in_two_worker_processes(tmp_path, name):
    sc = load_scenario(name)
    ref = execute(sc, tmp_path / "inproc", until=330)
    two = execute(sc, tmp_path / "procs2", until=330, agents="procs:2")
    assert ref.manifest["complete"] and two.manifest["complete"]
    assert two.digest == ref.digest
    assert two.manifest["events"]["count"] == ref.manifest["events"]["count"]
    # the observers' samples are one record each, a row a queue: the manifest counts the events readers give too
    rows = two.manifest["events"]["rows"]
    assert rows == ref.manifest["events"]["rows"] == sum(1 for _ in open_run(two.run_dir).events())
    assert rows > two.manifest["events"]["count"]


def test_broadcasting_consumers_take_every_queue_and_resume_from_their_local_offsets(emulate):
    run = emulate("rocketmq-rolling-restart-averagely", until=600, **{"config.messageModel": "BROADCASTING"})
    trace = Trace(run)
    for c in ("consumer-1", "consumer-2", "consumer-3", "consumer-4"):
        taken = trace.select("queue_taken", where=lambda e, c=c: e.agent == c)
        first = [e for e in taken if e.t < 300.0]
        again = [e for e in taken if e.t >= 300.0]
        assert len(first) == len(again) == 16 and {e.mode for e in taken} == {"BROADCAST"}
        # LocalFileOffsetStore survives the restart: the consumer resumes where it stopped, not at the end.
        assert {e.offset_source for e in again} == {"local"}
        stopped = {e.queue: e.offset for e in trace.select("queue_dropped", where=lambda e, c=c: e.agent == c)}
        assert all(e.offset == stopped[e.queue] for e in again)
    assert trace.count("offset_committed") == 0  # nothing goes to the brokers
    assert RocketMQViews(trace).overlap_seconds() == 0.0  # shared by design, not an overlap


def _phase(times, period: float) -> np.ndarray:
    return np.mod(np.asarray(times), period)


@pytest.mark.parametrize("mode", ["fixed_rate", "fixed_delay"])
def test_a_long_gc_pause_keeps_fixed_rate_timers_in_phase_and_moves_fixed_delay_ones(emulate, mode):
    # RocketMQ's MQClientInstance uses scheduleAtFixedRate (the default `fixed_rate`); the scenario runs the same
    # cluster at fixed delay. consumer-3 is paused 300-345 s; persistAllConsumerOffset runs every 5 s.
    run = emulate("rocketmq-gc-pause-fixed-delay", until=450, cluster__timer_mode=mode)
    trace = Trace(run)
    cid = trace.last("consumer_started", where=lambda e: e.agent == "consumer-3").cid
    commits = trace.times_of("offset_committed", where=lambda e: e.cid == cid and e.via == "update")
    before = [t for t in commits if 200.0 < t < 300.0]
    during = [t for t in commits if 300.0 <= t < 345.0]
    after = [t for t in commits if 345.0 <= t < 440.0]
    assert len(before) >= 15 and not during and after
    start_phase = _phase(before, 5.0)
    assert np.ptp(start_phase) < 0.01  # a fixed phase before the pause, whatever the mode
    assert after[0] == pytest.approx(345.0, abs=0.01)  # the overdue run fires as the pause ends
    later = [t for t in after if t > 346.0]
    if mode == "fixed_rate":
        # Back on the start's grid: overdue runs fired back to back, nothing moved.
        assert np.allclose(_phase(later, 5.0), start_phase[0], atol=0.01)
    else:
        # The next run is 5 s after the previous ended: the grid now starts at the pause's end.
        assert np.allclose(_phase(later, 5.0), _phase([after[0]], 5.0)[0], atol=0.01)
        assert not np.allclose(_phase(later, 5.0), start_phase[0], atol=0.05)
    # RebalanceService is a ServiceThread (waitForRunning after each run) in both modes: its timer rebalances
    # restart 20 s after the one the pause's end released.
    timer = trace.times_of("rebalance_result", where=lambda e: e.agent == "consumer-3" and e.t > 345.0)
    assert timer[0] == pytest.approx(345.0, abs=0.01)
    assert np.all(np.abs(np.diff(timer) - 20.0) < 0.05), np.diff(timer)
