"""Pulsar's trace views (``trace.views`` of a Pulsar run): ownership and the load reports in force at a time."""
from __future__ import annotations

import math

import pytest

from clusteremu.emulator.testing.traces import write_run
from clusteremu.emulator.trace.query import Trace

from ...emulator.trace.test_query import B1, B2, pulsar_events


@pytest.fixture
def pulsar(tmp_path) -> Trace:
    return Trace(write_run(tmp_path / "run", pulsar_events(), until=150.0, model="pulsar"))


def test_ownership_at_a_time(pulsar):
    assert pulsar.views.owner_at(B1, 4.9) is None
    assert pulsar.views.owner_at(B1, 5.0) == "broker-1"
    assert pulsar.views.owner_at(B1, 61.0) is None  # released, not yet taken
    assert pulsar.views.owner_at(B1, 62.0) == "broker-3"
    # broker-2 "unloading" a bundle it does not own changes nothing.
    assert pulsar.views.owner_at(B1, 63.0) == "broker-3"
    # broker-3 loses B1 when the store expires its session (its ownership node is ephemeral).
    assert pulsar.views.owner_at(B1, 139.9) == "broker-3" and pulsar.views.owner_at(B1, 140.0) is None
    assert pulsar.views.owners_at(64.0) == {B1: "broker-3", B2: "broker-2"}
    assert pulsar.views.owners_at(150.0) == {B2: "broker-2"}
    assert pulsar.views.ownership_changes(B1) == [(5.0, "broker-1"), (61.0, None), (62.0, "broker-3"), (140.0, None)]
    assert pulsar.views.owner_at("ns/unknown", 50.0) is None



def test_a_crashed_owner_keeps_its_bundles_until_its_session_expires(tmp_path):
    trace = Trace(write_run(tmp_path / "r", [
        (1.0, "broker-1", "bundle_owned", {"bundle": "b", "via": "lookup"}),
        (10.0, "broker-1", "agent_stopped", {"reason": "fault"}),
        (40.0, "metadata-store", "store_session_expired", {"session": "s", "owner": "broker-1", "silent_s": 30.0}),
    ], model="pulsar"))
    assert trace.views.owner_at("b", 39.0) == "broker-1"
    assert trace.views.owner_at("b", 40.0) is None



def test_last_report_and_reports_at(pulsar):
    assert pulsar.views.last_report("broker-1", 9.0) is None
    assert pulsar.views.last_report("broker-1", 10.0).score == 80.0
    assert pulsar.views.last_report("broker-1", 1000.0).score == 50.0
    assert math.isinf(pulsar.views.last_report("broker-2", 120.0).cpu)
    latest = pulsar.views.reports_at(71.0)
    assert {b: e.score for b, e in latest.items()} == {"broker-1": 50.0, "broker-2": 30.0, "broker-3": 5.0}


