"""``workload.register_broker = "lease"`` (the brokers' periodic ``REGISTER_BROKER`` as kernel keep-alive leases
with the name server), checked against the one-by-one registrations it stands for.

The cases are the name server's ``scanNotActiveBroker`` ones (RocketMQ 4.9.4's ``RouteInfoManager``): a broker
whose machine is lost is removed at the first scan more than ``BROKER_CHANNEL_EXPIRED_TIME`` (120 s) after its last
registration; so is a broker paused, or cut from the name server, for longer than that, which registers again
(a first registration: its route comes back) with the first registration after it resumes. Each is run with
both models and the name server's decisions, and the routes the consumers read, compared."""
from __future__ import annotations

import copy

import pytest

from clusteremu.base.errors import InputError
from clusteremu.emulator.trace.query import Trace
from clusteremu.scenarios.loader import load_scenario

# Two groups of three consumers on four brokers (group 1's topic on broker-a and broker-b, group 2's on broker-c
# and broker-d): broker-b's machine is lost at 101 s, broker-c pauses 150 s at 150 s, broker-d pauses 45 s at
# 140 s (its overdue registration at 185 s, the next on its grid at 190 s) and is cut from the name server for
# 150 s at 200 s (the consumers still reach it): its last registration before the cut is the grid's, at 190 s.
# (The brokers of a running cluster register at 10 + 30·k s: a crash at exactly such a time ties with that
# run's timer, an order the lease cannot know.)
SCENARIO = {
    "scenario": {"name": "rocketmq-register-small", "description": "a broker lost, one paused, one cut from the "
                 "name server", "model": "rocketmq", "duration_s": 520.0, "seed": 7},
    "network": {"latency": {"dist": "uniform", "min_ms": 0.5, "max_ms": 2.0}},
    "cluster": {"brokers": 4, "queues_per_broker": 8, "consumers": 6, "start_jitter_s": 10.0, "start": "running"},
    "workload": {"groups": 2, "topic_brokers": 2, "consume_tick_s": 1.0},
    "faults": [{"kind": "broker_loss", "at": 101.0, "agents": ["broker-b"]},
               {"kind": "pause", "at": 150.0, "duration_s": 150.0, "agents": ["broker-c"]},
               {"kind": "pause", "at": 140.0, "duration_s": 45.0, "agents": ["broker-d"]},
               {"kind": "partition", "at": 200.0, "duration_s": 150.0, "between": [["broker-d"], ["namesrv"]]}],
}


@pytest.fixture
def runs(emulate):
    return {mode: emulate(copy.deepcopy(SCENARIO), **{"workload.register_broker": mode})
            for mode in ("messages", "lease")}


def _same_decisions(one: Trace, lease: Trace) -> dict[str, float]:
    """Check that the name server removed and took back the same brokers at the same times in both runs, and the
    consumers read the same routes when; return the silence of each removal of the lease's run."""
    def name_server(trace):
        return [(e.kind, e.broker, e.t, getattr(e, "silent_s", 0.0), getattr(e, "reason", "")) for e in
                trace.select(["broker_route_removed", "broker_route_registered"], within=(1e-9, None))]
    no, nl = name_server(one), name_server(lease)
    # each broker expired once (120-130 s after its last registration), the paused and the cut one came back
    assert [(k, b, r) for k, b, _t, _s, r in no] == [
        ("broker_route_removed", "broker-b", "expired"), ("broker_route_removed", "broker-c", "expired"),
        ("broker_route_registered", "broker-c", ""), ("broker_route_removed", "broker-d", "expired"),
        ("broker_route_registered", "broker-d", "")]
    assert [(k, b, r) for k, b, _t, _s, r in nl] == [(k, b, r) for k, b, _t, _s, r in no]
    assert all(abs(a[2] - b[2]) < 0.05 and abs(a[3] - b[3]) < 0.05 for a, b in zip(no, nl)), (no, nl)
    assert all(120.0 < s <= 130.0 for k, _b, _t, s, _r in no if k == "broker_route_removed")

    # the consumers read the same routes at the same times
    def routes(trace):
        return [(e.agent, e.t, tuple(e.brokers), e.queues) for e in trace.select("route_updated", within=(1e-9, None))]
    ro, rl = routes(one), routes(lease)
    assert len(ro) >= 12 and [r[::2] for r in rl] == [r[::2] for r in ro]
    assert all(abs(a[1] - b[1]) < 0.05 for a, b in zip(ro, rl)), (ro, rl)
    return {b: s for k, b, _t, s, _r in nl if k == "broker_route_removed"}


def test_the_name_server_expires_and_takes_back_brokers_as_with_the_registrations(runs):
    silent = _same_decisions(Trace(runs["messages"]), Trace(runs["lease"]))
    assert silent["broker-d"] == 125.0  # the scan at 315 s, after the grid's registration at 190 s


def test_under_fixed_delay_timers_the_lease_re_anchors_as_the_task_does(emulate):
    # a fixed-delay task's next run is a period after its overdue one at the pause's end (185 s, then 215 s, in
    # the partition): broker-d's last registration before the cut is the overdue one
    one, lease = (Trace(emulate(copy.deepcopy(SCENARIO), cluster__timer_mode="fixed_delay",
                                **{"workload.register_broker": mode})) for mode in ("messages", "lease"))
    assert _same_decisions(one, lease)["broker-d"] == 130.0


def test_the_lease_leaves_the_steady_registrations_out(runs):
    def messages(run):
        return run.manifest["stats"]["messages"]
    # one by one: 57 periodic registrations (18 of broker-a and broker-d each, 4 of broker-b before its loss, 17
    # of broker-c, 5 of them at once at its pause's end); the lease: a declaration per broker and its answer (8),
    # the pauses' and the partition's stop notices and the crash's end notice (4), broker-d's beat at its
    # pause's end and its answer (2), the partition's 5 real keep-alives, and for each broker that comes back a
    # beat, its "expired" answer, the real registration, the next run's declaration and its answer (10): 29.
    # The other messages differ by a few (the latency draws).
    assert messages(runs["messages"]) - messages(runs["lease"]) >= 25


@pytest.mark.parametrize("override, key", [
    (['workload.register_broker="beats"'], "workload.register_broker"),
    (['workload.register_broker="lease"', 'faults=[{kind="pause", at=10.0, duration_s=200.0, agents=["namesrv"]}]'],
     "faults[0].agents"),
])
def test_bad_register_broker_settings_are_refused_with_the_key(override, key):
    with pytest.raises(InputError) as err:
        load_scenario("rocketmq-crash-averagely", override)
    assert key in str(err.value)
