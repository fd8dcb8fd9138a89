"""``workload.persist_offsets = "lease"`` (the periodic ``UPDATE_CONSUMER_OFFSET`` as kernel leases whose keep-alives
carry the offsets, computed by the brokers from the closed form the consumers publish), checked against the
one-by-one persists it stands for.

One small running cluster in closed form goes through a scale-out, a consumer's 30 s pause (which covers persist
runs), a broker joining, a consumer slowed to a fifth of its capacity, a graceful scale-in and a crash, with the
persists as messages and as leases. The argument (``agents/rocketmq/persists.py``) says every committed offset a
broker reads is the one-by-one model's, except that a real persist arrives a latency draw after its run and a
keep-alive counts the link's minimum latency after it: the decisions are the same and their times differ by
milliseconds (the network's draws of the other messages differ once the persists are left out), and a race
decided by milliseconds (a take's offset query against the old owner's drop persist) may go the other way.
Two more runs check the pauses whose end is not published (the consumer caught up before any persist): long
young pauses, and capacity changes published during short pauses."""
from __future__ import annotations

import copy

import pytest

from clusteremu.agents.rocketmq.views import RocketMQViews
from clusteremu.base.errors import InputError
from clusteremu.emulator.trace.query import Trace

from .lease_pairs import channel_expiries, paired_runs, settled_alike, takes

RATE = 100.0  # messages a second into each queue
CAPACITY = 1000.0  # a consumer's messages a second
PERSIST_S = 5.0  # persistConsumerOffsetInterval

# Two groups of three consumers on four brokers, each topic on two of them, consuming in closed form; young
# collections every 2 min on average (a pause's end may be a change the brokers are told of; rarer than
# RocketMQ's default, so that the other changes are not hidden by one soon after them).
SCENARIO = {
    "scenario": {"name": "rocketmq-persists-small", "description": "two small groups through six changes",
                 "model": "rocketmq", "duration_s": 600.0, "seed": 7},
    "network": {"latency": {"dist": "uniform", "min_ms": 0.5, "max_ms": 2.0}},
    "cluster": {"brokers": 4, "queues_per_broker": 8, "consumers": 6, "start_jitter_s": 10.0, "start": "running",
                "consumer_capacity": CAPACITY, "gc": {"young_every_s": 120.0}},
    "workload": {"groups": 2, "topic_brokers": 2, "heartbeats": "lease", "consumption": "closed_form",
                 "trace_commits": False, "rate_per_queue": RATE},
    "faults": [{"kind": "scale_out", "at": 100.0, "agents": ["consumer-7", "consumer-8"]},
               {"kind": "pause", "at": 150.0, "duration_s": 30.0, "agents": ["consumer-2"]},
               {"kind": "broker_join", "at": 200.0, "agents": ["broker-e"]},
               {"kind": "slow_consumer", "at": 250.0, "duration_s": 60.0, "factor": 0.2, "agents": ["consumer-1"]},
               {"kind": "scale_in", "at": 330.0, "agents": ["consumer-6"]},
               {"kind": "crash", "at": 430.0, "agents": ["consumer-3"]}],
}
MESSAGES = {"workload.persist_offsets": "messages"}
LEASES = {"workload.persist_offsets": "lease"}
SETTLED = (95.0, 145.0, 195.0, 245.0, 325.0, 425.0, 595.0)  # before each next change
MS = 0.05  # "milliseconds apart": the network's draws differ by at most a few of its 0.5-2 ms latencies


def _committed(trace: Trace) -> dict[tuple[str, float], float]:
    """Every ``queue_stats`` committed offset, by (queue, time)."""
    return {(e.queue, e.t): e.committed for e in trace.select("queue_stats")}


@pytest.fixture
def runs(emulate):
    return paired_runs(emulate, SCENARIO, MESSAGES, LEASES)


