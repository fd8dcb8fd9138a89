"""Benchmark (not a test): the rating sweep, ``clusteremu sweep --suite article-avgshedder --seeds 1..10``, and
where its time goes.

Three ways to measure, each in a fresh process (a sweep starts its own Spark JVM):

* ``--stages``: this tree's :func:`clusteremu.tools.sweep.sweep` (plan, then every stage it times itself) on a
  suite and seeds; prints one JSON object with the stage times and the load average before and after;
* ``--serial-stages``: the sweep as a plain sequence of the public steps that every version of clusteremu has
  (plan, Spark start, the runs in the pool, the analysis job, writing each run's analysis with its report,
  comparison), each timed; run it with ``PYTHONPATH`` on an older tree to get that tree's breakdown;
* default: the whole ``clusteremu sweep ... --format json`` command, wall time, for this tree and (with
  ``--before DIR``) for an older tree importable from ``DIR`` (see below), alternating ``--repeat`` times so that
  both see the same machine load; prints each time, the load averages and the ratio, and checks that both
  printed the same comparison.

An older tree: ``git archive <commit> | tar -x -C /tmp/old``, then a folder ``/tmp/old/pp/clusteremu`` holding
``/tmp/old/clusteremu``'s files and one symbolic link per top-level package folder (``base``, ``emulator``,
``strategies``, ``agents``, ``scenarios``, ``tools``, ``systems``) — the layout the editable install maps —
and ``--before /tmp/old/pp`` (``--after`` takes a tree of the same layout in place of the installed one). Usage::

    python benchmarks/sweep_bench.py [--suite article-avgshedder] [--seeds 1..10] [--before DIR] [--repeat 1]
                                     [--after DIR] [--work DIR] [--timeout 900]
    python benchmarks/sweep_bench.py --stages [--reports] --out DIR
    PYTHONPATH=/tmp/old/pp python benchmarks/sweep_bench.py --serial-stages --out DIR
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def _tree() -> str:
    """Where the clusteremu measured was imported from."""
    import clusteremu.tools.sweep as module

    return str(Path(module.__file__).resolve().parent.parent)


def _points(suite: str, seeds: str, out: Path) -> tuple[list[Any], float]:
    from clusteremu.tools.sweep import parse_seeds, plan, suites

    start = time.perf_counter()
    points = plan(list(suites()[suite].scenarios), [], parse_seeds(seeds), out)
    return points, time.perf_counter() - start


def stages(args: argparse.Namespace) -> dict[str, Any]:
    """This tree's sweep, timed by its own stages."""
    from clusteremu.tools.sweep import sweep

    load_before = loadavg()
    start = time.perf_counter()
    points, planning = _points(args.suite, args.seeds, args.out)
    result = sweep(points, args.out, progress=False, reports=args.reports)
    total = time.perf_counter() - start
    return {"tree": _tree(), "runs": len(points), "failed": len(result.failed), "stages": {"plan": planning, **result.stages},
            "total_s": total, "loadavg_before": load_before, "loadavg_after": loadavg()}


def serial_stages(args: argparse.Namespace) -> dict[str, Any]:
    """The sweep as one public step after another (works on any version), each step timed."""
    from clusteremu.tools.analysis import AnalysisOptions, analyze, write_analysis
    from clusteremu.tools.analysis.runs import open_run_info
    from clusteremu.tools.compare import comparison, group_runs, load_summaries
    from clusteremu.tools.spark.session import spark_session
    from clusteremu.tools.sweep import run_local

    load_before = loadavg()
    times: dict[str, float] = {}
    start = time.perf_counter()
    points, times["plan"] = _points(args.suite, args.seeds, args.out)

    def step(name: str, since: float) -> float:
        now = time.perf_counter()
        times[name] = now - since
        return now

    t = time.perf_counter()
    spark = spark_session()
    t = step("spark start", t)
    records = run_local(points, progress=False)
    t = step("runs", t)
    done = [r for r in records if r.ok]
    analyses = analyze(spark, [open_run_info(i, r.point.run_dir) for i, r in enumerate(done)], AnalysisOptions())
    t = step("analysis (Spark job)", t)
    spark.stop()
    t = step("spark stop", t)
    dirs = [write_analysis(a, Path(a.info.dir) / "analysis", report=False) for a in analyses]
    t = step("writing the analyses", t)
    if args.reports:
        from clusteremu.tools.report import render_report

        for d in dirs:
            render_report(d)
        t = step("reports", t)
    summaries = load_summaries([r.point.run_dir for r in done], analyze_missing=False)
    labels = {str(Path(r.point.run_dir)): r.point.label for r in done}
    comparison(group_runs(summaries, lambda s: labels[str(s.dir)]), "point")
    step("comparison and rating", t)
    return {"tree": _tree(), "runs": len(points), "failed": len(points) - len(done),
            "stages": times, "total_s": time.perf_counter() - start, "loadavg_before": load_before, "loadavg_after": loadavg()}


