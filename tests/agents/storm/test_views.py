"""Storm's trace views answer from the events alone."""
from __future__ import annotations

import pytest


def test_leader_and_live_supervisors_over_a_failover_and_a_crash(storm_run):
    fo = storm_run("storm-nimbus-failover")
    v = fo.views
    first = fo.first("nimbus_leader_elected")
    vacant = fo.first("leader_vacant")
    second = fo.first("nimbus_leader_elected", within=(vacant.t, None))
    assert v.leader_at(100.0) == first.agent
    assert v.leader_at(151.0) is None and v.leader_at(second.t) == second.agent
    assert v.alive_supervisors_at(5.0) == frozenset()
    assert len(v.alive_supervisors_at(300.0)) == 8
    sf = storm_run("storm-supervisor-failure").views
    assert "supervisor-3" not in sf.alive_supervisors_at(400.0) and "supervisor-3" in sf.alive_supervisors_at(560.0)


def test_workers_time_to_schedule_and_evictions(storm_run):
    tr = storm_run("storm-eviction-2x")
    v = tr.views
    tts = v.time_to_schedule()
    assert len(tts) == 5 and all(s is not None and 0 < s <= 10.5 for s in tts.values())
    victims = {e.topology for e in tr.select("topology_evicted") if not e.rolled_back}
    assert v.evictions_by_user() == {"batch": len(victims)}
    for tid in victims:
        assert v.workers_at(tid, 170.0) and v.workers_at(tid, 300.0) == [] and v.workers_at(tid, 700.0)
    payments = next(t for t in tts if t.startswith("payments"))
    assert v.workers_at(payments, 700.0) == []  # removed at 630 s
    failures = v.scheduling_failures()
    assert {t for _, t, _ in failures} == victims
    assert all(180.0 <= at < 640.0 and status.startswith("Not enough resources") for at, _, status in failures)
    cpu = sum(w["cpu"] for w in v.workers_at(payments, 300.0))
    assert cpu == pytest.approx(12 * 50.0)
