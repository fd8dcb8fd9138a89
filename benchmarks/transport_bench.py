"""Benchmark (not a test): the same scenario in-process and over worker processes, in one run.

Prints, for each placement, the wall time of the run itself (``stats.wall_seconds``: windows only, after the
workers joined and built their agents) and of the whole ``execute`` call (with process start-up), windows per
second, events per window and messages per window, then the ratio of each placement to in-process, and checks
that every digest is the same.

Scenarios:

* ``storm`` (default): a dense reconnect storm. ``lookup-storm-broker-crash`` with ``--set`` overrides: 5 brokers
  start owning 256 bundles (``cluster.start = "preassigned"``, so no start-up lookups), ``--clients`` clients
  (12,000 by default) each producing 8 topics; broker-2 crashes at 5 s, and every client with a topic on it
  (about 10,000) retries its lookups with back-off until the store expires broker-2's session (30 s), then
  reconnects elsewhere. The run stops at 40 s. Windows hold tens of events.
* ``startup-storm``: the sparse one of the earlier benchmark — 20 brokers, ``--clients`` clients whose first
  lookups are spread over 5 s, a crash at 30 s that sends only broker-2's share (about 1/20) of the clients into
  a storm, 90 s. Windows hold 2 or 3 events, so it measures the barrier's fixed cost per window.
* ``pulsar-large``: the built-in scale scenario, multiplied by ``--scale`` (its full size takes minutes per
  virtual minute).
* any other built-in name or scenario file, as it is.

Also printed: how many clients lost a connection (``topic_disconnected``) — the size of the storm.

``--agents`` takes any ``--agents`` mode of ``run`` plus ``tcp:N``: N insecure tcp workers on 127.0.0.1, started
as ``clusteremu agent`` processes by the benchmark. The first placement is the reference of the ratios.
``--repeat R`` runs the whole list R times in a row; each round's ratios are taken within that round (the
placements of one round run minutes apart at most, under the same load), and the summary gives the min, median
and max of each placement's ratio over the rounds. The machine's load averages (``os.getloadavg``) are printed
before and after.

Usage::

    python benchmarks/transport_bench.py [storm|startup-storm|pulsar-large|NAME] [--clients N] [--scale 0.05]
        [--until S] [--agents inproc procs:2 tcp:2] [--repeat 3] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from clusteremu.emulator.runner import execute  # noqa: E402
from clusteremu.emulator.transport.launch import ZmqOptions  # noqa: E402
from clusteremu.emulator.trace.reader import open_run  # noqa: E402
from clusteremu.scenarios.loader import load_scenario  # noqa: E402


def storm_overrides(clients: int) -> list[str]:
    return ["cluster.brokers=5", f"cluster.clients={clients}", "cluster.start=preassigned",
            "workload.namespaces.0.bundles=256", f"workload.tasks.0.topics={clients * 8}", "faults.0.at=5.0"]


def startup_storm_overrides(clients: int) -> list[str]:
    return ["cluster.brokers=20", f"cluster.clients={clients}", "cluster.start_jitter_s=5.0",
            "workload.namespaces.0.bundles=256", f"workload.tasks.0.topics={clients * 2}",
            "faults.0.at=30.0"]


#: (overrides, default clients, default virtual seconds) of the two storms
STORMS = {"storm": (storm_overrides, 12_000, 40.0), "startup-storm": (startup_storm_overrides, 10_000, 90.0)}


def build(args: argparse.Namespace):
    if args.scenario in STORMS:
        overrides, clients, _ = STORMS[args.scenario]
        return load_scenario("lookup-storm-broker-crash", overrides(args.clients or clients))
    if args.scenario == "pulsar-large":
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from pulsar_large_bench import scaled

        return scaled(load_scenario("pulsar-large"), args.scale)
    return load_scenario(args.scenario)


def disconnected_clients(run_dir: Path) -> int:
    """Clients that lost at least one topic connection during the run."""
    return len({e.agent for e in open_run(run_dir).events() if e.kind == "topic_disconnected"})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_placement(scenario, agents: str, until: float, run_dir: Path):
    """``execute`` at one placement; ``tcp:N`` starts N insecure tcp workers on 127.0.0.1 first."""
    if not agents.startswith("tcp:"):
        return execute(scenario, run_dir, until=until, agents=agents)
    n = int(agents[4:])
    port = _free_port()
    workers = [subprocess.Popen([sys.executable, "-m", "clusteremu", "agent", "--connect", f"tcp://127.0.0.1:{port}",
                                 "--insecure"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
               for _ in range(n)]
    try:
        return execute(scenario, run_dir, until=until, agents="tcp",
                       transport=ZmqOptions(bind=f"tcp://127.0.0.1:{port}", expect=n, insecure=True))
    finally:
        for w in workers:
            try:
                w.wait(timeout=30)
            except subprocess.TimeoutExpired:
                w.kill()
                w.wait()


def measure(scenario, agents: str, until: float, tmp: Path, count_storm: bool = True) -> dict:
    t0 = time.perf_counter()
    run_dir = tmp / agents.replace(":", "-")
    r = run_placement(scenario, agents, until, run_dir)
    total = time.perf_counter() - t0
    s = r.stats
    row = {
        "disconnected_clients": disconnected_clients(run_dir) if count_storm else None,
        "agents": agents,
        "total_wall_s": round(total, 3),
        "run_wall_s": round(s.wall_seconds, 3),
        "windows": s.windows,
        "events": r.manifest["events"]["count"],
        "messages": s.messages,
        "windows_per_s": round(s.windows / s.wall_seconds, 1) if s.wall_seconds else None,
        "events_per_window": round(r.manifest["events"]["count"] / s.windows, 2) if s.windows else None,
        "messages_per_window": round(s.messages / s.windows, 2) if s.windows else None,
        "us_per_window": round(1e6 * s.wall_seconds / s.windows, 1) if s.windows else None,
        "digest": r.digest,
        "mesh": r.manifest.get("transport", {}).get("mesh"),
    }
    import shutil

    shutil.rmtree(run_dir, ignore_errors=True)  # a storm's trace is large; the next placement needs the disk
    return row


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenario", nargs="?", default="storm")
    ap.add_argument("--clients", type=int, default=None, help="storms: number of clients (12,000 / 10,000)")
    ap.add_argument("--scale", type=float, default=0.05, help="pulsar-large: size factor")
    ap.add_argument("--until", type=float, default=None, help="virtual seconds to run (storms: 40 / 90; else 90)")
    ap.add_argument("--agents", nargs="+", default=["inproc", "procs:2"])
    ap.add_argument("--repeat", type=int, default=1, help="rounds of the whole --agents list (ratios per round)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    scenario = build(args)
    if args.until is None:
        args.until = STORMS[args.scenario][2] if args.scenario in STORMS else 90.0
    load_before = _load()
    rounds: list[list[dict]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            rows = []
            for j, agents in enumerate(args.agents):
                # the storm's size is counted from the trace once; it is the same at every placement
                rows.append(measure(scenario, agents, args.until, Path(tmp), count_storm=i == 0 and j == 0))
            base = rows[0]
            for row in rows:
                row["run_ratio"] = round(row["run_wall_s"] / base["run_wall_s"], 3)
                row["total_ratio"] = round(row["total_wall_s"] / base["total_wall_s"], 3)
            rounds.append(rows)
            if not args.json:
                _print_round(args, scenario, i, rows)
    load_after = _load()
    same = len({r["digest"] for rows in rounds for r in rows}) == 1
    summary = {}
    for j, agents in enumerate(args.agents):
        ratios = sorted(rows[j]["run_ratio"] for rows in rounds)
        walls = sorted(rows[j]["run_wall_s"] for rows in rounds)
        summary[agents] = {"ratio_min": ratios[0], "ratio_median": statistics.median(ratios), "ratio_max": ratios[-1],
                           "run_wall_s_min": walls[0], "run_wall_s_median": statistics.median(walls),
                           "run_wall_s_max": walls[-1]}
    if args.json:
        print(json.dumps({"scenario": scenario.name, "variant": args.scenario, "until": args.until,
                          "same_digest": same, "load_before": load_before, "load_after": load_after,
                          "summary": summary, "rounds": rounds}, indent=2))
    else:
        print(f"load averages (1, 5, 15 min) before {load_before}, after {load_after}; "
              f"digests {'identical' if same else 'DIFFER'} over {args.repeat} round(s)")
        print(f"{'agents':10s} {'ratio min':>9s} {'median':>7s} {'max':>7s} {'run s min':>9s} {'median':>7s} {'max':>7s}")
        for agents, v in summary.items():
            print(f"{agents:10s} {v['ratio_min']:9.3f} {v['ratio_median']:7.3f} {v['ratio_max']:7.3f} "
                  f"{v['run_wall_s_min']:9.2f} {v['run_wall_s_median']:7.2f} {v['run_wall_s_max']:7.2f}")
    return 0 if same else 1


def _print_round(args: argparse.Namespace, scenario, i: int, rows: list[dict]) -> None:
    storm = f"; {rows[0]['disconnected_clients']} clients disconnected" if i == 0 else ""
    print(f"round {i + 1}: {scenario.name} ({args.scenario}) for {args.until:g} s of virtual time{storm}; "
          f"load {_load()}")
    print(f"{'agents':10s} {'run s':>8s} {'total s':>8s} {'ratio':>6s} {'windows':>8s} {'win/s':>8s} "
          f"{'us/win':>7s} {'ev/win':>7s} {'msg/win':>7s}")
    for r in rows:
        print(f"{r['agents']:10s} {r['run_wall_s']:8.2f} {r['total_wall_s']:8.2f} {r['run_ratio']:6.2f} "
              f"{r['windows']:8d} {r['windows_per_s']:8.0f} {r['us_per_window']:7.0f} "
              f"{r['events_per_window']:7.1f} {r['messages_per_window']:7.1f}")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
