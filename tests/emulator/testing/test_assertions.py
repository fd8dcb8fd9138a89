"""Timing assertions: each passes where the behaviour holds and fails, naming the events, where it does not."""
from __future__ import annotations

import math
import re

import pytest

from clusteremu.emulator.testing import (
    Trace,
    assert_always,
    assert_before,
    assert_count,
    assert_eventually,
    assert_interval,
    assert_never,
    write_run,
)

BUNDLE = "ns/0x00000000_0x40000000"


def report(t: float, broker: str, cpu: float) -> tuple:
    return (t, broker, "load_report", {"cpu": cpu, "score": cpu, "msg_rate_in": 1.0, "msg_rate_out": 1.0})


STORY = [
    (0.0, "broker-1", "agent_started", {"agent_kind": "broker"}),
    (0.0, "broker-2", "agent_started", {"agent_kind": "broker"}),
    (1.0, "broker-1", "leader_elected", {"previous": ""}),
    (2.0, "broker-1", "bundle_owned", {"bundle": BUNDLE, "via": "lookup"}),
    report(10.0, "broker-1", 50.0),
    report(10.0, "broker-2", 10.0),
    (60.0, "broker-1", "shedding_cycle", {"strategy": "AvgShedder", "brokers": 2, "unloads": 1, "skipped": ""}),
    (61.0, "broker-1", "bundle_unloaded", {"bundle": BUNDLE, "destination": "broker-2", "reason": "shedding", "topics": 3}),
    (61.5, "broker-2", "bundle_owned", {"bundle": BUNDLE, "via": "transfer"}),
    report(70.0, "broker-1", 30.0),
    report(71.0, "broker-2", 25.0),
    (90.0, "broker-2", "bundle_unloaded", {"bundle": BUNDLE, "destination": "broker-1", "reason": "shedding", "topics": 3}),
    (100.0, "broker-1", "agent_stopped", {"reason": "fault"}),
    report(120.0, "broker-2", math.inf),
    (130.0, "metadata-store", "leader_vacant", {"previous": "broker-1"}),
    (131.0, "broker-2", "leader_elected", {"previous": "broker-1"}),
    report(131.0, "broker-2", 40.0),
    (140.0, "broker-2", "shedding_cycle", {"strategy": "AvgShedder", "brokers": 1, "unloads": 0, "skipped": "too few brokers"}),
]


@pytest.fixture
def run(tmp_path):
    return write_run(tmp_path / "run", STORY, until=150.0)


def message(excinfo: pytest.ExceptionInfo) -> str:
    return str(excinfo.value)


# -- assert_count ---------------------------------------------------------------------------------------------
def test_assert_count_passes_and_returns_the_events(run):
    found = assert_count(run, "bundle_unloaded", at_most=1, within=(0, 80))
    assert [e.t for e in found] == [61.0]
    assert_count(run, "bundle_unloaded", exactly=2)
    assert_count(run, "load_report", at_least=3, at_most=4, entity="broker-2")
    assert_count(run, ("leader_elected", "leader_vacant"), exactly=3)


def test_assert_count_fails_naming_the_events_beyond_the_limit(run):
    with pytest.raises(AssertionError) as exc:
        assert_count(run, "bundle_unloaded", at_most=1, within=(0, 30 * 60))
    msg = message(exc)
    assert msg.startswith("expected at most 1 bundle_unloaded (within [0, 1800] s), found 2:")
    assert re.search(r">>  t=90\.000000  broker-2  bundle_unloaded .*<-- #2, beyond the 1 allowed", msg)
    # Context around it, unmarked.
    assert "      t=71.000000  broker-2  load_report" in msg and "      t=100.000000  broker-1  agent_stopped" in msg


def test_assert_count_fails_when_too_few_and_says_what_the_trace_has(run):
    with pytest.raises(AssertionError) as exc:
        assert_count(run, "leader_elected", at_least=1, entity="broker-3")
    assert "expected at least 1 leader_elected (entity=broker-3), found 0" in message(exc)
    assert "leader_elected×2" in message(exc)
    with pytest.raises(AssertionError, match=r"(?s)expected exactly 3 load_report .*found 2:\n.*>>  t=10\.000000  broker-2"):
        assert_count(run, "load_report", exactly=3, within=(0, 60))
    with pytest.raises(TypeError):
        assert_count(run, "load_report")


# -- assert_never / assert_always -----------------------------------------------------------------------------
def test_assert_never_passes_when_nothing_matches(run):
    assert_never(run, "load_report", where=lambda e: not math.isfinite(e.cpu), within=(0, 119))
    assert_never(run, "bundle_unloaded", entity="broker-3")


