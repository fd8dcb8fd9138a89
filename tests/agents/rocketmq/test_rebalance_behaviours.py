"""Timing behaviours of the RocketMQ model, asserted from the trace alone (``RocketMQViews`` computes holdings,
overlap, orphans and duplicates from the events; ``clusteremu.emulator.testing`` gives the assertions)."""
from __future__ import annotations

from clusteremu.agents.rocketmq.views import RocketMQViews
from clusteremu.emulator.testing import assert_count, assert_eventually, assert_never
from clusteremu.emulator.trace.query import Trace
from clusteremu.strategies.rocketmq import MessageQueue, create, sort_mq_all

SCALE_OUT_AT = 300.0
CRASH_AT = 300.0


def views(run) -> RocketMQViews:
    return RocketMQViews(Trace(run))


def test_client_side_scale_out_overlaps_and_consumes_twice_broker_side_pop_does_not(emulate):
    client = views(emulate("rocketmq-scale-out-averagely", until=400))
    # Each consumer allocates from its own view: for a moment after each new consumer's first heartbeat, some
    # queues are held by two consumers, and the new owners start from committed offsets older than what the old
    # owners consumed.
    windows = [w for w in client.overlap_windows() if w[1] >= SCALE_OUT_AT]
    assert windows, "no overlap after the scale-out"
    assert all(len(holders) == 2 for _q, _a, _b, holders in windows)
    assert all(client.allocation_at((a + b) / 2)[q] == holders for q, a, b, holders in windows[:20])
    assert client.overlap_seconds(within=(SCALE_OUT_AT, None)) > 0
    assert client.duplicates_total() > 0
    # ... and the group settles: at the end every queue has exactly one holder, 2 queues for each of 8 consumers.
    end = client.trace.end
    holders = client.allocation_at(end - 1)
    assert all(len(h) == 1 for h in holders.values()), holders
    per_consumer: dict[str, int] = {}
    for (h,) in holders.values():
        per_consumer[h] = per_consumer.get(h, 0) + 1
    assert sorted(per_consumer.values()) == [2] * 8

    pop = views(emulate("rocketmq-pop-scale-out", until=400))
    # Broker-side assignment with POP: every consumer is assigned every broker (queue id -1), the broker hands out
    # each range once: no exclusive holding can overlap and nothing is consumed twice.
    assert pop.overlap_seconds() == 0.0
    assert pop.duplicates_total() == 0.0
    assert pop.consumed_total() > 0
    assert {h.mode for h in pop.holdings()} == {"POP"}
    assert all(h.queue.endswith("/-1") for h in pop.holdings())


def test_every_allocation_change_is_a_rebalance_result_with_its_view(emulate):
    run = emulate("rocketmq-scale-out-averagely", until=400)
    trace = Trace(run)
    v = RocketMQViews(trace)
    for ev in trace.select(["queue_taken", "queue_dropped"], where=lambda e: e.get("reason", "rebalance") == "rebalance"):
        result = trace.first("rebalance_result", within=(ev.t, None),
                             where=lambda r, ev=ev: r.agent == ev.agent and ev.queue in (r.added + r.removed))
        assert result is not None, f"{ev.kind} of {ev.queue} by {ev.agent} at {ev.t} has no rebalance_result"
        assert result.t - ev.t < 1.0
        assert result.mq_count == 16
        # The view that caused it, from the trace alone: the broker's client-id list at the version it answered
        # (replayed from the broker's registrations), and the route of the consumer's last route_updated.
        cid_all = v.cid_all(result)
        assert result.cids == len(cid_all) and cid_all == sorted(cid_all)
        route = trace.last("route_updated", within=(None, result.t), where=lambda e, r=result: e.agent == r.agent)
        assert route.t == result.route_changed_t and route.queues == result.mq_count
        if result.trigger == "notify":
            # Allocating from that view gives what the consumer allocated.
            mqs = sort_mq_all([MessageQueue("TopicTest", b, i) for b in route.brokers for i in range(8)])
            mine = create("AllocateMessageQueueAveragely").allocate("g", result.cid, mqs, cid_all)
            assert [f"{q.topic}/{q.broker_name}/{q.queue_id}" for q in mine] == result.allocated


