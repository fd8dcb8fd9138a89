"""Heartbeat members are JVM agents: their collections come from the kernel's JVM module, and they take the JVM
fault kinds (``gc_storm``) like any other JVM model."""
from __future__ import annotations

import pytest

from clusteremu.base.errors import InputError
from clusteremu.emulator.runner import execute
from clusteremu.emulator.trace import open_run
from clusteremu.scenarios.loader import load_scenario

STORM = ['faults.0={kind="gc_storm", at=100.0, duration_s=60.0, every_s=3.0, pause_s=4.0, agents=["member-3"]}',
         "scenario.duration_s=300"]


def test_a_gc_storm_on_a_member_pauses_it_and_expires_its_session(tmp_path):
    r = execute(load_scenario("kernel-heartbeat", STORM), tmp_path / "storm", seed=3)
    events = list(open_run(r.run_dir).events(["stw_pause", "session_expired"]))
    storm = [e for e in events if e.kind == "stw_pause" and e.cause == "gc_storm"]
    assert storm and all(e.agent == "member-3" and 100.0 <= e.t < 160.0 for e in storm)
    assert {e.cause for e in events if e.kind == "stw_pause"} == {"gc_storm", "gc-young"}
    assert any(e.kind == "session_expired" and e.member == "member-3" for e in events)


def test_a_gc_storm_needs_its_pause_length():
    with pytest.raises(InputError, match="pause_s"):
        load_scenario("kernel-heartbeat", ['faults.0={kind="gc_storm", at=1.0, duration_s=6.0, every_s=3.0, '
                                           'agents=["member-3"]}'])
