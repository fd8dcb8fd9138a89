"""Liveness of worker processes: a dead or silent worker fails the run; workers never outlive the coordinator."""
from __future__ import annotations

import re
import signal

import psutil

from clusteremu.emulator.models import load_model
from clusteremu.emulator.runner import place
from clusteremu.emulator.trace import open_run
from clusteremu.scenarios.loader import load_scenario

from .proc_helpers import clusteremu, wait_for, workers_of

# long enough in virtual time that the run is still going when the test acts on it
LONG = ["run", "kernel-heartbeat", "--agents", "procs:2", "--until", "1000000", "--quiet", "--set", "cluster.members=8"]


def start_long_run(tmp_path, *extra: str):
    out = tmp_path / "run"
    proc = clusteremu(*LONG, "--out", str(out), *extra)
    kids = workers_of(proc, 2)
    # wait until the windows are running: both workers built their agents and flushed events past their segment's
    # header (a segment that exists may still be only its header: killed then, no worker has an event on disk)
    wait_for(lambda: [f.stat().st_size > 100 for f in (out / "events").glob("w00*-00000.seg")] == [True, True], 30,
             "the workers' first events on disk")
    wait_for(lambda: (out / "events" / "net-00000.seg").exists(), 30, "the coordinator's segment")
    return proc, kids, out


def groups() -> list[list[str]]:
    sc = load_scenario("kernel-heartbeat", ["cluster.members=8"])
    return [[s.name for s in g] for g in place(load_model(sc.model).agents(sc.data), 2, "round_robin")]


def test_a_killed_worker_fails_the_run_naming_it_and_its_agents_and_the_partial_trace_stays_readable(tmp_path):
    proc, kids, out = start_long_run(tmp_path)
    victim = kids[0]
    victim.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 1, err
    m = re.search(r"worker (\d) \(pid (\d+)", err)
    assert m, err
    assert int(m.group(2)) == victim.pid
    assert "killed by signal 9" in err
    hosted = groups()[int(m.group(1))]
    assert all(name in err for name in hosted), err
    run = open_run(out)
    assert not run.complete
    assert "killed by signal 9" in run.manifest["failure"]
    events = list(run.events())  # readable: the survivor and the coordinator flushed, the victim's tail is cut
    assert any(e.kind == "agent_started" for e in events)
    assert psutil.wait_procs(kids, timeout=10)[1] == []


def test_a_silent_worker_is_detected_within_the_timeout(tmp_path):
    proc, kids, out = start_long_run(tmp_path, "--worker-timeout", "1.5")
    victim = kids[1]
    victim.send_signal(signal.SIGSTOP)  # alive but silent
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        if victim.is_running():
            victim.send_signal(signal.SIGKILL)
    assert proc.returncode == 1, err
    assert f"pid {victim.pid}" in err and "has been silent" in err and "timeout 1.5 s" in err
    assert not open_run(out).complete


def test_workers_exit_when_the_coordinator_is_killed(tmp_path):
    proc, kids, _ = start_long_run(tmp_path)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    gone, alive = psutil.wait_procs(kids, timeout=15)
    for p in alive:
        p.kill()
    assert alive == [], "workers outlived their coordinator"


def test_ctrl_c_stops_the_workers_and_closes_the_trace_cleanly(tmp_path):
    proc, kids, out = start_long_run(tmp_path)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert psutil.wait_procs(kids, timeout=15)[1] == []
    run = open_run(out)
    assert run.manifest["complete"] is False
    assert run.manifest["failure"] == "KeyboardInterrupt"
    events = list(run.events())
    assert run.problems == []  # every writer closed its segments: nothing truncated
    assert {e.agent for e in events} >= {"member-1", "member-2"}