def test_assert_never_fails_showing_the_offending_event_and_its_neighbours(run):
    with pytest.raises(AssertionError) as exc:
        assert_never(run, "load_report", where=lambda e: not math.isfinite(e.cpu))
    msg = message(exc)
    assert msg.startswith("expected no load_report (where <lambda> (test_assertions.py:")
    assert "found 1:" in msg
    assert ">>  t=120.000000  broker-2  load_report  cpu=inf, score=inf" in msg
    assert "      t=100.000000  broker-1  agent_stopped  reason='fault'" in msg
    assert "      t=130.000000  metadata-store  leader_vacant  previous='broker-1'" in msg


def test_assert_always_passes_and_fails_naming_the_violations(run):
    assert_always(run, "load_report", lambda e: e.cpu >= 10, entity="broker-2")
    with pytest.raises(AssertionError) as exc:
        assert_always(run, "load_report", lambda e: e.cpu <= 40)
    msg = message(exc)
    assert "expected every load_report to satisfy <lambda>" in msg and "2 of 6 do not:" in msg
    assert re.search(r">>  t=10\.000000  broker-1  load_report  cpu=50.*<-- fails <lambda>", msg)
    assert ">>  t=120.000000  broker-2  load_report  cpu=inf" in msg


def test_assert_always_refuses_an_empty_selection_unless_allowed(run):
    with pytest.raises(AssertionError, match="but there is none"):
        assert_always(run, "load_report", lambda e: True, entity="broker-9")
    assert assert_always(run, "load_report", lambda e: False, entity="broker-9", allow_empty=True) == []


# -- assert_eventually ----------------------------------------------------------------------------------------
def test_assert_eventually_after_a_kind_passes_for_every_trigger(run):
    (elected,) = assert_eventually(run, "leader_elected", within=35, after="agent_stopped")
    assert elected.agent == "broker-2" and elected.t == 131.0
    assert_eventually(run, "shedding_cycle", within=10, after=lambda e: e.kind == "leader_elected" and e.agent == "broker-2")
    (owned,) = assert_eventually(run, "bundle_owned", within=1, after=lambda e: e.kind == "bundle_unloaded" and e.t < 80,
                                 same_entity=True)
    assert (owned.agent, owned.t) == ("broker-2", 61.5)


def test_assert_eventually_fails_with_the_trigger_the_deadline_and_the_late_response(run):
    with pytest.raises(AssertionError) as exc:
        assert_eventually(run, "leader_elected", within=20, after="agent_stopped")
    msg = message(exc)
    assert msg.startswith("expected leader_elected within 20 s after every agent_stopped; 1 of 1 trigger(s) had none:")
    assert re.search(
        r">>  t=100\.000000  broker-1  agent_stopped  reason='fault'    <-- next leader_elected at t=131\.000000, "
        r"31 s later \(deadline t=120\.000000\)",
        msg,
    )


def test_assert_eventually_checks_each_occurrence_of_the_trigger(run):
    # The first unload is followed by an ownership of the bundle, the second (t=90) by none.
    with pytest.raises(AssertionError) as exc:
        assert_eventually(run, "bundle_owned", within=5, after="bundle_unloaded", same_entity=True)
    msg = message(exc)
    assert "1 of 2 trigger(s) had none" in msg
    assert ">>  t=90.000000  broker-2  bundle_unloaded" in msg and "none after it (deadline t=95.000000)" in msg
    assert ">>  t=61.000000" not in msg


def test_assert_eventually_when_the_run_ends_before_the_deadline(run):
    with pytest.raises(AssertionError, match=r"none by the end of the run at t=150, before the deadline t=160"):
        assert_eventually(run, "leader_elected", within=20, after=lambda e: e.kind == "shedding_cycle" and e.t > 139)


def test_assert_eventually_from_the_start_and_without_triggers(run):
    (first,) = assert_eventually(run, "leader_elected", within=5)
    assert first.t == 1.0
    with pytest.raises(AssertionError, match=r"expected load_report within 5 s of the start of the run; the first came at t=10"):
        assert_eventually(run, "load_report", within=5)
    with pytest.raises(AssertionError, match="the trigger stw_pause never occurs"):
        assert_eventually(run, "leader_elected", within=5, after="stw_pause")
    assert assert_eventually(run, "leader_elected", within=5, after="stw_pause", require_trigger=False) == []


# -- assert_interval ------------------------------------------------------------------------------------------
def test_assert_interval_passes_per_entity(run):
    gaps = assert_interval(run, "load_report", entity="broker-2", at_least=10, at_most=70)
    assert [g.seconds for g in gaps] == [61.0, 49.0, 11.0]
    assert_interval(run, "load_report", at_least=11, at_most=61)


