"""The Pulsar model's fault kinds (agents/pulsar/faults.py): each one's effect in the trace, and that the cluster
recovers as Pulsar does — no bundle owned by two brokers at any instant, every topic connected again at the end,
a leader again after the leader is lost."""
from __future__ import annotations

import pytest

from clusteremu.base.errors import InputError
from clusteremu.emulator.testing import assert_count, assert_eventually, assert_never
from clusteremu.emulator.trace.query import trace_of
from clusteremu.scenarios.loader import validate_scenario

SESSION_S = 10.0  # zooKeeperSessionTimeoutMillis below
TICK_S = 2.0  # the store's default tick

BASE = {
    "scenario": {"name": "faults", "model": "pulsar", "duration_s": 200, "seed": 3},
    "network": {"latency": {"dist": "uniform", "min_ms": 0.5, "max_ms": 1.5}},
    "cluster": {"brokers": 3, "clients": 2, "start_jitter_s": 2.0},
    "workload": {"namespaces": [{"name": "public/default", "bundles": 8}],
                 "tasks": [{"name": "t", "topics": 24, "rate_msgs": 500}]},
    "strategy": {"shedding": "ThresholdShedder", "placement": "LeastResourceUsageWithWeight"},
    "config": {"loadBalancerDistributeBundlesEvenlyEnabled": False, "zooKeeperSessionTimeoutMillis": 10_000},
}
TOPICS = 24


def with_faults(faults: list[dict], **sections) -> dict:
    data = {k: dict(v) for k, v in BASE.items()}
    for k, v in sections.items():
        data[k] = {**data[k], **v}
    data["faults"] = faults
    return data


def recovered(run, owners_over_time, alive: set[str]) -> dict[str, str]:
    """Single ownership throughout; at the end every topic is connected to a live broker that owns its bundle."""
    events = list(run.events())
    owners = owners_over_time(events)
    assert set(owners.values()) <= alive, f"bundles left on stopped brokers: {owners}"
    last: dict[str, object] = {}
    for e in events:
        if e.kind in ("topic_connected", "topic_disconnected"):
            last[e.topic] = e
    assert len(last) == TOPICS
    lost = sorted(t for t, e in last.items() if e.kind != "topic_connected")
    assert not lost, f"topics not connected at the end: {lost}"
    assert {e.broker for e in last.values()} <= alive
    return owners


def bundles_of(run, broker: str, before: float) -> set[str]:
    owned: set[str] = set()
    for e in run.events():
        if e.t >= before:
            break
        if e.agent == broker and e.kind == "bundle_owned":
            owned.add(e.bundle)
        elif e.agent == broker and e.kind == "bundle_unloaded":
            owned.discard(e.bundle)
    return owned


def test_shutdown_unloads_first_then_closes_the_session(emulate, owners_over_time):
    run = emulate(with_faults([{"kind": "shutdown", "at": 60.0, "agents": ["broker-2"]}]))
    had = bundles_of(run, "broker-2", 60.0)
    assert had
    unloaded = assert_count(run, "bundle_unloaded", exactly=len(had), entity="broker-2",
                            where=lambda e: e.reason == "shutdown")
    assert {e.bundle for e in unloaded} == had
    stopped = assert_count(run, "broker_stopped", exactly=1, entity="broker-2", where=lambda e: e.cause == "shutdown")
    assert all(e.t <= stopped[0].t for e in unloaded)
    # Graceful: the clients are told to reconnect (an unload, not a dead broker) and the session is closed,
    # not left to expire.
    assert_never(run, "topic_disconnected", where=lambda e: e.broker == "broker-2" and e.reason != "unload")
    assert_never(run, "store_session_expired")
    # The leader forgets the broker at once: no placement considers it after it stopped.
    assert_never(run, "bundle_placed", within=(stopped[0].t, None), where=lambda e: "broker-2" in e.scores)
    recovered(run, owners_over_time, {"broker-1", "broker-3"})


