"""Trace queries: selection, intervals and the state of the cluster at a time, on hand-made and emulated runs."""
from __future__ import annotations

import math

import pytest

from clusteremu.emulator.testing import write_run
from clusteremu.emulator.trace import open_run
from clusteremu.emulator.trace.query import Trace, entity_of, matches_entity, trace_of

B1, B2 = "ns/0x00000000_0x80000000", "ns/0x80000000_0xffffffff"


def report(t: float, broker: str, score: float, cpu: float | None = None, rate: float = 100.0) -> tuple:
    return (t, broker, "load_report", {
        "cpu": score if cpu is None else cpu, "memory": 10.0, "direct_memory": 0.0, "bandwidth_in": 1.0,
        "bandwidth_out": 1.0, "msg_rate_in": rate, "msg_rate_out": rate, "msg_throughput_in": rate * 1000,
        "msg_throughput_out": rate * 1000, "num_bundles": 1, "num_topics": 4, "score": score, "reason": "interval",
    })


def pulsar_events() -> list[tuple]:
    """A small Pulsar story: broker-1 leads, sheds B1 to broker-3, crashes; its session expires; broker-2 leads."""
    return [
        (0.0, "broker-1", "agent_started", {"agent_kind": "broker"}),
        (0.0, "broker-2", "agent_started", {"agent_kind": "broker"}),
        (0.0, "broker-3", "agent_started", {"agent_kind": "broker"}),
        (1.0, "broker-1", "leader_elected", {"previous": ""}),
        (5.0, "broker-1", "bundle_owned", {"bundle": B1, "via": "lookup"}),
        (5.0, "broker-2", "bundle_owned", {"bundle": B2, "via": "lookup"}),
        report(10.0, "broker-1", 80.0),
        report(10.0, "broker-2", 20.0),
        report(11.0, "broker-3", 5.0, rate=0.0),
        (60.0, "broker-1", "shedding_cycle", {"strategy": "ThresholdShedder", "brokers": 3, "unloads": 1, "skipped": ""}),
        (60.0, "broker-1", "unload_decided", {"bundle": B1, "source": "broker-1", "destination": "broker-3", "reason": "overloaded"}),
        (61.0, "broker-1", "bundle_unloaded", {"bundle": B1, "destination": "broker-3", "reason": "shedding", "topics": 4}),
        (62.0, "broker-3", "bundle_owned", {"bundle": B1, "via": "transfer"}),
        (63.0, "broker-2", "bundle_unloaded", {"bundle": B1, "destination": "", "reason": "shedding", "topics": 0}),
        report(70.0, "broker-1", 50.0),
        report(71.0, "broker-2", 30.0),
        (100.0, "broker-1", "agent_stopped", {"reason": "fault"}),
        report(120.0, "broker-2", 40.0, cpu=math.inf),
        (130.0, "metadata-store", "store_session_expired", {"session": "0x1", "owner": "broker-1", "silent_s": 30.0}),
        (130.0, "metadata-store", "leader_vacant", {"previous": "broker-1"}),
        (131.0, "broker-2", "leader_elected", {"previous": "broker-1"}),
        (140.0, "metadata-store", "store_session_expired", {"session": "0x3", "owner": "broker-3", "silent_s": 0.0}),
    ]


@pytest.fixture
def pulsar(tmp_path) -> Trace:
    return Trace(write_run(tmp_path / "run", pulsar_events(), until=150.0))


def test_select_by_kind_entity_window_and_predicate(pulsar):
    assert [e.t for e in pulsar.select("load_report")] == [10.0, 10.0, 11.0, 70.0, 71.0, 120.0]
    assert [e.t for e in pulsar.select("load_report", entity="broker-2")] == [10.0, 71.0, 120.0]
    # Both ends of the window are included; either may be open.
    assert [e.t for e in pulsar.select("load_report", within=(10.0, 70.0))] == [10.0, 10.0, 11.0, 70.0]
    assert [e.t for e in pulsar.select("load_report", within=(None, 10.0))] == [10.0, 10.0]
    assert [e.t for e in pulsar.select("load_report", within=(71.0, None))] == [71.0, 120.0]
    assert [e.agent for e in pulsar.select("load_report", where=lambda e: e.score >= 50)] == ["broker-1", "broker-1"]
    # Several kinds come back merged in canonical order; None is every kind.
    kinds = [e.kind for e in pulsar.select(("leader_vacant", "leader_elected"))]
    assert kinds == ["leader_elected", "leader_vacant", "leader_elected"]
    assert len(pulsar.select()) == len(pulsar) == len(pulsar_events())
    assert [e.kind for e in pulsar.select(within=(130.0, 130.0))] == ["store_session_expired", "leader_vacant"]
    assert pulsar.select("no_such_kind") == []


def test_entity_matches_agent_fields_and_globs(pulsar):
    # A bundle is an entity through the `bundle` field, whoever wrote the event.
    assert [(e.t, e.kind) for e in pulsar.select(entity=B1)] == [
        (5.0, "bundle_owned"), (60.0, "unload_decided"), (61.0, "bundle_unloaded"), (62.0, "bundle_owned"),
        (63.0, "bundle_unloaded"),
    ]
    # The store_session_expired names the broker as `owner`.
    assert [e.t for e in pulsar.select("store_session_expired", entity="broker-1")] == [130.0]
    assert pulsar.count("agent_started", entity="broker-*") == 3
    assert pulsar.count("agent_started", entity="broker-[12]") == 2
    ev = pulsar.first("store_session_expired")
    assert entity_of(ev) == "broker-1" and matches_entity(ev, "metadata-store")
    assert entity_of(pulsar.first("load_report")) == "broker-1"
    assert entity_of(pulsar.first("bundle_owned")) == B1