def test_persist_leases_settle_on_the_same_allocations_and_expire_the_crashed_channels_alike(runs):
    one, lease = settled_alike(runs, SETTLED)
    # The crashed consumer's channels close when Netty's idle handler finds no traffic for 120 s: where it held
    # queues, 120 s after its last persist (5 s before the crash at most), not after its last heartbeat (up to
    # 30 s before), so the keep-alives count as traffic too.
    eo, el = channel_expiries(one), channel_expiries(lease)
    assert {k[1] for k in eo} == {"consumer-3"} and el.keys() == eo.keys()
    assert all(abs(t - eo[k]) < MS for k, t in el.items()), (eo, el)
    assert any(t > 430.0 + 120.0 - PERSIST_S for t in el.values()), el


def test_persist_leases_take_the_same_queues_from_the_same_committed_offsets(runs):
    one, lease = takes(Trace(runs["messages"])), takes(Trace(runs["lease"]))
    assert [t[:3] for t in lease] == [t[:3] for t in one] and len(one) > 80
    assert all(abs(a[4] - b[4]) < MS for a, b in zip(one, lease))
    # A take's offset is its old owner's last persist (or its drop's) that reached the broker before the query:
    # the same one, read milliseconds apart (what a queue gets in those milliseconds), except when the query and
    # the old owner's drop persist race, which the other model's draws may order the other way: one persist
    # period of that owner's consumption at most.
    deltas = [abs(a[3] - b[3]) for a, b in zip(one, lease)]
    assert max(deltas) <= PERSIST_S * CAPACITY
    assert sum(d <= RATE * MS for d in deltas) >= 0.9 * len(deltas)
    vo, vl = RocketMQViews(Trace(runs["messages"])), RocketMQViews(Trace(runs["lease"]))
    assert abs(vl.overlap_seconds() - vo.overlap_seconds()) <= 1.0
    assert abs(vl.orphan_seconds() - vo.orphan_seconds()) <= 1.0
    assert vo.duplicates_total() > 10_000  # the crash and the scale-out's overlaps consume messages twice
    assert abs(vl.duplicates_total() - vo.duplicates_total()) <= sum(deltas) + RATE


def test_the_brokers_committed_offsets_are_the_persists_offsets(runs):
    one, lease = Trace(runs["messages"]), Trace(runs["lease"])
    co, cl = _committed(one), _committed(lease)
    assert cl.keys() == co.keys() and len(co) > 4000
    # Before the first change every broker's committed offset is its consumers' last persist, to float rounding:
    # the keep-alives carry exactly what the messages did, evaluated at the same grid times.
    steady = [k for k in co if k[1] < 100.0]
    assert len(steady) > 600
    assert all(abs(cl[k] - co[k]) <= 1e-6 * max(1.0, co[k]) for k in steady)
    # Afterwards too, but for the milliseconds by which every message's time differs: through the 30 s pause
    # (persists stopped, the overdue one at its end, a backlog drained for a minute after it), the slowed consumer
    # (a backlog growing for a minute) and the new broker; a queue taken in the last 10 s may differ by a race
    # of the take (above), by one persist period of its old owner's consumption at most.
    taken: dict[str, list[float]] = {}
    for trace in (one, lease):
        for e in trace.select("queue_taken", within=(1e-9, None)):
            taken.setdefault(e.queue, []).append(e.t)
    later = [k for k in co if k[1] >= 100.0]
    raced = {k for k in later if any(k[1] - 10.0 <= t <= k[1] for t in taken.get(k[0], ()))}
    assert len(raced) < 0.1 * len(later)
    assert all(abs(cl[k] - co[k]) <= RATE * MS for k in later if k not in raced)
    assert all(abs(cl[k] - co[k]) <= PERSIST_S * CAPACITY for k in raced)
    # the pause and the slowed consumer did leave backlogs: committed offsets far behind the queues' ends
    lag = {(e.queue, e.t): e.lag for e in lease.select("queue_stats", within=(185.0, 300.0))}
    assert max(lag.values()) > 20 * RATE


