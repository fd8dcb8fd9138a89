"""The channel owner's clean-up of a broker that left the registry (``handleBrokerDeletionEvent`` →
``scheduleCleanup`` → ``doCleanup``, issue 18), after ServiceUnitStateChannelTest.handleBrokerDeletionEventTest and
handleBrokerCreationEventTest: with a ``Stable`` metadata state the departed broker's bundles are overridden to
the other brokers at once, without a ``Free``; with a ``Jittery`` one (the channel owner's own session was
re-established less than 180 s ago) the clean-up waits 180 s, and the broker registering again cancels it; a
clean-up still pending when its channel owner loses that role runs on the former owner (doCleanup does not check
the role, and no leader change cancels cleanupJobs)."""
from __future__ import annotations

import pytest

from clusteremu.emulator.runner import execute
from clusteremu.emulator.trace import open_run
from clusteremu.scenarios.loader import validate_scenario

SESSION_TIMEOUT_S = 10.0  # zooKeeperSessionTimeoutMillis


def run(tmp_path, name, faults, duration_s):
    data = {
        "scenario": {"name": name, "model": "pulsar", "duration_s": duration_s, "seed": 3},
        "network": {"latency": {"dist": "uniform", "min_ms": 0.5, "max_ms": 1.5}},
        "cluster": {"brokers": 3, "clients": 2, "start_jitter_s": 2.0},
        "workload": {"namespaces": [{"name": "public/default", "bundles": 8}],
                     "tasks": [{"name": "t", "topics": 24, "rate_msgs": 2000}]},
        "config": {"zooKeeperSessionTimeoutMillis": int(SESSION_TIMEOUT_S * 1000)},
        "strategy": {"load_manager": "extensible"},
        "faults": faults,
    }
    return list(open_run(execute(validate_scenario(data, "test"), tmp_path / name).run_dir).events())


def cleanups(events, broker):
    return [e for e in events if e.kind == "broker_cleanup" and e.broker == broker]


def connected_at_the_end(events):
    """Each topic's last connection event: all 24 connected, none to the crashed broker-2."""
    last = {}
    for e in events:
        if e.kind in ("topic_connected", "topic_disconnected"):
            last[e.topic] = e
    assert len(last) == 24 and {e.kind for e in last.values()} == {"topic_connected"}
    assert "broker-2" not in {e.broker for e in last.values()}
    return last


@pytest.fixture(scope="module")
def crashed(tmp_path_factory):
    """broker-2 (not the channel owner) crashes at 60 s and never comes back."""
    return run(tmp_path_factory.mktemp("cleanup"), "crash", [{"kind": "crash", "at": 60.0, "agents": ["broker-2"]}],
               120)


def test_a_departed_broker_is_cleaned_up_at_once_when_stable(crashed):
    leader = next(e.agent for e in crashed if e.kind == "leader_elected")
    assert leader != "broker-2"
    steps = cleanups(crashed, "broker-2")
    assert [(e.action, e.metadata, e.delay) for e in steps] == [("scheduled", "Stable", 0.0), ("run", "", 0.0)]
    scheduled, ran = steps
    expired = next(e.t for e in crashed if e.kind == "store_session_expired" and e.owner == "broker-2")
    assert scheduled.agent == ran.agent == leader and expired <= scheduled.t < expired + 0.1
    assert ran.t == scheduled.t  # MIN_CLEAN_UP_DELAY_TIME_IN_SECS = 0


def test_its_bundles_are_owned_by_the_others_without_a_free(crashed, owners_over_time):
    ran = cleanups(crashed, "broker-2")[-1]
    had = {e.bundle for e in crashed if e.kind == "bundle_owned" and e.agent == "broker-2"}
    overrides = {e.bundle: e for e in crashed if e.kind == "service_unit_state" and e.reason == "inactive_broker"}
    assert had and set(overrides) == had and ran.units == len(had)
    for o in overrides.values():
        assert (o.state, o.src) == ("Owned", "broker-2") and o.dst != "broker-2"
        assert o.t - ran.t < 0.1  # the forced write, right after the clean-up ran
    assert not any(e.kind == "service_unit_state" and e.state == "Free" for e in crashed)
    final = owners_over_time(crashed)
    assert {b: final[b] for b in had} == {b: o.dst for b, o in overrides.items()}


def test_the_clients_reconnect_to_the_new_owners(crashed):
    ran = cleanups(crashed, "broker-2")[-1]
    last = connected_at_the_end(crashed)
    moved = [e for e in last.values() if e.t > 60.0]
    assert moved and all(e.t >= ran.t for e in moved)


def test_a_broker_back_before_a_jittery_delay_keeps_nothing_scheduled(tmp_path):
    # Every broker loses its session (30-45 s): the channel owner's state is Jittery for 180 s after it reconnects.
    # broker-2 then pauses past its session timeout and registers again when it resumes, at 100 s.
    events = run(tmp_path, "jittery", [
        {"kind": "partition", "at": 30.0, "duration_s": 15.0, "between": [["broker-*"], ["metadata-store"]]},
        {"kind": "pause", "at": 80.0, "duration_s": 20.0, "agents": ["broker-2"]},
    ], 200)
    steps = cleanups(events, "broker-2")
    assert [(e.action, e.metadata, e.delay) for e in steps] == [("scheduled", "Jittery", 180.0),
                                                                ("cancelled", "", 0.0)]
    assert 80.0 < steps[0].t < 100.0 <= steps[1].t < steps[0].t + 180.0
    assert not any(e.kind == "service_unit_state" and e.reason == "inactive_broker" for e in events)


