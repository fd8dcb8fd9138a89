"""A Storm run is a pure function of (scenario, seed, code): the same trace in one process and in two worker
processes, through supervisor crashes, restarts, re-registrations and rebalances."""
from __future__ import annotations

from clusteremu.emulator.runner import execute
from clusteremu.scenarios.loader import load_scenario


def test_the_supervisor_failure_run_has_one_digest_in_process_and_in_two_worker_processes(tmp_path):
    sc = load_scenario("storm-supervisor-failure", ["scenario.duration_s=800"])
    inproc = execute(sc, tmp_path / "inproc")
    procs = execute(sc, tmp_path / "procs", agents="procs:2")
    assert inproc.stats.events == procs.stats.events > 800
    assert inproc.digest == procs.digest


def test_another_seed_gives_another_trace(tmp_path):
    sc = load_scenario("storm-steady-multi-user", ["scenario.duration_s=120"])
    assert execute(sc, tmp_path / "s1", seed=1).digest != execute(sc, tmp_path / "s2", seed=2).digest


def test_a_partition_from_zookeeper_gives_one_digest_in_process_and_in_two_worker_processes(tmp_path):
    # the supervisors' leases: keep-alives as real messages during the fault, stop notices across workers
    fault = ('faults=[{kind="partition", at=300.0, duration_s=40.0, between=[["supervisor-2"], ["zookeeper"]]}, '
             '{kind="pause", at=200.5, duration_s=25.0, agents=["supervisor-4"]}]')
    sc = load_scenario("storm-steady-multi-user", [fault, "scenario.duration_s=420"])
    inproc = execute(sc, tmp_path / "inproc")
    procs = execute(sc, tmp_path / "procs", agents="procs:2")
    assert inproc.digest == procs.digest and inproc.stats.messages == procs.stats.messages