def test_a_crashed_consumer_stays_in_the_views_until_its_channel_expires_after_120_s(emulate):
    run = emulate("rocketmq-crash-averagely", until=600)
    trace = Trace(run)
    cv = RocketMQViews(trace)
    started = trace.last("consumer_started", where=lambda e: e.agent == "consumer-4")
    dead = started.cid
    expiries = assert_count(run, "channel_expired", exactly=2, where=lambda e: e.cid == dead)  # one per broker
    for e in expiries:
        assert e.t > CRASH_AT
        if e.cause == "scan":
            # channelExpiredTimeout 120 s since the last heartbeat, ClientHousekeepingService scans every 10 s; the
            # scan removes the channel itself, so nobody is notified.
            assert 120.0 < e.silent_s <= 130.0 + 0.01, e.silent_s
            assert_never(run, "consumer_ids_changed_notified", within=(e.t, e.t), entity=e.agent)
        else:
            # Netty's idle handler: 120 s (serverChannelMaxIdleTimeSeconds) without any traffic on the channel (a
            # broker the dead consumer pulled nothing from saw only its heartbeats); its close event notifies.
            assert e.cause == "idle" and abs(e.silent_s - 120.0) < 1e-6
            assert_count(run, "consumer_ids_changed_notified", exactly=1, within=(e.t, e.t), entity=e.agent)
    first = min(e.t for e in expiries)
    # Stale views: until the expiry, the survivors' timer rebalances still allocate to the dead consumer ...
    stale = assert_count(run, "rebalance_result", at_least=3, within=(CRASH_AT, first - 0.001),
                         where=lambda r: r.trigger == "timer" and dead in cv.cid_all(r))
    assert {r.agent for r in stale} == {"consumer-1", "consumer-2", "consumer-3"}
    # ... so its 4 queues are held by nobody from the crash until a survivor rebalances from a list without it:
    # at a notification, or at its next 20 s timer at the latest.
    took = trace.first("rebalance_result", within=(first, None),
                       where=lambda r: r.added and dead not in cv.cid_all(r))
    assert took is not None and took.t <= first + 20.0 + 0.1
    v = RocketMQViews(trace)
    orphans = [w for w in v.orphan_windows() if w[1] <= CRASH_AT < w[2]]
    assert len(orphans) == 4
    assert all(abs(w[1] - CRASH_AT) < 1e-9 and first <= w[2] <= first + 20.0 + 0.5 for w in orphans), orphans
    # A graceful stop is noticed at once instead: UNREGISTER_CLIENT, no expiry.
    graceful = emulate("rocketmq-scale-in-averagely", until=400)
    assert_never(graceful, "channel_expired")
    gone = assert_count(graceful, "consumer_unregistered", exactly=8)  # 4 consumers x 2 brokers
    assert all(SCALE_OUT_AT <= e.t < SCALE_OUT_AT + 0.01 for e in gone)


def test_a_rebalance_from_a_stale_route_and_a_partial_cid_list_after_a_broker_joins(emulate):
    run = emulate("rocketmq-broker-join-averagely", until=420)
    trace = Trace(run)
    cv = RocketMQViews(trace)
    (registered,) = assert_count(run, "broker_route_registered", exactly=1, where=lambda e: e.broker == "broker-c")
    # The name server knows the 24 queues from 315 s, but each consumer sees them only at its next route poll
    # (pollNameServerInterval 30 s, each at its own phase): rebalances meanwhile allocate from 16 queues.
    stale = assert_count(run, "rebalance_result", at_least=1, within=(registered.t, None),
                         where=lambda r: r.mq_count == 16)
    polls = assert_count(run, "route_updated", exactly=4, within=(registered.t, None),
                         where=lambda e: e.queues == 24 and e.previous_queues == 16)
    assert all(0 < e.t - registered.t <= 30.0 + 0.1 for e in polls)
    assert all(r.t < p.t for r in stale for p in polls if p.agent == r.agent)
    # broker-c learns each consumer only from the consumer's next heartbeat (heartbeatBrokerInterval 30 s, sent
    # to the brokers of the cached route): a consumer that asks broker-c for the client ids before then gets a
    # partial list, and allocates from it.
    joined = trace.select("consumer_registered", where=lambda e: e.agent == "broker-c")
    assert len(joined) == 4
    assert all(e.t - registered.t <= 60.0 + 0.1 for e in joined)
    partial = trace.select("rebalance_result", where=lambda r: r.cid_source == "broker-c" and r.cids < 4)
    for r in partial:
        known = trace.last("consumer_registered", within=(None, r.t), where=lambda e: e.agent == "broker-c")
        assert known is not None and known.cids >= r.cids
        assert len(cv.cid_list("broker-c", "please_rename_unique_group_name_4", r.cid_version)) == r.cids
    # Eventually every consumer allocates from the full view: 24 queues, 4 client ids.
    last = {c: trace.last("rebalance_result", where=lambda r, c=c: r.agent == c) for c in
            ("consumer-1", "consumer-2", "consumer-3", "consumer-4")}
    assert all(r.mq_count == 24 and r.cids == 4 and r.held == 6 for r in last.values())


