"""``workload.route_poll = "lease"`` (the route poll as a kernel poll lease) and ``workload.cid_lists = "lease"``
(a timer rebalance takes the client-id list last read from the broker it draws while the group is steady),
checked against the one-by-one reads they stand for.

One small running cluster goes through a scale-out, a consumer's GC pause, a new broker joining (a route change),
a partition of a consumer from one broker longer than the channel timeout and a consumer crash, with every read
real and with both keys on. The arguments (``agents/rocketmq/route_poll.py``, ``agents/rocketmq/cid_lists.py``)
say the decisions are the same and their times differ by milliseconds (the reads' round trips, the network's
draws), and committed offsets by what a consumer consumes in those milliseconds, except where a race decided by
milliseconds goes the other way: while brokers disagree on a group's list, the broker a rebalance draws decides
what it allocates, and one rebalance more or less earlier shifts which rebalance gets which keyed draw."""
from __future__ import annotations

import copy

import pytest

from clusteremu.agents.rocketmq.views import RocketMQViews
from clusteremu.base.errors import InputError
from clusteremu.emulator.trace.query import Trace

from .lease_pairs import channel_expiries, paired_runs, settled_alike, takes

ONE_BY_ONE = {"workload.route_poll": "messages", "workload.cid_lists": "messages"}
LEASES = {"workload.route_poll": "lease", "workload.cid_lists": "lease"}

# Two groups of three consumers on four brokers, each topic on two of them; a consumer per group joins at 100 s,
# consumer-2 pauses 30 s at 150 s, broker-e joins at 200 s (every topic gets its queues: a new route), consumer-4
# is cut from broker-c (its group's) for 150 s at 260 s (its channel there expires), consumer-3 is lost at 430 s.
SCENARIO = {
    "scenario": {"name": "rocketmq-reads-small", "description": "two small groups through five changes",
                 "model": "rocketmq", "duration_s": 600.0, "seed": 7},
    "network": {"latency": {"dist": "uniform", "min_ms": 0.5, "max_ms": 2.0}},
    "cluster": {"brokers": 4, "queues_per_broker": 8, "consumers": 6, "start_jitter_s": 10.0, "start": "running"},
    "workload": {"groups": 2, "topic_brokers": 2, "heartbeats": "lease", "consume_tick_s": 1.0},
    "faults": [{"kind": "scale_out", "at": 100.0, "agents": ["consumer-7", "consumer-8"]},
               {"kind": "pause", "at": 150.0, "duration_s": 30.0, "agents": ["consumer-2"]},
               {"kind": "broker_join", "at": 200.0, "agents": ["broker-e"]},
               {"kind": "partition", "at": 260.0, "duration_s": 150.0, "between": [["consumer-4"], ["broker-c"]]},
               {"kind": "crash", "at": 430.0, "agents": ["consumer-3"]}],
}
# settled times: before each next change
SETTLED = (95.0, 145.0, 195.0, 255.0, 425.0, 595.0)


@pytest.fixture
def runs(emulate):
    return paired_runs(emulate, SCENARIO, ONE_BY_ONE, LEASES)


def test_the_reads_as_leases_settle_on_the_same_allocations_and_expire_the_same_channels(runs):
    one, lease = settled_alike(runs, SETTLED)
    # the joined broker's queues were taken: the route changed
    assert any("broker-e" in q for q in RocketMQViews(lease).queues())
    eo, el = channel_expiries(one), channel_expiries(lease)
    assert {k[1] for k in eo} == {"consumer-3", "consumer-4"} and el.keys() == eo.keys()
    assert all(abs(t - eo[k]) < 0.05 for k, t in el.items()), (eo, el)
    # the new route reaches each consumer at its next poll time in both models
    ro = {e.agent: e.t for e in one.select("route_updated", within=(200.0, None))}
    rl = {e.agent: e.t for e in lease.select("route_updated", within=(200.0, None))}
    assert rl.keys() == ro.keys() and len(ro) == 8  # every consumer (consumer-3 is lost later)
    assert all(abs(t - ro[k]) < 0.01 for k, t in rl.items()), (ro, rl)


