"""The built-in RocketMQ scenarios do what their ``expect`` says, checked from their traces."""
from __future__ import annotations

import pytest

from clusteremu.agents.rocketmq.views import RocketMQViews
from clusteremu.emulator.testing import assert_count, assert_never
from clusteremu.emulator.trace.query import Trace
from clusteremu.tools.analysis.rocketmq import run_figures


@pytest.mark.parametrize("strategy", ["averagely", "circle", "consistent-hash"])
def test_more_consumers_than_queues_leaves_the_extra_ones_idle(emulate, strategy):
    run = emulate(f"rocketmq-more-consumers-{strategy}", until=330)
    v = RocketMQViews(Trace(run))
    at = 290.0
    held = v.allocation_at(at)
    assert held == {q: v.holders_at(q, at) for q in v.queues()}  # the one pass gives what the per-queue reads do
    assert all(len(h) == 1 for h in held.values()), held
    holders = {h[0] for h in held.values()}
    if strategy != "consistent-hash":  # the hash ring may give one client two queues and leave more idle
        assert len(holders) == 16
    # consumer-1 leaves at 300 s: every queue has one holder again within a second.
    after = v.allocation_at(301.0)
    assert all(len(h) == 1 and h != ["consumer-1"] for h in after.values()), after


def test_a_slow_consumer_keeps_its_queues_and_falls_behind(emulate):
    run = emulate("rocketmq-slow-consumer-averagely", until=700)
    trace = Trace(run)
    assert_never(run, "queue_taken", within=(10.0, None))
    v = RocketMQViews(trace)
    mine = {q for q in v.queues() if v.holders_at(q, 290.0) == ["consumer-2"]}
    assert len(mine) == 4
    lag = {t: sum(e.lag for e in trace.select("queue_stats", within=(t, t), where=lambda e: e.queue in mine))
           for t in (300.0, 450.0, 600.0, 700.0)}
    # 4 queues x 100 msg/s in, 100 msg/s out: the backlog grows by 300 msg/s, then shrinks at 600 msg/s.
    assert lag[300.0] < 4000
    assert 0.9 * 300 * 150 < lag[450.0] - lag[300.0] < 1.1 * 300 * 150
    assert 0.9 * 300 * 300 < lag[600.0] - lag[300.0] < 1.1 * 300 * 300
    assert lag[700.0] < lag[600.0] - 0.9 * 600 * 100


def test_a_rolling_restart_gives_every_consumer_a_new_client_id(emulate):
    run = emulate("rocketmq-rolling-restart-averagely", until=600)
    trace = Trace(run)
    (done,) = assert_count(run, "group_rolling_restart_done", exactly=1)
    assert done.consumers == 4
    for c in ("consumer-1", "consumer-2", "consumer-3", "consumer-4"):
        starts = trace.select("consumer_started", where=lambda e, c=c: e.agent == c)
        assert [e.incarnation for e in starts] == [1, 2]
        assert starts[0].cid != starts[1].cid
    stops = assert_count(run, "consumer_stopping", exactly=4)
    assert [e.agent for e in stops] == ["consumer-1", "consumer-2", "consumer-3", "consumer-4"]
    assert_never(run, "channel_expired")
    # Every queue is held by exactly one consumer once the restart is over.
    v = RocketMQViews(trace)
    assert all(len(v.holders_at(q, done.t + 5.0)) == 1 for q in v.queues())


def test_machine_room_nearby_keeps_queues_in_their_room_until_the_room_is_lost(emulate):
    run = emulate("rocketmq-nearby-room-loss", until=600)
    trace = Trace(run)
    rooms = {e.agent: e.room for e in trace.select("consumer_started")}
    broker_rooms = {e.broker: e.room for e in trace.select("queues_created")}
    assert set(rooms.values()) == {"room-a", "room-b"} == set(broker_rooms.values())
    v = RocketMQViews(trace)
    for h in v.holdings():
        if h.start > 10.0:
            assert broker_rooms[h.queue.split("/")[1]] == rooms[h.consumer], h
    # room-b's brokers are lost at 300 s; the name server drops them once their last registration (every 30 s) is
    # more than brokerChannelExpiredTime (120 s) old, at its next scan (every 10 s) ...
    removed = assert_count(run, "broker_route_removed", exactly=2)
    assert all(e.reason == "expired" and 120.0 < e.silent_s <= 130.0 and 390.0 < e.t <= 440.0 for e in removed)
    # ... and rebalances asking a lost broker for the client ids meanwhile time out.
    assert_count(run, "rebalance_skipped", at_least=1, within=(300.0, None),
                 where=lambda e: e.reason == "cid_list_unavailable" and e.cid_source in ("broker-b", "broker-d"))
    # In the end room-b's consumers hold nothing, room-a's hold room-a's 8 queues.
    end = trace.end - 1.0
    held = {q: v.holders_at(q, end) for q in v.queues() if broker_rooms[q.split("/")[1]] == "room-a"}
    assert all(len(h) == 1 and rooms[h[0]] == "room-a" for h in held.values()), held


def test_pop_consumers_consume_twice_only_what_a_crashed_one_never_acked(emulate):
    run = emulate("rocketmq-pop-crash", until=420)
    trace = Trace(run)
    dead = trace.last("consumer_started", where=lambda e: e.agent == "consumer-4").cid
    revived = assert_count(run, "pop_revived", at_least=1)
    popinvisible = 60.0
    assert all(e.cid == dead and 300.0 + popinvisible <= e.t <= 300.0 + popinvisible + 2.0 for e in revived)
    v = RocketMQViews(trace)
    assert v.overlap_seconds() == 0.0
    assert v.duplicates_total() == pytest.approx(sum(e.messages for e in revived), rel=1e-6)


def test_pop_duplicates_are_exactly_the_crashed_consumers_last_unacked_pops(emulate):
    # Capacity 200 msg/s per consumer against 16 queues x 100 msg/s: every queue always has a backlog, so each
    # consumer pops exactly its capacity x consume_tick_s = 200 messages a tick (two POP assignments, one per
    # broker, 100 each) and acks them at its next tick. consumer-4 crashes at 300 s between two ticks, after its
    # last pops were answered (within milliseconds of its tick): those 200 messages were consumed and never acked,
    # come back after popInvisibleTime (60 s) and are consumed again by the others: exactly 200 consumed twice.
    run = emulate("rocketmq-pop-crash", until=480, cluster__consumer_capacity=200.0)
    per_tick = 200.0 * 1.0
    trace = Trace(run)
    revived = list(trace.select("pop_revived"))
    assert sum(e.messages for e in revived) == pytest.approx(per_tick)
    assert RocketMQViews(trace).duplicates_total() == pytest.approx(per_tick)
    figures = run_figures(run.dir)["duplicates"]
    assert figures["total"] == pytest.approx(per_tick) and figures["by_mode"] == {"POP": pytest.approx(per_tick)}
