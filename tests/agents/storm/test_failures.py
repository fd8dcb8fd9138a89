"""Supervisor failures and rescheduling; a Nimbus failover during submissions; GC pauses on Nimbus's timer."""
from __future__ import annotations

import pytest

from clusteremu.emulator.testing import assert_count, assert_never

FAILURE = "storm-supervisor-failure"
FAILOVER = "storm-nimbus-failover"


def test_a_crashed_supervisor_is_declared_dead_after_its_session_and_its_executors_are_placed_again(storm_run):
    tr = storm_run(FAILURE)
    dead = tr.first("supervisor_dead", where=lambda e: e.supervisor == "supervisor-3")
    assert dead is not None and dead.cause == "node_deleted"
    # storm.zookeeper.session.timeout (20 s) after its last heartbeat write (every 5 s), at a 2 s ZooKeeper tick,
    # then up to one 10 s round
    assert 300.0 + 15.0 <= dead.t <= 300.0 + 20.0 + 2.0 + 10.5
    assert 15.0 <= dead.silent_s <= 20.0 + 2.0 + 10.5 + 5.0
    lost = [e for e in tr.select("assignment_changed") if e.reason == "supervisor_lost" and e.t == dead.t]
    assert lost and all(e.assigned_after == e.executors for e in lost)
    assert all(w["supervisor"] != "supervisor-3" for e in lost for w in e.workers)
    before = [e for e in tr.select("assignment_changed", within=(0, 299))
              if any(w["supervisor"] == "supervisor-3" for w in e.workers)]
    assert {e.topology for e in lost} == {e.topology for e in before}


def test_the_restarted_supervisor_comes_back_and_every_topology_stays_scheduled(storm_run):
    tr = storm_run(FAILURE)
    back = tr.first("supervisor_alive", where=lambda e: e.supervisor == "supervisor-3" and e.cause == "registered")
    assert back is not None and 540.0 <= back.t <= 551.0
    rounds = list(tr.select("scheduling_round", within=(60, None)))
    assert all(r.topologies_fully_scheduled == 8 for r in rounds)
    assert all(r.supervisors == 7 for r in rounds if 321 <= r.t < back.t)


def test_a_pause_longer_than_the_session_kills_the_paused_supervisors_workers_after_it_returns(storm_run):
    tr = storm_run(FAILURE)
    dead = tr.first("supervisor_dead", where=lambda e: e.supervisor == "supervisor-6")
    assert dead is not None and 720.0 + 15.0 <= dead.t <= 720.0 + 20.0 + 2.0 + 10.5
    again = tr.first("supervisor_registered",
                     where=lambda e: e.agent == "supervisor-6" and e.cause == "session_expired")
    assert again is not None and again.t >= 760.0
    killed = [e for e in tr.select("worker_killed") if e.agent == "supervisor-6"]
    assert killed and all(e.reason == "unassigned" and e.t >= 760.0 for e in killed)


def test_the_leader_nimbus_fails_over_and_no_submission_is_lost(storm_run):
    tr = storm_run(FAILOVER)
    first = tr.first("nimbus_leader_elected")
    vacant = tr.first("leader_vacant")
    assert vacant is not None and vacant.previous == first.agent
    assert 150.0 + 20.0 - 7.0 <= vacant.t <= 150.0 + 20.0 + 2.0  # a ping up to a third of the timeout before
    second = tr.first("nimbus_leader_elected", within=(vacant.t, None))
    assert second is not None and second.agent != first.agent and second.t - vacant.t < 0.1
    names = [e.topology_name for e in tr.select("topology_submitted")]
    assert len(names) == len(set(names)) == 16
    assert any(e.result in ("timeout", "not_leader") for e in tr.select("topology_request"))
    last = tr.last("scheduling_round")
    assert last.agent == second.agent and last.topologies_fully_scheduled == 16
    assert_never(tr, "worker_killed")
    assert_never(tr, "assignment_changed", where=lambda e: e.reason != "scheduled")
    assert_never(tr, "scheduling_round", within=(150.0, vacant.t))  # no leader schedules in between