def test_a_pending_clean_up_still_runs_on_a_former_channel_owner(tmp_path, owners_over_time):
    # ServiceUnitStateChannelImpl: doCleanup does not check that its broker still owns the channel, and nothing
    # cancels cleanupJobs on a leader change (playFollower cancels the monitor and the unload scheduler only).
    # Every broker loses its session at 30-45 s (Jittery until ~230 s); broker-2 crashes at 60 s, so the channel
    # owner, broker-3, schedules its clean-up for 180 s later. broker-1 pauses past its session at 80 s (Jittery
    # again until ~275 s), then broker-3 pauses past its own at 110 s and broker-1 becomes the channel owner:
    # broker-3's job runs at ~248 s, before the new owner's monitor could act (at ~298 s, the first run when Stable).
    # The run goes on to 360 s: broker-2's publishers back off to a minute between lookups by then.
    events = run(tmp_path, "owner-change", [
        {"kind": "partition", "at": 30.0, "duration_s": 15.0, "between": [["broker-*"], ["metadata-store"]]},
        {"kind": "crash", "at": 60.0, "agents": ["broker-2"]},
        {"kind": "pause", "at": 80.0, "duration_s": 15.0, "agents": ["broker-1"]},
        {"kind": "pause", "at": 110.0, "duration_s": 20.0, "agents": ["broker-3"]},
    ], 360)
    elected = [(e.agent, e.t) for e in events if e.kind == "leader_elected"]
    assert elected[-2][0] == "broker-3" and elected[-1][0] == "broker-1"
    scheduled, ran = cleanups(events, "broker-2")  # no second clean-up of broker-2, by anyone
    assert (scheduled.agent, scheduled.action, scheduled.metadata, scheduled.delay) == \
        ("broker-3", "scheduled", "Jittery", 180.0)
    assert elected[-2][1] < scheduled.t < elected[-1][1]  # scheduled by the owner, which then lost the role
    assert (ran.agent, ran.action) == ("broker-3", "run") and 0 <= ran.t - (scheduled.t + 180.0) < 0.1
    # Its overrides are published to the channel by the former owner, to registered brokers
    overrides = [e for e in events if e.kind == "service_unit_state" and e.reason == "inactive_broker"]
    assert overrides and len(overrides) == ran.units
    for o in overrides:
        assert (o.agent, o.state, o.src) == ("broker-3", "Owned", "broker-2") and o.dst in ("broker-1", "broker-3")
        assert o.t - ran.t < 0.1
    # ... and every table view applies them: the new owners serve the bundles, the new channel owner's monitor
    # finds nothing left to clean (broker-2 is only the source of Owned records now)
    final = owners_over_time(events)
    assert {o.bundle: final.get(o.bundle) for o in overrides} == {o.bundle: o.dst for o in overrides}
    assert not any(e.kind == "ownership_monitor" and e.agent == "broker-1" for e in events)
    connected_at_the_end(events)
    # broker-2's publishers find no owner until the former owner's overrides, then reconnect to the new owners
    orphaned = {e.topic for e in events if e.kind == "topic_disconnected" and e.broker == "broker-2" and e.t >= 60.0}
    back = {}
    for e in events:
        if e.kind == "topic_connected" and e.topic in orphaned and e.t > 60.0:
            back.setdefault(e.topic, e)
    assert orphaned and set(back) == orphaned
    assert all(e.t > ran.t and e.broker in {o.dst for o in overrides} for e in back.values())


def test_a_former_channel_owner_drops_the_clean_up_of_a_broker_that_came_back(tmp_path):
    # As above, but broker-2 pauses past its session at 60 s and registers again when it resumes, at 160 s: its
    # return cancels the former owner's job (handleBrokerCreationEvent runs on every broker). The former owner does
    # not follow the registry in the model, so it finds broker-2 registered when the job comes due.
    events = run(tmp_path, "owner-change-back", [
        {"kind": "partition", "at": 30.0, "duration_s": 15.0, "between": [["broker-*"], ["metadata-store"]]},
        {"kind": "pause", "at": 60.0, "duration_s": 100.0, "agents": ["broker-2"]},
        {"kind": "pause", "at": 80.0, "duration_s": 15.0, "agents": ["broker-1"]},
        {"kind": "pause", "at": 110.0, "duration_s": 20.0, "agents": ["broker-3"]},
    ], 300)
    assert [e.agent for e in events if e.kind == "leader_elected"][-2:] == ["broker-3", "broker-1"]
    steps = cleanups(events, "broker-2")
    assert [(e.agent, e.action) for e in steps] == [("broker-3", "scheduled"), ("broker-3", "cancelled")]
    assert 0 <= steps[1].t - (steps[0].t + 180.0) < 0.1
    assert not any(e.kind == "service_unit_state" and e.reason == "inactive_broker" for e in events)
