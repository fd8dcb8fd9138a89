"""Benchmark (not a test): the same scenario in-process and over worker processes, in one run.

Prints, for each placement, the wall time of the run itself (``stats.wall_seconds``: windows only, after the
workers joined and built their agents) and of the whole ``execute`` call (with process start-up), windows per
second, events per window and messages per window, then the ratio of each placement to in-process, and checks
that every digest is the same.

Scenarios:

* ``storm`` (default): a reconnect storm — ``lookup-storm-broker-crash`` scaled up with ``--set`` overrides to
  ``--clients`` clients (10,000 by default) on 20 brokers; the crash comes at 30 s so the storm is inside the
  run.
* ``pulsar-large``: the built-in scale scenario, multiplied by ``--scale`` (its full size takes minutes per
  virtual minute).
* any other built-in name or scenario file, as it is.

Usage::

    python benchmarks/transport_bench.py [storm|pulsar-large|NAME] [--clients 10000] [--scale 0.05]
        [--until 90] [--agents inproc procs:2] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from emulator.runner import execute  # noqa: E402
from scenarios.loader import load_scenario  # noqa: E402


def storm_overrides(clients: int) -> list[str]:
    return ["cluster.brokers=20", f"cluster.clients={clients}", "cluster.start_jitter_s=5.0",
            "workload.namespaces.0.bundles=256", f"workload.tasks.0.topics={clients * 2}",
            "faults.0.at=30.0"]


def build(args: argparse.Namespace):
    if args.scenario == "storm":
        return load_scenario("lookup-storm-broker-crash", storm_overrides(args.clients))
    if args.scenario == "pulsar-large":
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from pulsar_large_bench import scaled

        return scaled(load_scenario("pulsar-large"), args.scale)
    return load_scenario(args.scenario)


def measure(scenario, agents: str, until: float, tmp: Path) -> dict:
    t0 = time.perf_counter()
    r = execute(scenario, tmp / agents.replace(":", "-"), until=until, agents=agents)
    total = time.perf_counter() - t0
    s = r.stats
    return {
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
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenario", nargs="?", default="storm")
    ap.add_argument("--clients", type=int, default=10_000, help="storm: number of clients")
    ap.add_argument("--scale", type=float, default=0.05, help="pulsar-large: size factor")
    ap.add_argument("--until", type=float, default=90.0, help="virtual seconds to run")
    ap.add_argument("--agents", nargs="+", default=["inproc", "procs:2"])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    scenario = build(args)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for agents in args.agents:
            rows.append(measure(scenario, agents, args.until, Path(tmp)))
    base = rows[0]
    for row in rows:
        row["run_ratio"] = round(row["run_wall_s"] / base["run_wall_s"], 3)
        row["total_ratio"] = round(row["total_wall_s"] / base["total_wall_s"], 3)
    same = len({r["digest"] for r in rows}) == 1
    if args.json:
        print(json.dumps({"scenario": scenario.name, "until": args.until, "same_digest": same, "rows": rows}, indent=2))
    else:
        print(f"{scenario.name} for {args.until:g} s of virtual time; digests {'identical' if same else 'DIFFER'}")
        print(f"{'agents':10s} {'run s':>8s} {'total s':>8s} {'ratio':>6s} {'windows':>8s} {'win/s':>8s} "
              f"{'us/win':>7s} {'ev/win':>7s} {'msg/win':>7s}")
        for r in rows:
            print(f"{r['agents']:10s} {r['run_wall_s']:8.2f} {r['total_wall_s']:8.2f} {r['run_ratio']:6.2f} "
                  f"{r['windows']:8d} {r['windows_per_s']:8.0f} {r['us_per_window']:7.0f} "
                  f"{r['events_per_window']:7.1f} {r['messages_per_window']:7.1f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
