"""Benchmark (not a test): the ``pulsar-large`` scenario in-process, against a bare SimPy loop.

Runs the built-in ``pulsar-large`` scenario (1,000 brokers, 100,000 bundles, 1,000,000 topics, one hour of virtual
time) or a scaled copy of it, and prints:

* set-up time (building the agents from the scenario) and run time (wall clock), with the CPU time this process
  spent in the run (``cpu_s``: less sensitive to other load on the machine than the wall clock; worker processes
  of ``procs:N`` placements are not in it);
* events written and events per second of run time;
* the events per second of a bare SimPy loop of timeouts measured in the same process — what SimPy itself can do
  on this machine, the physical limit of any SimPy model — and the ratio of the two;
* peak resident memory of the process.

``--scale F`` multiplies brokers, clients, bundles and topics by F (e.g. 0.1 for a tenth of the cluster);
``--until S`` shortens the virtual time. ``--agents MODE [MODE ...]`` runs the scenario at each placement in turn
(e.g. ``inproc procs:2``; default ``inproc``), in one process start, and prints each run's wall time, its ratio to
the first and whether every digest is the same, with the machine's load averages before and after. The
scenario's bundles are dealt evenly, so its shedding finds nothing
to move; ``--cpu-spike`` adds another process burning 8 of the 16 cores on ten brokers' hosts (broker-10 to
broker-19) from 1,200 s to 2,100 s, so that ThresholdShedder unloads bundles and their clients reconnect — the
unload path at scale. The unloads and reconnections are counted from the trace after the timed run. Usage::

    python benchmarks/pulsar_large_bench.py [--scale 1.0] [--until 3600] [--cpu-spike] [--agents inproc procs:2] [--json]
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import simpy

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from clusteremu.emulator.models import load_model  # noqa: E402
from clusteremu.emulator.runner import execute  # noqa: E402
from clusteremu.emulator.trace import open_run  # noqa: E402
from clusteremu.scenarios.loader import load_scenario, validate_scenario  # noqa: E402


def scaled(scenario, scale: float):
    """The scenario with brokers, clients, bundles and topics multiplied by ``scale`` (at least one of each)."""
    data = copy.deepcopy(scenario.data)
    for key in ("brokers", "clients"):
        data["cluster"][key] = max(1, round(data["cluster"][key] * scale))
    for ns in data["workload"]["namespaces"]:
        ns["bundles"] = max(1, round(ns["bundles"] * scale))
    for task in data["workload"]["tasks"]:
        task["topics"] = max(1, round(task["topics"] * scale))
    return validate_scenario(data, f"{scenario.source} (scale {scale})")


CPU_SPIKE = {"kind": "cpu_spike", "at": 1200.0, "duration_s": 900.0, "agents": ["broker-1?"], "cores": 8.0,
             "label": "another process on ten brokers' hosts"}


def with_cpu_spike(scenario):
    """The scenario with :data:`CPU_SPIKE` added to its faults."""
    data = copy.deepcopy(scenario.data)
    data["faults"] = [*data.get("faults", []), dict(CPU_SPIKE)]
    return validate_scenario(data, f"{scenario.source} (with a CPU spike)")


def bare_simpy_rate(processes: int = 1000, steps: int = 300_000) -> float:
    """Timeouts per second of ``processes`` SimPy processes that only wait (periods spread like timers)."""
    env = simpy.Environment()
    per = steps // processes

    def proc(env: simpy.Environment, period: float):
        for _ in range(per):
            yield env.timeout(period)

    for i in range(processes):
        env.process(proc(env, 1.0 + (i % 97) / 97.0))
    t0 = time.perf_counter()
    env.run()
    return per * processes / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--until", type=float, default=None, help="virtual seconds (default: the scenario's hour)")
    ap.add_argument("--cpu-spike", action="store_true", help="add a CPU spike on ten brokers (see above)")
    ap.add_argument("--agents", nargs="+", default=["inproc"], help="placements to run in turn (ratios to the first)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)

    base = load_scenario("pulsar-large", [])
    if args.cpu_spike:
        base = with_cpu_spike(base)
    scenario = scaled(base, args.scale) if args.scale != 1.0 else base
    model = load_model("pulsar")
    t0 = time.perf_counter()
    specs = model.agents(scenario.data)
    setup_s = time.perf_counter() - t0

    load_before = [round(x, 2) for x in os.getloadavg()]
    placements = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, agents in enumerate(args.agents):
            t0, c0 = time.perf_counter(), time.process_time()
            result = execute(scenario, Path(tmp) / f"run-{i}", until=args.until, agents=agents)
            wall_s = time.perf_counter() - t0
            placements.append({"agents": agents, "wall_s": round(wall_s, 2),
                               "cpu_s": round(time.process_time() - c0, 2),
                               "run_wall_s": round(result.stats.wall_seconds, 2), "digest": result.digest})
            if i == 0:
                first, first_wall = result, wall_s
                kinds = Counter(e.kind for e in open_run(result.run_dir).events())
    load_after = [round(x, 2) for x in os.getloadavg()]
    result, wall_s = first, first_wall
    for p in placements:
        p["ratio"] = round(p["wall_s"] / placements[0]["wall_s"], 3)
        p["run_ratio"] = round(p["run_wall_s"] / placements[0]["run_wall_s"], 3)
    events = result.manifest["events"]["count"]
    model_rate = events / wall_s
    bare_rate = bare_simpy_rate()
    figures = {
        "scale": args.scale,
        "agents": len(specs),
        "virtual_s": args.until or scenario.duration_s,
        "setup_s": round(setup_s, 2),
        "wall_s": round(wall_s, 2),
        "cpu_s": placements[0]["cpu_s"],
        "events": events,
        "windows": result.stats.windows,
        "unloads": kinds["bundle_unloaded"],
        "reconnections": kinds["topic_connected"],
        "events_per_s": round(model_rate),
        "bare_simpy_timeouts_per_s": round(bare_rate),
        "ratio_to_bare_simpy": round(model_rate / bare_rate, 4),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "placements": placements,
        "same_digest": len({p["digest"] for p in placements}) == 1,
        "load_before": load_before,
        "load_after": load_after,
    }
    if args.json:
        print(json.dumps(figures))
    else:
        for k, v in figures.items():
            if k != "placements":
                print(f"{k:>26}: {v}")
        for p in placements:
            print(f"{p['agents']:>26}: wall {p['wall_s']} s (run {p['run_wall_s']} s), ratio {p['ratio']} "
                  f"(run {p['run_ratio']})")
    return 0 if figures["same_digest"] else 1


if __name__ == "__main__":
    sys.exit(main())
