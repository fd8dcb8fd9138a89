"""A run is a pure function of (scenario, seed, code), whatever the placement of its agents."""
from __future__ import annotations

from clusteremu.emulator.runner import execute
from clusteremu.emulator.trace import open_run
from clusteremu.scenarios.loader import load_scenario

OVERRIDES = ["scenario.duration_s=200", "cluster.members=6", "cluster.gc.young_every_s=5",
             "faults.0.at=60", "workload.timer_mode=\"fixed_delay\""]


def run(tmp_path, name, seed=1, agents="inproc", overrides=OVERRIDES):
    return execute(load_scenario("kernel-heartbeat", overrides), tmp_path / name, seed=seed, agents=agents)


def test_same_seed_same_digest_other_seed_other_digest(tmp_path):
    a, b, c = run(tmp_path, "a"), run(tmp_path, "b"), run(tmp_path, "c", seed=2)
    assert a.digest == b.digest
    assert a.digest != c.digest
    assert open_run(a.run_dir).compute_digest() == a.digest


def test_digest_is_the_same_over_one_two_or_three_in_process_workers(tmp_path):
    one = run(tmp_path, "one")
    two = run(tmp_path, "two", agents="inproc:2")
    three = run(tmp_path, "three", agents="inproc:3")
    assert one.digest == two.digest == three.digest
    assert len(two.manifest["events"]["writers"]) == 3  # two workers and the coordinator's own writer
    events_one = [e.as_dict() for e in open_run(one.run_dir).events()]
    events_two = [e.as_dict() for e in open_run(two.run_dir).events()]
    assert events_one == events_two


def test_messages_never_arrive_sooner_than_the_lookahead(tmp_path):
    r = run(tmp_path, "la", overrides=[*OVERRIDES, "network.latency={dist=\"exponential\", min_ms=2, mean_ms=5}"])
    sent = {}
    gaps = []
    for e in open_run(r.run_dir).events(["heartbeat_sent", "heartbeat_received"]):
        if e.kind == "heartbeat_sent":
            sent[(e.agent, e.n)] = e.t
        else:
            gaps.append(e.t - sent[(e.member, e.n)])
    assert len(gaps) > 300
    assert min(gaps) >= 0.002


def test_canonical_order_holds_across_writers(tmp_path):
    r = run(tmp_path, "order", agents="inproc:2")
    keys = [e.key for e in open_run(r.run_dir).events()]
    assert keys == sorted(keys)