def test_persist_leases_leave_out_the_periodic_persists(runs):
    one, lease = runs["messages"].manifest["stats"], runs["lease"].manifest["stats"]
    # 8 consumers persist every 5 s for up to 600 s, mostly to one broker each: hundreds of messages, and as
    # many coordinator windows, which the leases replace by a notice per change of a consumer's consumption
    assert one["messages"] - lease["messages"] > 400
    assert lease["windows"] < 0.8 * one["windows"]


def test_persist_leases_give_one_trace_in_process_and_in_two_worker_processes(emulate):
    ref = emulate(SCENARIO, until=460.0, **LEASES)
    two = emulate(SCENARIO, until=460.0, agents="procs:2", **LEASES)
    assert two.digest == ref.digest


@pytest.mark.parametrize("override, names", [
    ({"workload.consumption": "pull"}, "workload.consumption"),
    ({"workload.trace_commits": True}, "workload.trace_commits"),
    ({"cluster.timer_mode": "fixed_delay"}, "cluster.timer_mode"),
])
def test_persist_leases_are_refused_where_the_brokers_could_not_compute_the_offsets(emulate, override, names):
    data = copy.deepcopy(SCENARIO)
    data["faults"] = []
    with pytest.raises(InputError, match=rf"workload\.persist_offsets.*{names}"):
        emulate(data, **LEASES, **override)
    with pytest.raises(InputError, match=r"workload\.persist_offsets"):
        emulate(data, **{"workload.persist_offsets": "sometimes"})


def test_a_pause_that_ends_with_no_persist_before_the_queues_catch_up_publishes_nothing_and_changes_nothing(emulate):
    # Young pauses of 400 ms every 20 s on average, nothing else: a consumer with spare capacity catches up a few
    # hundred milliseconds after each, and a persist falls in that time after some of them. Only those need the
    # brokers told of the pause; after the others the description published before gives the same offsets.
    data = copy.deepcopy(SCENARIO)
    data["faults"] = []
    data["cluster"]["gc"] = {"young_every_s": 20.0, "young_pause_ms": 400.0}
    one, lease = (Trace(emulate(data, **keys)) for keys in (MESSAGES, LEASES))
    co, cl = _committed(one), _committed(lease)
    assert cl.keys() == co.keys() and len(co) > 3000
    assert all(abs(cl[k] - co[k]) <= RATE * MS for k in co)
    # Most pauses were not published: the messages the pauses add (descriptions, and the leases stopped by a
    # pause over a keep-alive) are fewer than the consumers' pauses, each of which would publish to a broker or two.
    pauses = lease.count("stw_pause", where=lambda e: e.agent.startswith("consumer"))
    added = emulate(data, **LEASES).manifest["stats"]["messages"] - emulate(
        data, **LEASES, **{"cluster.gc.young_every_s": 0.0}).manifest["stats"]["messages"]
    assert pauses > 150 and 0 < added < 0.6 * pauses


def test_a_change_published_during_a_pause_is_followed_by_the_pause_end(emulate):
    # consumer-1's capacity halves (still ample) while a 0.5 s pause holds it: the description published then says
    # "paused", so the pause's end must be published too, however soon the consumer catches up. Three such pauses
    # 31.3 s apart fall at three phases of the 5 s persist grid: at most one of them has a persist before the
    # consumer caught up again (which would publish anyway).
    data = copy.deepcopy(SCENARIO)
    data["cluster"]["gc"] = {"young_every_s": 0.0}
    data["cluster"]["consumer_capacity"] = 10 * CAPACITY
    data["faults"] = [f for t in (200.0, 231.3, 262.6) for f in (
        {"kind": "pause", "at": t, "duration_s": 0.5, "agents": ["consumer-1"]},
        {"kind": "slow_consumer", "at": t + 0.2, "duration_s": 20.0, "factor": 0.5, "agents": ["consumer-1"]})]
    one, lease = (Trace(emulate(data, until=400.0, **keys)) for keys in (MESSAGES, LEASES))
    co, cl = _committed(one), _committed(lease)
    assert cl.keys() == co.keys() and len(co) > 2000
    assert all(abs(cl[k] - co[k]) <= RATE * MS for k in co)