def test_first_last_count_and_times(pulsar):
    assert pulsar.first("leader_elected").agent == "broker-1"
    assert pulsar.last("leader_elected").agent == "broker-2"
    assert pulsar.first("leader_elected", within=(2, None)).t == 131.0
    assert pulsar.first("leader_elected", entity="broker-3") is None and pulsar.last("cpu_spike") is None
    assert pulsar.count("bundle_owned") == 3 and pulsar.count("bundle_owned", within=(6, 200)) == 1
    assert list(pulsar.times_of("load_report", entity="broker-1")) == [10.0, 70.0]
    assert pulsar.kinds["load_report"] == 6 and "cpu_spike" not in pulsar.kinds
    assert pulsar.end == 150.0
    with pytest.raises(TypeError, match="unknown filter"):
        pulsar.count("load_report", entitty="broker-1")
    with pytest.raises(TypeError, match="within must be"):
        pulsar.select("load_report", within=5)


def test_intervals_per_entity_and_by_field(pulsar):
    gaps = pulsar.intervals("load_report")
    assert [(g.entity, g.before.t, g.after.t, g.seconds) for g in gaps] == [
        ("broker-1", 10.0, 70.0, 60.0), ("broker-2", 10.0, 71.0, 61.0), ("broker-2", 71.0, 120.0, 49.0),
    ]
    assert [g.seconds for g in pulsar.intervals("load_report", entity="broker-2", within=(0, 100))] == [61.0]
    # Grouped by the `via` field instead of the bundle: the two lookups at t=5 form a zero interval.
    assert [(g.entity, g.seconds) for g in pulsar.intervals("bundle_owned", by="via")] == [("lookup", 0.0)]
    assert [g.seconds for g in pulsar.intervals("bundle_owned", by=lambda e: "all")] == [0.0, 57.0]


def test_leader_at_a_time(pulsar):
    assert pulsar.leader_at(0.5) is None
    assert pulsar.leader_at(1.0) == "broker-1"
    assert pulsar.leader_at(129.0) == "broker-1"  # crashed at 100, but the node lives until the session expires
    assert pulsar.leader_at(130.5) is None
    assert pulsar.leader_at(131.0) == "broker-2"
    assert pulsar.leader_changes() == [(1.0, "broker-1"), (130.0, None), (131.0, "broker-2")]


def test_frame_is_columnar_and_cached(pulsar):
    df = pulsar.frame("load_report")
    assert list(df["agent"]) == ["broker-1", "broker-2", "broker-3", "broker-1", "broker-2", "broker-2"]
    assert len(df) == 6 and {"t", "agent", "seq", "score", "msg_rate_in"} <= set(df.columns)
    assert list(df["t"]) == [10.0, 10.0, 11.0, 70.0, 71.0, 120.0]
    df.loc[0, "score"] = -1.0  # a copy: the cache is not changed by the caller
    assert pulsar.frame("load_report")["score"].iloc[0] == 80.0
    assert list(pulsar.frame("cpu_spike").columns) == ["t", "agent", "seq", "kind"]


def test_around_gives_context_in_canonical_order(pulsar):
    ev = pulsar.first("leader_vacant")
    ctx = pulsar.around(ev, before=2, after=1)
    assert [e.kind for e in ctx] == ["load_report", "store_session_expired", "leader_vacant", "leader_elected"]
    assert pulsar.around(pulsar.events[0], before=3, after=0) == [pulsar.events[0]]
    assert pulsar.positions("leader_elected") == [pulsar.position(e) for e in pulsar.select("leader_elected")]
    with pytest.raises(ValueError, match="not an event"):
        pulsar.position(next(open_run(pulsar.run.dir).events()))


def test_trace_of_loads_a_run_once(tmp_path):
    run = write_run(tmp_path / "r", [(0.0, "a", "agent_started", {"agent_kind": "x"})])
    assert trace_of(run) is trace_of(run)
    assert trace_of(trace_of(run)) is trace_of(run)
    assert trace_of(tmp_path / "r") is not trace_of(run) and len(trace_of(str(tmp_path / "r"))) == 1


def test_intervals_on_an_emulated_run_match_the_monitors_own_gaps(tmp_path):
    from clusteremu.emulator.testing import emulate_into

    trace = Trace(emulate_into("kernel-heartbeat", tmp_path / "hb", until=150))
    gaps = trace.intervals("heartbeat_received")
    assert {g.entity for g in gaps} == {f"member-{i}" for i in range(1, 6)}
    # The monitor computes gap_s since the member's previous heartbeat: exactly the per-entity interval.
    assert all(g.seconds == pytest.approx(g.after.gap_s, abs=1e-9) for g in gaps)
    longest = max(gaps, key=lambda g: g.seconds)
    assert longest.entity == "member-2" and 15.0 < longest.seconds < 17.5
    assert trace.count("heartbeat_received", entity="member-2") == trace.count("heartbeat_sent", entity="member-2")