def test_the_reads_as_leases_take_the_same_queues_from_the_same_committed_offsets(runs):
    one, lease = takes(Trace(runs["messages"])), takes(Trace(runs["lease"]))
    assert [t[:3] for t in lease] == [t[:3] for t in one] and len(one) > 100
    close = [(a, b) for a, b in zip(one, lease) if abs(a[4] - b[4]) < 0.05]
    # Once any read is left out the network's latency draws differ, so every time differs by milliseconds, and a
    # race decided by milliseconds (a notification against a start, a take against the old owner's commit) may
    # go the other way. A take some milliseconds apart finds the committed offset one pull commit (1 s of the old
    # owner's consumption, at most its capacity) apart at most, and mostly what was consumed in those milliseconds.
    assert all(abs(a[3] - b[3]) <= 1000.0 for a, b in close)
    assert sum(abs(a[3] - b[3]) <= 100.0 * 0.05 for a, b in close) >= 0.9 * len(close)
    # The takes that are not milliseconds apart all fall while the brokers disagree on group 2 (broker-c expired
    # consumer-4 at 370 s, it registers again at 426 s): each rebalance then allocates from the list of the broker
    # it draws, and one draw more or less in the start-up's race shifts which rebalance draws broker-c: the same
    # take, a rebalance (waitInterval) earlier or later.
    far = [(a, b) for a, b in zip(one, lease) if abs(a[4] - b[4]) >= 0.05]
    assert len(far) <= 0.05 * len(one)
    assert all(370.0 <= min(a[4], b[4]) and max(a[4], b[4]) <= 427.0 and abs(a[4] - b[4]) <= 20.1 for a, b in far)
    # So overlap and orphan are the same outside that window; inside, one 20 s rebalance of two queues apart; and
    # the messages consumed twice differ by what that overlap consumed (100 msg/s a queue), and commit races.
    vo, vl = RocketMQViews(Trace(runs["messages"])), RocketMQViews(Trace(runs["lease"]))
    for span in ((0.0, 370.0), (370.0, 430.0), (430.0, 600.0)):
        for measure in ("overlap_seconds", "orphan_seconds"):
            a, b = getattr(vo, measure)(within=span), getattr(vl, measure)(within=span)
            assert abs(a - b) <= (2 * 20.1 if span == (370.0, 430.0) else 0.2), (span, measure, a, b)
    extra = vl.overlap_seconds() - vo.overlap_seconds()
    assert abs(vl.duplicates_total() - vo.duplicates_total() - 100.0 * extra) <= 500.0


def test_steady_timer_rebalances_take_the_held_lists_and_changes_read_for_real(runs):
    lease = Trace(runs["lease"])
    held = lease.select("rebalance_result", where=lambda r: r.trigger == "timer" and r.duration_s == 0.0)
    real = lease.select("rebalance_result", where=lambda r: r.duration_s > 0.0)
    assert len(held) > 100 and real  # most timer rebalances read nothing, every change's rebalance reads
    assert all(r.trigger != "notify" for r in held)
    # the first timer rebalance after a notified one (waitInterval later: the one that settles stale views) reads
    for n in lease.select("rebalance_result", where=lambda r: r.trigger == "notify"):
        after = lease.first("rebalance_result", within=(n.t + 1e-9, None),
                            where=lambda r, a=n.agent: r.agent == a and r.trigger == "timer")
        assert after is None or after.duration_s > 0.0, (n, after)
    one = Trace(runs["messages"])
    assert all(r.duration_s > 0.0 for r in one.select("rebalance_result", where=lambda r: r.trigger == "timer"))


def test_held_lists_are_refused_where_a_broker_may_stop_answering_or_no_list_is_read(emulate):
    data = copy.deepcopy(SCENARIO)
    data["faults"].append({"kind": "crash", "at": 500.0, "agents": ["broker-a"]})
    with pytest.raises(InputError, match=r"faults\[5\]\.agents.*workload\.cid_lists"):
        emulate(data, **LEASES)
    data = copy.deepcopy(SCENARIO)
    data["faults"], data["cluster"]["start"] = [], "cold"
    data["config"] = {"messageModel": "BROADCASTING"}
    with pytest.raises(InputError, match=r"workload\.cid_lists"):
        emulate(data, **LEASES)
    with pytest.raises(InputError, match=r"workload\.route_poll"):
        emulate(SCENARIO, **{"workload.route_poll": "sometimes"})


def test_under_fixed_delay_timers_the_route_polls_stay_calls(emulate):
    # a fixed-delay task's grid drifts by each run's round trip, which a lease's grid would not
    data = copy.deepcopy(SCENARIO)
    data["cluster"]["timer_mode"] = "fixed_delay"
    data["faults"] = data["faults"][:1]
    runs = [emulate(data, until=200.0, **{"workload.route_poll": rp}) for rp in ("messages", "lease")]
    assert runs[0].digest == runs[1].digest