def test_fixed_rate_timers_run_the_missed_tasks_back_to_back_after_a_pause(storm_run):
    # a 19 s pause of Nimbus over the rounds due at 110 s and 120 s (a long session, so it keeps leading), and a
    # 12 s pause of supervisor-1 over two of its 5 s heartbeats (shorter than nimbus.supervisor.timeout.secs)
    pause = ('faults=[{kind="pause", at=105.0, duration_s=19.0, agents=["nimbus-*"]}, '
             '{kind="pause", at=100.5, duration_s=12.0, agents=["supervisor-1"]}]')
    session = 'config={"storm.zookeeper.session.timeout" = 60000}'
    for mode, burst in (("fixed_rate", 2), ("fixed_delay", 1)):
        tr = storm_run("storm-steady-multi-user", pause, session, f'cluster.timer_mode="{mode}"',
                       "scenario.duration_s=200")
        at_end = [r for r in tr.select("scheduling_round") if 124.0 <= r.t < 124.1]
        assert len(at_end) == burst, mode
        assert_never(tr, "scheduling_round", within=(105.1, 123.9))
        assert_count(tr, "nimbus_leader_elected", exactly=1)
        nxt = tr.first("scheduling_round", within=(124.1, None))
        # a round first reads the supervisors' heartbeats from ZooKeeper (a millisecond or two)
        if mode == "fixed_rate":
            assert nxt.t == pytest.approx(130.0, abs=0.01)
        else:
            assert nxt.t == pytest.approx(134.0, abs=0.1)
        # (supervisor-1's heartbeats that only say "still alive" are not traced: its pause shows in Nimbus's view only)
        assert_never(tr, "supervisor_dead")


def test_a_rebalance_places_the_topology_afresh_on_the_returned_supervisor(storm_run):
    tr = storm_run(FAILURE)
    asked = [e for e in tr.select("topology_rebalancing")]
    assert [e.topology_name for e in asked] == ["clicks-1", "clicks-2", "clicks-3", "clicks-4"]
    rounds = [r for r in tr.select("scheduling_round") if r.rebalance]
    assert [r.rebalance for r in rounds] == [e.topology for e in asked]
    assert all(r.t == pytest.approx(e.t + 5.0, abs=0.01) and r.topologies_fully_scheduled == 8 for r, e in zip(rounds, asked))
    # supervisor-3 came back at 540 s with nothing on it; the first rebalance fills it
    assert all(w["supervisor"] != "supervisor-3" for e in tr.select("assignment_changed", within=(321, 604))
               for w in e.workers)
    moved = tr.first("assignment_changed", where=lambda e: e.reason == "rebalanced")
    assert moved.topology == asked[0].topology and moved.t == rounds[0].t
    assert {w["supervisor"] for w in moved.workers} == {"supervisor-3"} and moved.moved == moved.executors
    killed = [e for e in tr.select("worker_killed", within=(moved.t, moved.t + 1)) if e.topology == moved.topology]
    launched = [e for e in tr.select("worker_launched", within=(moved.t, moved.t + 10)) if e.topology == moved.topology]
    assert killed and {e.agent for e in launched} == {"supervisor-3"}


def test_with_a_long_session_the_supervisor_timeout_declares_a_silent_supervisor_dead(storm_run):
    # storm.zookeeper.session.timeout (120 s) > nimbus.supervisor.timeout.secs (60 s): the crashed supervisor's node
    # outlives its heartbeats, and Nimbus's own timeout declares it dead
    tr = storm_run(FAILURE, 'config={"storm.zookeeper.session.timeout" = 120000}')
    dead = tr.first("supervisor_dead", where=lambda e: e.supervisor == "supervisor-3")
    assert dead.cause == "heartbeat_timeout"
    assert 60.0 < dead.silent_s <= 60.0 + 10.5 and 300.0 + 55.0 <= dead.t <= 300.0 + 60.0 + 10.5
    lost = [e for e in tr.select("assignment_changed") if e.reason == "supervisor_lost"]
    assert lost and all(e.t == dead.t for e in lost)
    assert_never(tr, "store_session_expired", within=(300.0, dead.t))


def test_a_leader_paused_past_its_session_is_replaced_and_schedules_no_more(storm_run):
    leader = storm_run(FAILOVER).first("nimbus_leader_elected").agent
    tr = storm_run(FAILOVER, f'faults=[{{kind="pause", at=150.0, duration_s=30.0, agents=["{leader}"]}}]')
    vacant = tr.first("leader_vacant")
    assert vacant.previous == leader and 163.0 <= vacant.t <= 172.0
    new = tr.first("nimbus_leader_elected", within=(vacant.t, None))
    assert new.agent != leader
    # the notifications held during the pause reach the old leader before its overdue timer task: it learns that
    # it lost the latch and never runs a round again (no split brain)
    lost = tr.first("nimbus_leadership_lost", entity=leader)
    assert lost is not None and lost.t == pytest.approx(180.0)
    assert_never(tr, "scheduling_round", entity=leader, within=(150.0, None))
    assert tr.last("scheduling_round").agent == new.agent and tr.last("scheduling_round").topologies_fully_scheduled == 16


