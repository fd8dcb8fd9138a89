"""The extensible load manager's ownership monitor in the cluster model (issue 18): the published benchmark's
restart with all ten brokers of a cluster stopping at once leaves transfers ``Assigning`` towards brokers that
were stopping too; the new channel owner's monitor rolls them forward once they are older than
``loadBalancerInFlightServiceUnitStateWaitingTimeInMillis``, and the publishers reconnect."""
from __future__ import annotations

import pytest

from clusteremu.emulator.runner import execute
from clusteremu.emulator.trace import open_run
from clusteremu.scenarios.loader import load_scenario

# lm-bench-rolling-restart-extensible with one broker per restart wave: every broker stops at 600 s.
TEN_BROKERS = ["cluster.brokers=10", "cluster.clients=4", "workload.namespaces.0.bundles=64",
               "workload.tasks.0.topics=300"]
UNTIL = 720.0
INTERVAL_S = 60.0  # loadBalancerServiceUnitStateMonitorIntervalInSeconds
WAITING_S = 30.0  # loadBalancerInFlightServiceUnitStateWaitingTimeInMillis


def run(tmp_path, name, extra=()):
    sc = load_scenario("lm-bench-rolling-restart-extensible", [*TEN_BROKERS, *extra])
    return list(open_run(execute(sc, tmp_path / name, seed=7, until=UNTIL).run_dir).events())


def disconnected_at_end(events) -> set[str]:
    connected: dict[str, bool] = {}
    for e in events:
        if e.kind in ("topic_connected", "topic_disconnected"):
            connected[e.topic] = e.kind == "topic_connected"
    return {t for t, up in connected.items() if not up}


def stuck_assignments(events) -> dict[str, float]:
    """Bundle -> when its last transfer was published Assigning towards a broker stopping at that moment."""
    stopping: set[str] = set()
    out: dict[str, float] = {}
    for e in events:
        if e.kind == "broker_stopping":
            stopping.add(e.agent)
        elif e.kind == "broker_booted":
            stopping.discard(e.agent)
        elif e.kind == "service_unit_state":
            if e.state == "Assigning" and e.dst in stopping:
                out[e.bundle] = e.t
            elif e.state == "Owned" and e.reason != "roll_forward":
                out.pop(e.bundle, None)
    return out


@pytest.fixture(scope="module")
def events(tmp_path_factory):
    return run(tmp_path_factory.mktemp("monitor"), "ten")


def test_the_restart_leaves_transfers_assigning_to_stopping_brokers(events):
    stuck = stuck_assignments(events)
    assert len(stuck) >= 10, stuck  # most of the 64 bundles: every broker hands over to another stopping one


def test_the_monitor_rolls_them_forward_within_interval_plus_waiting_time(events, owners_over_time):
    stuck = stuck_assignments(events)
    restart = min(e.t for e in events if e.kind == "broker_stopping")
    leader_at = min(e.t for e in events if e.kind == "leader_elected" and e.t > restart)
    overrides = {e.bundle: e for e in events if e.kind == "service_unit_state" and e.reason == "roll_forward"}
    assert set(stuck) <= set(overrides), sorted(set(stuck) - set(overrides))
    for bundle, assigned_at in stuck.items():
        o = overrides[bundle]
        # the first run is at the election; the record is overridden by the first run after it is 30 s old
        assert o.t - max(assigned_at, leader_at) <= INTERVAL_S + WAITING_S, (bundle, assigned_at, o.t)
        assert o.t - assigned_at > WAITING_S
        assert (o.state, o.src) == ("Owned", "") and o.dst
    runs = [e for e in events if e.kind == "ownership_monitor"]
    assert runs and sum(r.overrides for r in runs) == len(overrides)
    assert all(r.inactive == "" for r in runs if r.overrides)  # overrides only when every named broker is up
    final = owners_over_time(events)  # never two owners at once
    for bundle, o in overrides.items():
        assert final[bundle] == o.dst


def test_every_publisher_reconnects(events):
    assert disconnected_at_end(events) == set()
    last_override = max(e.t for e in events if e.kind == "service_unit_state" and e.reason == "roll_forward")
    last_connect = max(e.t for e in events if e.kind == "topic_connected")
    assert last_connect < last_override + 5.0


def test_without_a_second_monitor_run_the_publishers_stay_disconnected(tmp_path):
    # The first run comes at once on the election, when nothing is 30 s old yet; with the next one out of reach
    # the transfers stay Assigning: what brings the publishers back is the monitor.
    events = run(tmp_path, "no-second-run", ["config.loadBalancerServiceUnitStateMonitorIntervalInSeconds=100000"])
    assert not any(e.kind == "ownership_monitor" for e in events)
    assert len(disconnected_at_end(events)) == 300
