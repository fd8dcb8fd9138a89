"""Benchmark (not a test): the built-in ``storm-large`` scenario in-process.

``storm-large`` is the issue's scale target: 500 supervisors in 20 racks of 25, 300 topologies of 30 users
arriving over a virtual day, supervisor failures, Storm's default timers (Nimbus rounds every 10 s, supervisor
heartbeats every 5 s). The benchmark runs it (by default the whole day; ``--until`` runs a prefix, ``--set``
applies scenario overrides such as ``cluster.supervisors.0.count=5``) and prints the set-up and run times (wall
clock), the events written and per second, the scheduling rounds and the wall time per round, the assignments
changed, evictions, supervisors declared dead, the messages delivered, the digest and the peak resident memory.
Usage::

    python benchmarks/storm_large_bench.py [--until 86400] [--set key=value ...] [--json]
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
from clusteremu.scenarios.loader import load_scenario  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--until", type=float, default=None, help="virtual seconds to run (default: the scenario's day)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a scenario override")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    t0 = time.perf_counter()
    sc = load_scenario("storm-large", a.set)
    setup = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        t1 = time.perf_counter()
        r = execute(sc, Path(tmp) / "run", until=a.until)
        run_s = time.perf_counter() - t1
        kinds: Counter = Counter()
        evicted = 0
        for e in open_run(r.run_dir).events():
            kinds[e.kind] += 1
            if e.kind == "topology_evicted" and not e.rolled_back:
                evicted += 1
    rounds = kinds["scheduling_round"]
    out = {
        "virtual_s": r.manifest.get("until", a.until), "overrides": a.set,
        "setup_s": round(setup, 3), "run_s": round(run_s, 3), "events": r.stats.events,
        "messages": r.stats.messages,
        "events_per_s": round(r.stats.events / run_s), "rounds": rounds,
        "wall_ms_per_round": round(1000 * run_s / max(1, rounds), 2),
        "topologies_submitted": kinds["topology_submitted"], "assignments_changed": kinds["assignment_changed"],
        "evictions": evicted, "supervisors_dead": kinds["supervisor_dead"],
        "top_kinds": dict(kinds.most_common(6)), "digest": r.digest,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    if a.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:22s} {v}")


if __name__ == "__main__":
    main()