def test_a_supervisor_that_misses_the_push_of_its_assignments_catches_up_at_its_next_sync(storm_run):
    drop = ('faults=[{kind="drop", at=25.0, duration_s=40.0, probability=1.0, between=[["nimbus-*"], '
            '["supervisor-*"]], label="pushes lost"}]')
    tr = storm_run("storm-steady-multi-user", drop, "scenario.duration_s=200")
    lost = [e for e in tr.select("message_dropped") if e.msg_kind == "assignments"]
    assert lost
    for change in tr.select("assignment_changed", within=(25.0, 65.0)):
        for w in change.workers:
            up = tr.first("worker_launched", entity=w["supervisor"],
                          where=lambda e, w=w, c=change: e.topology == c.topology and e.port == w["port"])
            # not at once (push + 2 s launch) but after the supervisor's next read of ZooKeeper (every 10 s)
            assert up is not None and change.t + 2.0 < up.t <= change.t + 10.0 + 2.0 + 0.1
    assigned = {(w["supervisor"], w["port"]) for e in tr.select("assignment_changed") for w in e.workers}
    assert {(e.agent, e.port) for e in tr.select("worker_launched")} == assigned


def test_a_supervisor_silent_past_the_timeout_but_not_its_session_comes_back_as_heartbeat_resumed(storm_run):
    tr = storm_run(FAILURE, 'config={"storm.zookeeper.session.timeout" = 120000}',
                   'faults=[{kind="pause", at=400.0, duration_s=75.0, agents=["supervisor-6"]}]')
    dead = tr.first("supervisor_dead", where=lambda e: e.supervisor == "supervisor-6")
    assert dead.cause == "heartbeat_timeout" and 460.0 < dead.t <= 475.0
    back = tr.first("supervisor_alive", where=lambda e: e.supervisor == "supervisor-6" and e.t > dead.t)
    assert back.cause == "heartbeat_resumed" and 475.0 <= back.t <= 485.5
    # its workers were placed elsewhere while it was dead; back, it learns it and kills them
    killed = [e for e in tr.select("worker_killed") if e.agent == "supervisor-6"]
    assert killed and all(e.t >= 475.0 for e in killed)
    assert_never(tr, "supervisor_registered", where=lambda e: e.cause == "session_expired")


PARTITION = ('faults=[{kind="partition", at=300.0, duration_s=40.0, between=[["supervisor-2"], ["zookeeper"]], '
             'label="supervisor-2 cut off from ZooKeeper"}]')


def test_a_supervisor_cut_off_from_zookeeper_past_its_session_is_dead_then_registers_again(storm_run):
    # its heartbeats and session pings stop reaching ZooKeeper at 300 s: the session expires 20 s after the last
    # one that got through (storm.zookeeper.session.timeout), at a 2 s tick; Nimbus sees the node gone at its next
    # round; when the partition ends the supervisor's next keep-alive learns of the expiry and it registers again
    tr = storm_run("storm-steady-multi-user", PARTITION, "scenario.duration_s=420")
    expired = tr.first("store_session_expired", where=lambda e: e.owner == "supervisor-2")
    assert expired is not None and 300.0 + 20.0 - 5.0 <= expired.t <= 300.0 + 20.0 + 2.0
    dead = tr.first("supervisor_dead", where=lambda e: e.supervisor == "supervisor-2")
    assert dead.cause == "node_deleted" and expired.t <= dead.t <= expired.t + 10.5
    again = tr.first("supervisor_registered", where=lambda e: e.agent == "supervisor-2" and e.t > 300.0)
    assert again.cause == "session_expired" and 340.0 <= again.t <= 340.0 + 20.0 / 3.0 + 0.1
    back = tr.first("supervisor_alive", where=lambda e: e.supervisor == "supervisor-2" and e.t > dead.t)
    assert back is not None and back.t <= again.t + 10.5
    # the keep-alives that the partition lost are real messages, dropped by the network while it lasts only
    lost = [e for e in tr.select("message_dropped") if e.src == "supervisor-2"]
    assert lost and all(300.0 <= e.t < 340.0 for e in lost)


def test_keep_alives_lost_at_random_for_a_while_do_not_expire_a_supervisor(storm_run):
    drop = ('faults=[{kind="drop", at=300.0, duration_s=60.0, probability=0.3, between=[["supervisor-*"], '
            '["zookeeper"]], label="a lossy switch"}]')
    tr = storm_run("storm-steady-multi-user", drop, "scenario.duration_s=420")
    lost = list(tr.select("message_dropped"))
    assert lost and all(300.0 <= e.t < 360.0 for e in lost)
    assert_never(tr, "store_session_expired")
    assert_never(tr, "supervisor_dead")