def test_assert_interval_fails_naming_both_events_of_each_bad_interval(run):
    with pytest.raises(AssertionError) as exc:
        assert_interval(run, "load_report", entity="broker-2", at_most=50)
    msg = message(exc)
    assert msg.startswith("expected intervals between successive load_report (entity=broker-2) <= 50 s; 1 of 3 are not")
    assert "(observed 11 .. 61 s)" in msg
    assert ">>  t=71.000000  broker-2  load_report  cpu=25" in msg
    assert "<-- 61 s after the previous one of broker-2 at t=10.000000" in msg
    with pytest.raises(AssertionError, match=r"1 of 4 are not.*\n(.*\n)*.*t=131\.000000  broker-2  load_report.*11 s after"):
        assert_interval(run, "load_report", at_least=12)


def test_assert_interval_needs_an_interval(run):
    with pytest.raises(AssertionError, match="so no interval"):
        assert_interval(run, "leader_vacant", at_most=1)


# -- assert_before --------------------------------------------------------------------------------------------
def test_assert_before_passes_and_fails(run):
    a, b = assert_before(run, "leader_elected", "shedding_cycle")
    assert (a.t, b.t) == (1.0, 60.0)
    with pytest.raises(AssertionError) as exc:
        assert_before(run, "shedding_cycle", "bundle_owned")
    msg = message(exc)
    assert msg.startswith("expected shedding_cycle before bundle_owned, but the first bundle_owned comes first:")
    assert ">>  t=2.000000  broker-1  bundle_owned" in msg and "<-- first bundle_owned" in msg
    assert ">>  t=60.000000  broker-1  shedding_cycle" in msg


def test_assert_before_per_entity(run):
    assert_before(run, "agent_started", "load_report", same_entity=True)
    with pytest.raises(AssertionError) as exc:
        assert_before(run, "leader_elected", "load_report", same_entity=True)
    msg = message(exc)
    assert "for the same entity; 1 entity not:" in msg
    assert ">>  t=10.000000  broker-2  load_report" in msg and "no leader_elected of broker-2 before it (first at t=131" in msg
    with pytest.raises(AssertionError, match="there is no stw_pause"):
        assert_before(run, "stw_pause", "load_report")


# -- guards ---------------------------------------------------------------------------------------------------
def test_an_unknown_kind_is_refused_rather_than_matching_nothing(run):
    with pytest.raises(ValueError, match="unknown event kind 'broker_crashed'"):
        assert_never(run, "broker_crashed")
    # A declared kind that does not occur is fine.
    assert_never(run, "stw_pause")


def test_an_incomplete_run_is_refused_unless_partial_traces_are_allowed(tmp_path):
    run = write_run(tmp_path / "r", STORY[:4], complete=False)
    with pytest.raises(AssertionError, match="is incomplete"):
        assert_never(run, "agent_stopped")
    assert_never(Trace(run, allow_partial=True), "agent_stopped")


def test_a_long_failure_shows_the_first_events_and_counts_the_rest(tmp_path):
    events = [(float(i * 100), "m", "stw_pause", {"duration_s": 1.0, "cause": "gc"}) for i in range(12)]
    run = write_run(tmp_path / "r", events)
    with pytest.raises(AssertionError) as exc:
        assert_never(run, "stw_pause", where=lambda e: e.t >= 200)
    msg = message(exc)
    assert "found 10:" in msg and msg.count(">>") == 8  # five shown, with neighbours that also offend
    assert msg.rstrip().endswith("... and 2 more at: t=1000.000000, t=1100.000000")


def test_assertions_on_an_emulated_run_accept_the_run_a_path_or_a_trace(emulate):
    run = emulate("kernel-heartbeat", seed=1, until=160)  # the exact times below are seed 1's
    for target in (run, run.dir, str(run.dir), Trace(run)):
        assert_count(target, "session_expired", exactly=1, entity="member-2")
    assert_eventually(run, "session_restored", after="session_expired", same_entity=True, within=10)
    with pytest.raises(AssertionError) as exc:
        assert_count(run, "session_expired", exactly=0)
    assert re.search(r">>  t=129\.000000  monitor  session_expired  member='member-2', silent_s=10\.\d+", message(exc))


def test_a_hand_made_record_written_in_rows_is_an_event_a_row_to_the_assertions(tmp_path):
    from clusteremu.emulator.trace.kinds import ROWS_KEY

    sample = {"max_offset": 100.0, ROWS_KEY: {"group": ["G", "G", "G"], "queue": ["T/b/0", "T/b/1", "T/b/2"],
                                             "committed": [90.0, 100.0, -1.0], "lag": [10.0, 0.0, -1.0]}}
    run = write_run(tmp_path / "r", [(60.0, "broker-b", "queue_stats", sample)])
    assert run.manifest["events"]["count"] == 1 and run.manifest["events"]["rows"] == 3
    assert_count(run, "queue_stats", exactly=3)
    assert_count(run, "queue_stats", exactly=1, where=lambda e: e.lag < 0)
    with pytest.raises(AssertionError, match="T/b/0"):
        assert_never(run, "queue_stats", where=lambda e: e.lag > 5)
