"""Two RocketMQ 5.x broker behaviours, from the broker code (``DefaultConsumerIdsChangeListener``,
``TopicRouteInfoManager``, ``QueryAssignmentProcessor`` and ``BrokerConfig`` of apache/rocketmq 5.x), as data:

* ``realTimeNotifyConsumerChange`` (default true: every CHANGE notified at once, as 4.9.x always does): false
  remembers the group's channels at each CHANGE, the last change of the group replacing earlier ones, and a fixed-rate
  task (first run 30 s after the broker starts, then every 15 s) sends NOTIFY_CONSUMER_IDS_CHANGED to them;
* the broker's cached routes for broker-side assignment: a fixed-rate task (first run 1 s after the start) every
  ``loadBalancePollNameServerInterval`` (30 000 ms; a broker setting, not the clients' ``pollNameServerInterval``)
  refreshes the topics queried so far, and a query for a topic with nothing cached reads the name server first.
"""
from __future__ import annotations

import pytest

from clusteremu.agents.rocketmq import config
from clusteremu.agents.rocketmq.broker import NOTIFY_BATCH_INITIAL_S, NOTIFY_BATCH_PERIOD_S
from clusteremu.agents.rocketmq.views import RocketMQViews
from clusteremu.base.errors import InputError
from clusteremu.emulator.trace.query import Trace
from clusteremu.scenarios.loader import load_scenario

BATCHED = "rocketmq-scale-out-batched-notify"
SCALE_OUT_AT = 300.0
#: the facts of the code, as data: key -> default
BROKER_5X_DEFAULTS = {"realTimeNotifyConsumerChange": True, "loadBalancePollNameServerInterval": 30_000}
#: a broker's young GC pause (20 ms) may delay a task's run past its grid point
SLACK = 0.1


def _on_grid(t: float, first: float, period: float) -> bool:
    k = round((t - first) / period)
    return k >= 0 and 0.0 <= t - (first + k * period) < SLACK


def test_the_5x_broker_keys_and_their_defaults():
    for key, default in BROKER_5X_DEFAULTS.items():
        assert key in config.BROKER_DEFAULTS and config.DEFAULTS[key] == default
    # the batch task's constants in DefaultConsumerIdsChangeListener: scheduleAtFixedRate(..., 30, 15, SECONDS)
    assert (NOTIFY_BATCH_INITIAL_S, NOTIFY_BATCH_PERIOD_S) == (30.0, 15.0)


@pytest.mark.parametrize("override, key", [
    (["config.realTimeNotifyConsumerChange=1"], "config.realTimeNotifyConsumerChange"),
    (["config.loadBalancePollNameServerInterval=0"], "config.loadBalancePollNameServerInterval"),
    (["config.loadBalancePollNameServerInterval=true"], "config.loadBalancePollNameServerInterval"),
])
def test_bad_5x_broker_settings_are_refused_with_the_key(override, key):
    with pytest.raises(InputError) as err:
        load_scenario(BATCHED, override)
    assert key in str(err.value)


