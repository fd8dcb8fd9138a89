"""The channel owner's clean-up of a broker that left the registry (``handleBrokerDeletionEvent`` →
``scheduleCleanup`` → ``doCleanup``, issue 18), after ServiceUnitStateChannelTest.handleBrokerDeletionEventTest and
handleBrokerCreationEventTest: with a ``Stable`` metadata state the departed broker's bundles are overridden to
the other brokers at once, without a ``Free``; with a ``Jittery`` one (the channel owner's own session was
re-established less than 180 s ago) the clean-up waits 180 s, and the broker registering again cancels it."""
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
    last = {}
    for e in crashed:
        if e.kind in ("topic_connected", "topic_disconnected"):
            last[e.topic] = e
    assert len(last) == 24 and {e.kind for e in last.values()} == {"topic_connected"}
    assert "broker-2" not in {e.broker for e in last.values()}
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