def test_orderly_consumers_never_hold_a_queue_together(emulate):
    concurrently = views(emulate("rocketmq-scale-out-averagely", until=400))
    assert concurrently.overlap_seconds() > 0
    for name in ("rocketmq-orderly-scale-out", "rocketmq-orderly-scale-out-5x"):
        run = emulate(name, until=400)
        v = views(run)
        assert v.overlap_seconds() == 0.0, v.overlap_windows()
        assert v.duplicates_total() == 0.0
        # Every take is covered by a broker lock given to that consumer's client id first.
        trace = v.trace
        for taken in trace.select("queue_taken"):
            lock = trace.last("queue_locked", within=(None, taken.t),
                              where=lambda e, q=taken.queue: e.queue == q)
            assert lock is not None and lock.cid == taken.cid, (name, taken.queue, taken.t)


def test_a_long_gc_pause_expires_the_channel_and_the_paused_consumer_overlaps_when_it_resumes(emulate):
    run = emulate("rocketmq-gc-pause-averagely", until=480)
    trace = Trace(run)
    expired = assert_count(run, "channel_expired", exactly=2)
    assert all(e.consumer == "consumer-3" and 400.0 <= e.t < 450.0 for e in expired)
    v = RocketMQViews(trace)
    # Its queues went to the others at the expiry, while it still held them (paused): overlap from the expiry
    # until its first rebalance after the pause, which allocates nothing (it is not in the cid list).
    windows = [w for w in v.overlap_windows() if "consumer-3" in w[3]]
    assert windows and all(400.0 <= w[1] and w[2] <= 451.0 for w in windows)
    (back,) = assert_count(run, "rebalance_result", exactly=1, within=(450.0, 450.5),
                           where=lambda r: r.agent == "consumer-3" and r.removed and not r.added)
    assert back.cid not in v.cid_all(back)
    assert_eventually(run, "consumer_registered", after=lambda e: e is back, within=1.0,
                      where=lambda e: e.consumer == "consumer-3")


def test_without_notifications_consumers_rebalance_on_their_own_20_s_timers_and_overlap_for_seconds(emulate):
    notified = views(emulate("rocketmq-scale-out-averagely", until=400))
    silent = views(emulate("rocketmq-scale-out-no-notify", until=400))
    assert_never(silent.trace.run, "consumer_ids_changed_notified")
    windows = [w for w in silent.overlap_windows() if w[1] >= SCALE_OUT_AT]
    longest = max(b - a for _q, a, b, _h in windows)
    # Each consumer's RebalanceService wakes every waitInterval (20 s) at its own phase: an old owner keeps a queue
    # until its own timer fires, after the new owner took it at its own.
    assert 5.0 < longest <= 20.0 + 0.1
    assert silent.overlap_seconds(within=(SCALE_OUT_AT, None)) > 100 * notified.overlap_seconds(within=(SCALE_OUT_AT, None))
    assert silent.duplicates_total() > 5 * notified.duplicates_total()
    # ... and the allocation is stable again within one timer period of the last new consumer's start.
    last_change = max(r.t for r in silent.trace.select("rebalance_result", where=lambda r: r.changed))
    assert last_change < SCALE_OUT_AT + 2.0 + 20.0 + 0.5
