"""The consumers' heartbeat and route-poll leases keep their fixed-rate task's grid through a GC pause
(``keep_grid`` of the kernel's lease): after a pause longer than a period the real ``scheduleAtFixedRate`` tasks
run what is overdue at the pause's end and then keep ``origin + k·period``, and so do the leases, so the brokers
and the name server see the paused consumer's contact when the one-by-one model's messages would give it."""
from __future__ import annotations

import copy

from clusteremu.emulator.trace.query import Trace

ONE_BY_ONE = {"workload.heartbeats": "messages", "workload.route_poll": "messages"}
LEASES = {"workload.heartbeats": "lease", "workload.route_poll": "lease"}

# Two groups of three consumers on four brokers; consumer-1 pauses 45 s at 150 s (it misses a heartbeat run and
# a route-poll run: both run late at 195 s, then on their grids), broker-e joins at 200 s (a new route, read at
# each consumer's next poll), and consumer-1 is cut from broker-a at 230 s for 160 s: broker-a expires its
# channel 120 s after the last heartbeat that got through, a time on the heartbeat task's grid.
SCENARIO = {
    "scenario": {"name": "rocketmq-lease-grid-small", "description": "a consumer's pause, then a route change and "
                 "a partition", "model": "rocketmq", "duration_s": 420.0, "seed": 7},
    "network": {"latency": {"dist": "uniform", "min_ms": 0.5, "max_ms": 2.0}},
    "cluster": {"brokers": 4, "queues_per_broker": 8, "consumers": 6, "start_jitter_s": 10.0, "start": "running"},
    "workload": {"groups": 2, "topic_brokers": 2, "consume_tick_s": 1.0},
    "faults": [{"kind": "pause", "at": 150.0, "duration_s": 45.0, "agents": ["consumer-1"]},
               {"kind": "broker_join", "at": 200.0, "agents": ["broker-e"]},
               {"kind": "partition", "at": 230.0, "duration_s": 160.0, "between": [["consumer-1"], ["broker-a"]]}],
}


def test_after_a_pause_the_leases_keep_contact_on_the_tasks_grid_as_the_messages_do(emulate):
    one, lease = (Trace(emulate(copy.deepcopy(SCENARIO), **keys)) for keys in (ONE_BY_ONE, LEASES))

    def expiries(trace):
        return {(e.agent, e.consumer): (e.t, e.silent_s, e.cause) for e in trace.select("channel_expired")}
    eo, el = expiries(one), expiries(lease)
    assert list(eo) == [("broker-a", "consumer-1")] and el.keys() == eo.keys()
    (to, so, co), (tl, sl, cl) = eo[("broker-a", "consumer-1")], el[("broker-a", "consumer-1")]
    assert co == cl and abs(tl - to) < 0.05 and abs(sl - so) < 0.05
    # the last heartbeat that got through is the task's run on its grid after the overdue one at 195 s, before
    # 225 s: a lease re-anchored on the pause's end would have kept contact until 225 s
    assert 195.0 < to - so < 224.0

    # the new route reaches every consumer, the paused one included, at its next poll time on the grid
    ro = {e.agent: e.t for e in one.select("route_updated", within=(200.0, None))}
    rl = {e.agent: e.t for e in lease.select("route_updated", within=(200.0, None))}
    assert "consumer-1" in ro and rl.keys() == ro.keys()
    assert all(abs(t - ro[k]) < 0.01 for k, t in rl.items()), (ro, rl)
