"""Timing behaviours of the Pulsar model, written the way a user of the pytest plugin writes them.

The ``emulate`` fixture comes from clusteremu's pytest plugin (entry point ``pytest11``); the assertions from
``clusteremu.emulator.testing``. Each test reads like the behaviour it checks.
"""
from __future__ import annotations

import math

from clusteremu.emulator.testing import assert_count, assert_eventually, assert_never

MINUTE = 60.0


def test_avgshedder_unloads_once_after_eight_one_minute_checks_then_stays_put(emulate):
    run = emulate("avgshedder-homogeneous", until=20 * MINUTE)
    # loadBalancerAvgShedderHitCountLowThreshold = 8: the pair (24.5 points apart, over the low threshold of 15
    # but under the high one of 40) must be seen on 8 checks in a row, so nothing moves before the 9th check.
    assert_never(run, "unload_decided", within=(0, 8 * MINUTE + 1))
    rounds = assert_count(run, "shedding_cycle", exactly=1, where=lambda e: e.unloads > 0)
    assert 8 * MINUTE < rounds[0].t <= 10 * MINUTE
    # The destination is fixed at shedding time, and every bundle shed lands there.
    decided = assert_count(run, "unload_decided", at_least=1)
    assert len({e.destination for e in decided}) == 1
    assert_eventually(run, "bundle_owned", after="bundle_unloaded", within=1.0,
                      where=lambda e: e.agent == decided[0].destination)


def test_fixed_rate_sampling_after_a_gc_pause_reports_infinite_cpu_fixed_delay_never(emulate):
    rate = emulate("gc-fixed-rate-infinite-cpu", until=420)
    infinite = assert_count(rate, "load_report", at_least=1, entity="broker-2", where=lambda e: not math.isfinite(e.cpu))
    assert_eventually(rate, "unload_decided", after=lambda e: e is infinite[0], within=MINUTE + 1,
                      where=lambda e: e.source == "broker-2")
    delay = emulate("gc-fixed-rate-infinite-cpu", until=420, cluster__host_usage_mode="fixed_delay")
    assert_never(delay, "load_report", where=lambda e: not math.isfinite(e.cpu))
    assert_never(delay, "host_usage_sampled", where=lambda e: e.elapsed_s == 0)


def test_unloaded_topics_wait_the_initial_backoff_then_reconnect_within_a_second(emulate):
    run = emulate("avgshedder-homogeneous", until=12 * MINUTE)
    # ConnectionHandler.connectionClosed schedules the reconnection after backoff.next(): 100 ms, shortened by
    # at most 10 % but never below the initial interval; never 0 (that is the extensible load manager's transfer,
    # which names the new owner).
    scheduled = assert_count(run, "reconnect_scheduled", at_least=1, where=lambda e: e.attempt == 0)
    assert all(e.backoff_s == 0.1 for e in scheduled), sorted({e.backoff_s for e in scheduled})
    back = assert_count(run, "topic_connected", exactly=len(scheduled), where=lambda e: e.unavailable_s > 0)
    assert all(0.1 <= e.unavailable_s < 1.0 for e in back), [(e.topic, e.unavailable_s) for e in back]


def test_after_the_leader_crashes_a_new_one_is_elected_within_the_session_timeout(emulate, scenario):
    probe = emulate("avgshedder-homogeneous", until=30)
    (first,) = assert_count(probe, "leader_elected", exactly=1)
    s = scenario("avgshedder-homogeneous").crash(first.agent, at=120)
    run = emulate(s, until=6 * MINUTE)
    timeout = 30.0  # zooKeeperSessionTimeoutMillis
    tick = 2.0  # the store's session check period
    (elected,) = assert_eventually(run, "leader_elected", after="fault_begin", within=timeout + tick + 1.0)
    assert elected.agent != first.agent and elected.previous == first.agent
    assert_eventually(run, "shedding_cycle", after=lambda e: e is elected, within=MINUTE + 1,
                      where=lambda e: e.agent == elected.agent)