def whole(args: argparse.Namespace) -> None:
    """The CLI command, this tree against ``--before``, alternating."""
    trees = [("after", args.after)] + ([("before", args.before)] if args.before else [])
    work = Path(args.work or tempfile.mkdtemp(prefix="sweep-bench-"))
    times: dict[str, list[float]] = {name: [] for name, _ in trees}
    outputs: dict[str, str] = {}
    order = trees if not args.before_first else trees[::-1]
    for rep in range(args.repeat):
        for name, path in order:
            env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
            if path:
                env["PYTHONPATH"] = str(path)
            else:
                env.pop("PYTHONPATH", None)
            out = work / f"{name}-{rep}"
            cmd = [str(VENV_BIN / "clusteremu"), "sweep", "--suite", args.suite, "--seeds", args.seeds, "--format", "json",
                   "--out", str(out)] + (["--reports"] if args.reports and name == "after" else [])
            load_before = loadavg()
            start = time.perf_counter()
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout, cwd=work)
            wall = time.perf_counter() - start
            times[name].append(wall)
            result = json.loads(proc.stdout) if proc.returncode in (0, 1) and proc.stdout.strip() else {}
            # The comparison, with this sweep's directory written the same for both trees.
            outputs[name] = json.dumps({k: result.get(k) for k in ("groups", "rows")}, sort_keys=True).replace(str(out), "<out>")
            ok = sum(1 for r in result.get("runs", []) if r.get("ok"))
            print(f"{name:6s} rep {rep}: {wall:7.1f} s  exit {proc.returncode}  runs ok {ok}  loadavg {load_before} -> {loadavg()}",
                  flush=True)
            stderr = [line for line in proc.stderr.splitlines() if line.strip()]
            if stderr:
                print("        stderr: " + " | ".join(stderr[-3:]), flush=True)
    if args.before:
        best = {name: min(v) for name, v in times.items()}
        print(f"before/after: {best['before'] / best['after']:.2f}x (best of {args.repeat} each)")
        print("same groups and rating rows:", outputs["before"] == outputs["after"])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", default="article-avgshedder")
    p.add_argument("--seeds", default="1..10")
    p.add_argument("--reports", action="store_true", help="render every run's report too")
    p.add_argument("--stages", action="store_true", help="this tree's sweep, by stage (JSON)")
    p.add_argument("--serial-stages", action="store_true", help="the sweep step by step, any version (JSON)")
    p.add_argument("--out", type=Path, default=None, help="sweep directory of --stages / --serial-stages")
    p.add_argument("--before", type=Path, default=None, help="an older tree to compare with (see the module docs)")
    p.add_argument("--after", type=Path, default=None, help="measure this tree instead of the installed one (same layout)")
    p.add_argument("--before-first", action="store_true", help="run the older tree first in each repetition")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--work", default=None, help="where the whole-command sweeps go (default: a new temporary directory)")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds allowed to each whole-command sweep")
    args = p.parse_args()
    if args.stages or args.serial_stages:
        if args.out is None:
            args.out = Path(tempfile.mkdtemp(prefix="sweep-bench-")) / "sweep"
        print(json.dumps(stages(args) if args.stages else serial_stages(args), indent=1))
        return 0
    whole(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