def test_batched_notifications_reach_the_consumers_at_the_tasks_times_and_lengthen_the_overlap(emulate):
    # Expectation from the code: the brokers start at 0, so their batch task runs at 30 + 15 k s; the four new
    # consumers register between 300 s and 302 s, after the run at 300 s: every change is remembered (none sent),
    # and the run at 315 s notifies the 8 channels of the last change on each broker. Until then the old owners
    # keep the queues the new consumers took at their own start (unless their own 20 s timer comes first), so the
    # overlap after the scale-out lasts seconds instead of milliseconds, and more is consumed twice.
    batched = RocketMQViews(Trace(emulate(BATCHED, until=330)))
    at_once = RocketMQViews(Trace(emulate(BATCHED, until=330, **{"config.realTimeNotifyConsumerChange": True})))
    trace = batched.trace

    deferred = trace.select("consumer_ids_change_deferred", where=lambda e: e.t >= SCALE_OUT_AT)
    registered = trace.select("consumer_registered", where=lambda e: e.t >= SCALE_OUT_AT)
    assert len(registered) == 8 and [(e.agent, e.version) for e in deferred] == \
        [(e.agent, e.version) for e in registered]  # each registration is a remembered CHANGE, per broker
    notified = trace.select("consumer_ids_changed_notified")
    assert notified and all(e.cause == "batched" for e in notified)
    assert all(_on_grid(e.t, NOTIFY_BATCH_INITIAL_S, NOTIFY_BATCH_PERIOD_S) for e in notified), \
        [e.t for e in notified]
    after = [e for e in notified if e.t >= SCALE_OUT_AT]
    assert sorted(e.agent for e in after) == ["broker-a", "broker-b"]
    assert all(315.0 <= e.t < 315.0 + SLACK and e.notified == 8 and e.version == 8 for e in after)

    # No rebalance after the scale-out is a notification's before the batch run (the new consumers' own start and
    # the old ones' timers only); the notified ones follow it within milliseconds, and the other broker's
    # notification, arriving within rocketmq.client.rebalance.minInterval (1 s) of that rebalance, is waited out
    # by the 5.x RebalanceService: a second rebalance 1 s later.
    woken = trace.select("rebalance_result", where=lambda r: r.t >= SCALE_OUT_AT and r.trigger == "notify")
    assert woken and all(315.0 <= r.t < 315.0 + SLACK or 316.0 <= r.t < 316.0 + SLACK for r in woken), \
        [r.t for r in woken]
    assert {r.agent for r in woken if r.t < 316.0} == {f"consumer-{i}" for i in range(1, 9)}
    early = trace.select("rebalance_result", where=lambda r: SCALE_OUT_AT <= r.t < 315.0)
    assert {r.trigger for r in early} <= {"start", "timer", "retry"}
    # At once (the default), each registration notifies the group within the same instant.
    now = at_once.trace.select("consumer_ids_changed_notified", where=lambda e: e.t >= SCALE_OUT_AT)
    assert len(now) == 8 and {e.cause for e in now} == {"registered"}
    assert at_once.trace.count("consumer_ids_change_deferred") == 0

    # The figures: overlap windows up to the batch run, many more seconds of overlap and messages consumed twice.
    windows = [w for w in batched.overlap_windows() if w[1] >= SCALE_OUT_AT]
    assert max(b - a for _q, a, b, _h in windows) <= 315.0 + SLACK - SCALE_OUT_AT
    assert max(b - a for _q, a, b, _h in windows) > 5.0
    assert batched.overlap_seconds(within=(SCALE_OUT_AT, None)) > \
        5 * at_once.overlap_seconds(within=(SCALE_OUT_AT, None)) > 0
    assert batched.duplicates_total() > 5 * at_once.duplicates_total() > 0
    # ... and both settle on the same allocation: one holder per queue, 2 queues each.
    for v in (batched, at_once):
        holders = [v.holders_at(q, 329.0) for q in v.queues()]
        assert all(len(h) == 1 for h in holders)
        assert sorted(sum(1 for h in holders if h == [c]) for c in {h[0] for h in holders}) == [2] * 8


def test_a_stated_default_gives_the_same_trace_as_none(emulate):
    # 4.9.x brokers always notify at once and have no such keys: stating 5.x's defaults changes nothing.
    plain = emulate("rocketmq-scale-out-averagely", until=320)
    stated = emulate("rocketmq-scale-out-averagely", until=320,
                     **{f"config.{k}": v for k, v in BROKER_5X_DEFAULTS.items()})
    assert plain.digest is not None and stated.digest == plain.digest


def _answers(trace: Trace, brokers: tuple[str, ...]) -> list[tuple[float, int]]:
    return [(e.t, e.route_queues) for e in trace.select("assignment_queried", where=lambda e: e.agent in brokers)]


@pytest.mark.parametrize("overrides, refresh", [
    ({}, 30.0),
    ({"config.loadBalancePollNameServerInterval": 5_000}, 5.0),
    ({"config.pollNameServerInterval": 5_000}, 30.0),  # the clients' key: not the brokers' refresh
])
def test_brokers_see_a_joined_brokers_queues_at_their_own_refresh(emulate, overrides, refresh):
    # broker-c joins at 315 s with 8 more queues (16 -> 24). broker-a and broker-b answer QUERY_ASSIGNMENT from the
    # route they cached; their refresh runs at 1 + k * loadBalancePollNameServerInterval s, fixed rate.
    trace = Trace(emulate("rocketmq-pop-broker-join", until=340, **overrides))
    join = 315.0
    seen_at = 1.0 + refresh * (int((join - 1.0) // refresh) + 1)  # the first refresh after the join
    answers = [(t, n) for t, n in _answers(trace, ("broker-a", "broker-b")) if t > join]
    assert any(t < seen_at for t, _ in answers) == (seen_at > 322.0)  # the 5.x clients' queries at about 322 s
    assert answers and all(n == (16 if t < seen_at else 24) for t, n in answers), answers
    assert any(n == 24 for _t, n in answers)


def test_a_query_before_the_first_refresh_reads_the_route_at_once(emulate):
    # The consumers start within 2 s and query at once; the brokers' first refresh runs at 1 s. In the model before
    # this change, a query before it was answered "no route"; TopicRouteInfoManager.getTopicSubscribeInfo reads the
    # name server instead.
    trace = Trace(emulate("rocketmq-pop-scale-out", until=10))
    early = trace.select("assignment_queried", where=lambda e: e.t < 1.0)
    assert early, "no query before the first refresh"
    assert all(e.ok and e.route_queues == 16 for e in trace.select("assignment_queried"))
    assert trace.count("rebalance_skipped") == 0
