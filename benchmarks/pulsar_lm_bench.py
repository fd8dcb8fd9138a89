"""Benchmark (not a test): Pulsar's published load-manager benchmark, emulated, beside the published figures.

Runs the eight ``lm-bench-*`` scenarios (rolling restart of 100 brokers with 65,000 bundles and 100,000
publishers; 5 brokers becoming 10, and 10 becoming 5, with 10,000 publishers in 100 bundles; 1 bundle of 10,000
hot topics split towards 128 on 10 brokers; each with the modular and the extensible load manager) for each seed, each run in its own ``clusteremu run`` process bounded by
``--timeout``; analyses them in one Spark job (``clusteremu analyze``'s pipeline, the ``lm_benchmark`` figures);
and prints the side-by-side table — published figure, emulated mean and spread over the seeds, the
modular/extensible ratio published and emulated, publish latency marked as not modelled — which is also what
``clusteremu compare --article RUNS`` prints on the same runs; then each run's wall time, with the machine's load
averages before and after.

``--scale F`` multiplies the rolling restart's bundles, topics and clients by F (its 100 brokers stay: the
restart's waves are defined over them) to measure at a reduced size first; the scale-out, scale-in and split
pairs run at their full size always. A run that exceeds ``--timeout`` is reported as such and left out of the table (nothing is made up
for it). Usage::

    python benchmarks/pulsar_lm_bench.py [--seeds 1..3] [--scale 1.0] [--only restart|scale-out|scale-in|split]
                                         [--timeout 1800] [--out DIR] [--format markdown|json]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from clusteremu.tools.analysis.pulsar_lm_benchmark import lm_benchmark_tables  # noqa: E402
from clusteremu.tools.compare import load_summaries, tables_markdown  # noqa: E402

EXPERIMENTS = {
    "restart": ("lm-bench-rolling-restart-modular", "lm-bench-rolling-restart-extensible"),
    "scale-out": ("lm-bench-scale-out-modular", "lm-bench-scale-out-extensible"),
    "scale-in": ("lm-bench-scale-in-modular", "lm-bench-scale-in-extensible"),
    "split": ("lm-bench-split-modular", "lm-bench-split-extensible"),
}
#: The rolling restart's published size, scaled by ``--scale``.
RESTART_SIZE = {"workload.namespaces.0.bundles": 65_000, "workload.tasks.0.topics": 100_000, "cluster.clients": 100}


def seeds_of(text: str) -> list[int]:
    """``1..3`` or ``1,4,7``."""
    if ".." in text:
        a, b = text.split("..", 1)
        return list(range(int(a), int(b) + 1))
    return [int(s) for s in text.split(",") if s.strip()]


def run_one(name: str, seed: int, out: Path, overrides: list[str], timeout: float) -> dict:
    """One run in its own process; its wall time, or a timeout."""
    cmd = [sys.executable, "-c", "import sys; from clusteremu.cli import main; sys.exit(main())", "run", name, "--seed", str(seed), "--out", str(out), "--quiet",
           "--format", "json", *[a for o in overrides for a in ("--set", o)]]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"scenario": name, "seed": seed, "wall_s": round(time.perf_counter() - t0, 1), "status": "timeout"}
    wall = round(time.perf_counter() - t0, 1)
    if proc.returncode != 0:
        return {"scenario": name, "seed": seed, "wall_s": wall, "status": f"exit {proc.returncode}",
                "error": proc.stderr.strip().splitlines()[-1:] or [""]}
    return {"scenario": name, "seed": seed, "wall_s": wall, "status": "ok", "dir": str(out),
            "load_after": [round(x, 2) for x in os.getloadavg()]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1..3", help="seeds, e.g. 1..3 or 1,5 (default 1..3)")
    ap.add_argument("--scale", type=float, default=1.0, help="rolling restart's bundles, topics, clients x F")
    ap.add_argument("--only", choices=sorted(EXPERIMENTS), help="one experiment only")
    ap.add_argument("--timeout", type=float, default=1800.0, help="wall seconds per run (default 1800)")
    ap.add_argument("--out", type=Path, default=None, help="keep the runs here (default: a temporary directory)")
    ap.add_argument("--format", choices=("markdown", "json"), default="markdown")
    args = ap.parse_args(argv)

    seeds = seeds_of(args.seeds)
    restart_overrides = [] if args.scale == 1.0 else \
        [f"{k}={max(1, round(v * args.scale))}" for k, v in RESTART_SIZE.items()]
    names = [n for k, ns in EXPERIMENTS.items() if args.only in (None, k) for n in ns]
    load_before = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory() as tmp:
        root = args.out or Path(tmp)
        runs = []
        for seed in seeds:
            for name in names:
                overrides = restart_overrides if "rolling-restart" in name else []
                r = run_one(name, seed, root / f"{name}-seed{seed}", overrides, args.timeout)
                runs.append(r)
                print(f"{name} seed {seed}: {r['status']}, {r['wall_s']} s", file=sys.stderr)
        done = [r["dir"] for r in runs if r["status"] == "ok"]
        t0 = time.perf_counter()
        tables = lm_benchmark_tables(load_summaries(done)) if done else []
        analyze_s = round(time.perf_counter() - t0, 1)
    result = {"seeds": seeds, "scale": args.scale, "runs": runs, "analyze_wall_s": analyze_s, "tables": tables,
              "load_before": load_before, "load_after": [round(x, 2) for x in os.getloadavg()]}
    if args.format == "json":
        print(json.dumps(result, default=str))
    else:
        print(tables_markdown(tables) if tables else "no run finished: no table\n")
        print(f"rolling restart scale {args.scale:g}; seeds {args.seeds}; load average before {load_before}, "
              f"after {result['load_after']}; analysis of all runs {analyze_s} s\n")
        print("| scenario | seed | status | wall (s) | load after |\n|---|---|---|---|---|")
        for r in runs:
            print(f"| {r['scenario']} | {r['seed']} | {r['status']} | {r['wall_s']} | {r.get('load_after', '')} |")
    return 0 if all(r["status"] == "ok" for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
