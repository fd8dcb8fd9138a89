"""Benchmark (not a test): a large Storm cluster in-process.

Builds a scenario in memory — ``--supervisors`` supervisors (Storm's default 400 % CPU, 4 GB, 4 slots) in racks of
20, ``--topologies`` topologies of ``--users`` users (a spout and two bolts, 6 to 14 executors) submitted over the
first half of the run, a tenth of them killed later, and two supervisor host crashes — and runs it for ``--until``
virtual seconds with three Nimbus daemons. Prints the set-up and run times (wall clock), the events written and
per second, the scheduling rounds and the wall time per round, the assignments changed, evictions, supervisors
declared dead, and the peak resident memory. Usage::

    python benchmarks/storm_large_bench.py [--supervisors 200] [--topologies 150] [--users 6] [--until 1800] [--json]
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from clusteremu.emulator.runner import execute  # noqa: E402
from clusteremu.emulator.trace import open_run  # noqa: E402
from clusteremu.scenarios.loader import validate_scenario  # noqa: E402


def scenario(supervisors: int, topologies: int, users: int, until: float) -> dict:
    """The benchmark's scenario as a raw dict (validated by the caller)."""
    racks = [{"count": min(20, supervisors - i), "rack": f"/rack-{i // 20}"} for i in range(0, supervisors, 20)]
    names = [f"u{j}" for j in range(users)]
    tops = []
    for k in range(topologies):
        width = 2 + k % 5
        submit = 10.0 + (until / 2) * k / topologies
        entry = {
            "name": f"t{k}", "user": names[k % users], "submit_at_s": submit, "topology.priority": 5 * (k % 7),
            "components": [
                {"id": "spout", "type": "spout", "parallelism": 2},
                {"id": "a", "type": "bolt", "parallelism": width, "inputs": ["spout"]},
                {"id": "b", "type": "bolt", "parallelism": width, "inputs": ["a"],
                 "topology.component.cpu.pcore.percent": 20.0},
            ],
        }
        if k % 10 == 3:
            entry["kill_at_s"] = submit + until / 4
        tops.append(entry)
    pools = {u: {"cpu": 400.0 * supervisors / (2 * users), "memory": 4096.0 * supervisors / (2 * users)}
             for u in names[: users // 2]}
    return {
        "scenario": {"name": "storm-large-bench", "model": "storm", "duration_s": until, "seed": 1},
        "network": {"latency": {"dist": "uniform", "min_ms": 0.5, "max_ms": 1.5}},
        "cluster": {"nimbuses": 3, "supervisors": racks, "gc": {"young_every_s": 30.0, "young_pause_ms": 20.0}},
        "config": {"resource.aware.scheduler.user.pools": pools},
        "workload": {"topologies": tops},
        "faults": [
            {"kind": "restart", "at": until * 0.3, "duration_s": 120.0, "agents": ["supervisor-3"]},
            {"kind": "crash", "at": until * 0.6, "agents": [f"supervisor-{supervisors // 2}"]},
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--supervisors", type=int, default=200)
    ap.add_argument("--topologies", type=int, default=150)
    ap.add_argument("--users", type=int, default=6)
    ap.add_argument("--until", type=float, default=1800.0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    t0 = time.perf_counter()
    sc = validate_scenario(scenario(a.supervisors, a.topologies, a.users, a.until), "storm_large_bench")
    setup = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        t1 = time.perf_counter()
        r = execute(sc, Path(tmp) / "run")
        run_s = time.perf_counter() - t1
        kinds: Counter = Counter()
        evicted = 0
        for e in open_run(r.run_dir).events():
            kinds[e.kind] += 1
            if e.kind == "topology_evicted" and not e.rolled_back:
                evicted += 1
    out = {
        "supervisors": a.supervisors, "topologies": a.topologies, "virtual_s": a.until,
        "setup_s": round(setup, 3), "run_s": round(run_s, 3), "events": r.stats.events,
        "events_per_s": round(r.stats.events / run_s), "rounds": kinds["scheduling_round"],
        "wall_ms_per_round": round(1000 * run_s / max(1, kinds["scheduling_round"]), 2),
        "assignments_changed": kinds["assignment_changed"], "evictions": evicted,
        "supervisors_dead": kinds["supervisor_dead"], "digest": r.digest,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    if a.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:22s} {v}")


if __name__ == "__main__":
    main()