def test_leader_kill_crashes_only_the_leader_and_another_is_elected(emulate, owners_over_time):
    run = emulate(with_faults([{"kind": "leader_kill", "at": 60.0}]))
    trace = trace_of(run)
    leader = trace.leader_at(59.0)
    assert leader is not None
    killed = assert_count(run, "agent_stopped", exactly=1, where=lambda e: e.reason == "leader_kill")
    assert killed[0].agent == leader and killed[0].t == 60.0
    # No clean-up: the leader node goes when the session expires, then another broker wins the election.
    elected = assert_eventually(run, "leader_elected", within=SESSION_S + TICK_S + 1.0, after="agent_stopped")
    assert elected[0].agent != leader and elected[0].previous == leader
    assert_count(run, "store_session_expired", exactly=1, where=lambda e: e.owner == leader)
    recovered(run, owners_over_time, {"broker-1", "broker-2", "broker-3"} - {leader})


def test_gc_storm_pauses_only_its_brokers_inside_the_window(emulate, owners_over_time):
    storm = {"kind": "gc_storm", "at": 30.0, "duration_s": 60.0, "agents": ["broker-1"], "every_s": 5.0,
             "pause_s": 0.5, "sigma": 0.5}
    run = emulate(with_faults([storm]))
    pauses = assert_count(run, "stw_pause", at_least=5, at_most=25, where=lambda e: e.cause == "gc_storm")
    assert {e.agent for e in pauses} == {"broker-1"}
    assert all(30.0 <= e.t < 90.0 for e in pauses)
    lengths = sorted(e.duration_s for e in pauses)
    assert 0.2 < lengths[len(lengths) // 2] < 1.2  # median near pause_s
    # Drawn from the broker's keyed stream: the same pauses on two workers.
    again = emulate(with_faults([storm]), agents="inproc:2")
    assert [(e.t, e.duration_s) for e in again.events() if e.kind == "stw_pause"] == \
        [(e.t, e.duration_s) for e in pauses]
    recovered(run, owners_over_time, {"broker-1", "broker-2", "broker-3"})


def test_store_latency_slows_every_metadata_operation_in_the_window(emulate, owners_over_time):
    # The shutdown in the window makes clients look their topics up again, which reads the store.
    run = emulate(with_faults([{"kind": "store_latency", "at": 55.0, "duration_s": 30.0, "extra_ms": 2000.0},
                               {"kind": "shutdown", "at": 60.0, "agents": ["broker-2"]}]))
    changes = assert_count(run, "store_latency_changed", exactly=2)
    assert [(e.t, e.op_latency_ms) for e in changes] == [(55.0, 2001.0), (85.0, 1.0)]
    moved = [e for e in run.events() if e.kind == "topic_connected" and 60.0 < e.t]
    assert moved and all(e.unavailable_s >= 2.0 for e in moved)  # at least one store read at 2 s each
    # The same shutdown without the fault moves topics in well under a second.
    quick = emulate(with_faults([{"kind": "shutdown", "at": 60.0, "agents": ["broker-2"]}]))
    assert min(e.unavailable_s for e in quick.events() if e.kind == "topic_connected" and e.t > 60.0) < 1.0
    recovered(run, owners_over_time, {"broker-1", "broker-3"})


def test_report_loss_loses_reports_in_the_window_and_the_broker_retries(emulate, owners_over_time):
    run = emulate(with_faults([
        {"kind": "report_loss", "at": 0.0, "duration_s": 60.0, "agents": ["broker-2", "broker-3"]},
        {"kind": "report_loss", "at": 0.0, "duration_s": 60.0, "agents": ["broker-1"], "extra_ms": 3000.0},
    ]))
    for b in ("broker-2", "broker-3"):
        assert_count(run, "load_report_lost", at_least=2, entity=b, within=(0.0, 60.0))
        assert_never(run, "load_report", entity=b, within=(0.0, 60.0))
        # lastData was never updated, so the next run of the task after the window writes the report.
        assert_count(run, "load_report", at_least=1, entity=b, within=(60.0, 66.0))
    assert_never(run, "load_report_lost", within=(60.0, None))
    delayed = assert_count(run, "load_report_delayed", at_least=1, entity="broker-1")
    assert all(e.extra_s == 3.0 and e.t < 60.0 for e in delayed)
    assert_never(run, "load_report_lost", entity="broker-1")
    recovered(run, owners_over_time, {"broker-1", "broker-2", "broker-3"})


def test_cpu_spike_raises_cpu_but_not_traffic(emulate):
    run = emulate(with_faults([{"kind": "cpu_spike", "at": 60.0, "duration_s": 60.0, "agents": ["broker-1"],
                                "cores": 4.0}], cluster={"host_usage_interval_s": 10.0}))
    samples = [e for e in run.events() if e.kind == "host_usage_sampled" and e.agent == "broker-1"]
    before = [e.cpu for e in samples if 20.0 < e.t <= 60.0]
    during = [e.cpu for e in samples if 71.0 < e.t <= 120.0]
    after = [e.cpu for e in samples if 131.0 < e.t]
    assert before and during and after
    # 4 of the 8 cores: 50 points more, while the broker's own traffic does not change.
    assert min(during) > max(before) + 40.0
    assert max(after) < min(during) - 40.0
    reports = [e for e in run.events() if e.kind == "load_report" and e.agent == "broker-1" and e.t > 20.0]
    inside = [e for e in reports if 60.0 < e.t < 120.0]
    assert inside and len({round(e.msg_rate_in, 6) for e in reports}) == 1
    assert_count(run, "cpu_spike", exactly=1, entity="broker-1")


def test_scale_out_boots_new_brokers_that_then_take_bundles(emulate, owners_over_time):
    run = emulate(with_faults(
        [{"kind": "scale_out", "at": 60.0, "agents": ["broker-4"]},
         {"kind": "shutdown", "at": 100.0, "agents": ["broker-1"]}],
        cluster={"machines": {"broker-4": {"cores": 16.0}}},
        workload={"namespaces": [{"name": "public/default", "bundles": 8}],
                  "tasks": [{"name": "t", "topics": 24, "rate_msgs": 5000}]},
    ))
    assert min(e.t for e in run.events() if e.agent == "broker-4") == 60.0
    booted = assert_count(run, "broker_booted", exactly=1, entity="broker-4")
    assert booted[0].cause == "scale_out" and booted[0].t >= 60.0
    # The leader learns of it from its registration; when broker-1 leaves, placement hands its bundles to the
    # idlest broker, the new one. Clients reach it through redirects: their service URL does not list it.
    placed = assert_count(run, "bundle_placed", at_least=1, within=(100.0, None))
    assert all("broker-4" in e.scores for e in placed) and any(e.broker == "broker-4" for e in placed)
    assert_count(run, "bundle_owned", at_least=1, entity="broker-4")
    assert_count(run, "topic_connected", at_least=1, where=lambda e: e.broker == "broker-4")
    owners = recovered(run, owners_over_time, {"broker-2", "broker-3", "broker-4"})
    assert "broker-4" in owners.values()


def test_scale_in_stops_brokers_gracefully_labelled_scale_in(emulate, owners_over_time):
    run = emulate(with_faults([{"kind": "scale_in", "at": 60.0, "agents": ["broker-2", "broker-3"]}]))
    stopping = assert_count(run, "broker_stopping", exactly=2, where=lambda e: e.cause == "scale_in")
    assert {e.agent for e in stopping} == {"broker-2", "broker-3"}
    assert_count(run, "agent_stopped", exactly=2, where=lambda e: e.reason == "scale_in")
    # The leader (broker-3 in this run) resigned by closing its session: broker-1 leads at once, without
    # waiting for a session to expire, and owns everything in the end.
    assert trace_of(run).leader_at(59.0) in ("broker-2", "broker-3")
    assert_eventually(run, "leader_elected", after="leader_vacant", within=1.0, entity="broker-1")
    assert_never(run, "store_session_expired")
    assert trace_of(run).leader_at(199.0) == "broker-1"
    owners = recovered(run, owners_over_time, {"broker-1"})
    assert len(owners) == 8


def test_rolling_restart_one_broker_at_a_time_in_name_order(emulate, owners_over_time):
    run = emulate(with_faults([{"kind": "rolling_restart", "at": 30.0, "agents": ["broker-*"], "down_s": 10.0,
                                "gap_s": 20.0}], scenario={"duration_s": 240}))
    stops = assert_count(run, "broker_stopping", exactly=3, where=lambda e: e.cause == "rolling_restart")
    boots = assert_count(run, "broker_booted", exactly=3, where=lambda e: e.cause == "restart")
    assert [e.agent for e in stops] == [e.agent for e in boots] == ["broker-1", "broker-2", "broker-3"]
    assert stops[0].t == 30.0
    stopped = assert_count(run, "agent_stopped", exactly=3, where=lambda e: e.reason == "rolling_restart")
    for i in range(3):
        assert boots[i].t - stopped[i].t >= 10.0  # down for down_s
        if i:
            assert stops[i].t - boots[i - 1].t >= 20.0  # gap_s after the previous one is back
    assert_count(run, "rolling_restart_done", exactly=1, entity="broker-3")
    # Never two brokers down at once; a leader at the end; every topic back.
    down = 0
    for e in run.events():
        if e.kind == "broker_stopping":
            down += 1
            assert down == 1
        elif e.kind == "broker_booted" and e.cause == "restart":
            down -= 1
    assert trace_of(run).leader_at(239.0) is not None
    recovered(run, owners_over_time, {"broker-1", "broker-2", "broker-3"})


def test_faults_compose_and_stay_deterministic_across_workers(emulate, owners_over_time):
    composed = with_faults([
        {"kind": "gc_storm", "at": 20.0, "duration_s": 100.0, "agents": ["broker-*"], "every_s": 10.0,
         "pause_s": 0.3},
        {"kind": "store_latency", "at": 40.0, "duration_s": 20.0, "extra_ms": 500.0},
        {"kind": "leader_kill", "at": 50.0},
        {"kind": "cpu_spike", "at": 30.0, "duration_s": 30.0, "agents": ["broker-2"], "cores": 2.0},
        {"kind": "drop", "at": 0.0, "duration_s": 120.0, "between": [["client-*"], ["broker-*"]],
         "probability": 0.05},
        {"kind": "rolling_restart", "at": 130.0, "agents": ["broker-*"], "down_s": 5.0, "gap_s": 10.0},
    ], scenario={"duration_s": 260})
    run = emulate(composed)
    assert emulate(composed, agents="inproc:3").manifest["events"]["digest"] == run.manifest["events"]["digest"]
    assert_count(run, "fault_begin", exactly=6)
    assert_count(run, "fault_end", exactly=4)  # a leader kill is an instant; a rolling restart ends by itself
    killed = assert_count(run, "agent_stopped", exactly=1, where=lambda e: e.reason == "leader_kill")[0].agent
    assert_eventually(run, "leader_elected", after=lambda e: e.kind == "agent_stopped" and e.reason == "leader_kill",
                      within=SESSION_S + TICK_S + 2.0)
    # The killed broker is not restarted: the operator's script stops at it, so the brokers after it in name
    # order are not restarted either.
    restarted = [e.agent for e in run.events() if e.kind == "broker_booted" and e.cause == "restart"]
    order = ["broker-1", "broker-2", "broker-3"]
    assert restarted == order[:order.index(killed)]
    assert_never(run, "rolling_restart_done")
    recovered(run, owners_over_time, set(order) - {killed})


def test_partition_broker_from_store_expires_its_session_and_it_rejoins(emulate, owners_over_time):
    run = emulate(with_faults([{"kind": "partition", "at": 60.0, "duration_s": 20.0,
                                "between": [["broker-2"], ["metadata-store"]]}]))
    expired = assert_count(run, "store_session_expired", exactly=1, where=lambda e: e.owner == "broker-2")
    assert 60.0 + SESSION_S - SESSION_S / 3 <= expired[0].t <= 60.0 + SESSION_S + TICK_S
    # It learns of the expiry only when it reaches the store again, then drops its bundles and reconnects.
    lost = assert_count(run, "bundle_unloaded", at_least=1, entity="broker-2", where=lambda e: e.reason == "session_lost")
    assert all(e.t >= 80.0 for e in lost)
    assert_eventually(run, "bundle_owned", after=lambda e: e is lost[-1])
    recovered(run, owners_over_time, {"broker-1", "broker-2", "broker-3"})


def test_partition_broker_from_clients_sends_lookups_elsewhere(emulate, owners_over_time):
    # broker-2's shutdown makes clients look up again while broker-1 cannot be reached from them.
    run = emulate(with_faults([
        {"kind": "partition", "at": 50.0, "duration_s": 60.0, "between": [["client-*"], ["broker-1"]]},
        {"kind": "shutdown", "at": 60.0, "agents": ["broker-2"]},
    ], scenario={"duration_s": 240}))
    assert_never(run, "topic_connected", within=(50.0, 110.0), where=lambda e: e.broker == "broker-1")
    assert_count(run, "message_dropped", at_least=1, within=(50.0, 110.0))
    recovered(run, owners_over_time, {"broker-1", "broker-3"})


@pytest.mark.parametrize("fault, key, reason", [
    ({"kind": "gc_storm", "at": 1.0, "duration_s": 5.0, "agents": ["broker-1"], "pause_s": 1.0},
     "faults[0].every_s", "needs every_s"),
    ({"kind": "cpu_spike", "at": 1.0, "duration_s": 5.0, "agents": ["broker-1"]}, "faults[0].cores", "needs cores"),
    ({"kind": "store_latency", "at": 1.0, "duration_s": 5.0}, "faults[0].extra_ms", "needs extra_ms"),
    ({"kind": "scale_out", "at": 1.0, "agents": ["broker-*"]}, "faults[0].agents", "exact new broker names"),
    ({"kind": "scale_out", "at": 1.0, "agents": ["broker-2"]}, "faults[0].agents", "exists from the start"),
    ({"kind": "shutdown", "at": 1.0, "agents": ["broker-9"]}, "faults[0].agents", "matches no broker"),
    ({"kind": "shutdown", "at": 1.0, "agents": ["*"]}, "faults[0].agents", "brokers only"),
    ({"kind": "rolling_restart", "at": 1.0, "agents": ["broker-*"], "down_s": -1.0}, "faults[0].down_s", "at least 0"),
    ({"kind": "report_loss", "at": 1.0, "agents": ["broker-1"]}, "faults[0].duration_s", "needs duration_s"),
    ({"kind": "meteor", "at": 1.0}, "faults[0].kind", "unknown value"),
])
def test_bad_fault_entries_name_the_key(fault, key, reason):
    with pytest.raises(InputError) as err:
        validate_scenario(with_faults([fault]), "faults.toml")
    assert key in str(err.value) and reason in str(err.value)


def test_per_broker_machine_overrides_may_name_scale_out_brokers_only_if_they_exist():
    validate_scenario(with_faults([{"kind": "scale_out", "at": 5.0, "agents": ["broker-4"]}],
                                  cluster={"machines": {"broker-4": {"cores": 16.0}}}), "ok.toml")
    with pytest.raises(InputError) as err:
        validate_scenario(with_faults([], cluster={"machines": {"broker-4": {"cores": 16.0}}}), "bad.toml")
    assert "cluster.machines.broker-4" in str(err.value)


def test_defaults_are_filled_per_kind():
    sc = validate_scenario(with_faults([{"kind": "rolling_restart", "at": 1.0, "agents": ["broker-*"]},
                                        {"kind": "leader_kill", "at": 2.0},
                                        {"kind": "report_loss", "at": 3.0, "duration_s": 5.0, "agents": ["broker-1"]},
                                        {"kind": "gc_storm", "at": 1.0, "duration_s": 5.0, "agents": ["broker-1"],
                                         "every_s": 1.0, "pause_s": 0.1}]), "t")
    rolling, kill, loss, storm = sc.data["faults"]
    assert (rolling["down_s"], rolling["gap_s"]) == (30.0, 60.0)
    assert kill["agents"] == ["broker-*"]
    assert loss["probability"] == 1.0 and loss["extra_ms"] is None
    assert storm["sigma"] == 0.5
