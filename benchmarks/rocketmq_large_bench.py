"""Benchmark (not a test): the ``rocketmq-large`` scenario in-process (or in worker processes).

Runs the built-in ``rocketmq-large`` scenario (2,000 consumers in 20 groups, 50 brokers, 25,600 queues, one hour
of virtual time with a scale-out of 100 consumers at 1,200 s and a crash at 2,400 s) or a scaled copy of it, and
prints the set-up time (building the agents), the run's wall time, the events written and events per second,
the messages the agents exchanged and the coordinator's windows, the peak resident memory of the process, how
many times CPython's cyclic collector ran in this process during the first placement's run and its wall seconds
(``collections``, ``collection_s``; a worker process's own are not counted), and the events written per kind
(the trace's shape).

The scenario's consumers consume in closed form (``workload.consumption = "closed_form"``: no consume step, no
pull message); ``--consumption pull`` runs it with the pull model instead (a pull per broker every
``consume_tick_s``, 5 s here) for comparisons within one run.

``--scale F`` multiplies the groups by F (at least one), each with its 100 consumers, its topic's 1,280 queues on
10 of the 50 brokers and its share of the scale-out, so that what a consumer, a group and a topic do is what they
do at full size; ``--until S`` shortens the virtual time. ``--agents MODE [MODE ...]`` runs the scenario at each placement in turn (``inproc procs:2``)
and says whether every digest is the same. ``--figures`` adds what the trace says about the changes (overlap and
orphan queue-seconds after the scale-out, messages consumed twice, queues taken after the scale-out), computed
from the trace after the timed run.

The scenario starts as a running cluster with the heartbeats, route polls and brokers' registrations as leases
and the client-id lists held while steady (``cluster.start = "running"``, ``workload.heartbeats``, ``route_poll``,
``register_broker`` and ``cid_lists`` = ``"lease"``); ``--start cold``, ``--heartbeats messages``, ``--route-poll
messages``, ``--register-broker messages`` and ``--cid-lists messages`` run it with RocketMQ's own start-up,
heartbeats, route polls, registrations and client-id list reads one by one instead.

``--trace-unchanged-rebalances true`` writes every timer rebalance's ``rebalance_result`` (the scenario counts
those that changed nothing instead, ``workload.trace_unchanged_rebalances = false``).

``--count-messages`` adds the messages routed by kind in four spans of virtual time (the first 300 s, the steady
state up to the scale-out, 300 s from the scale-out, the rest), counted as the network routes them (in-process
placements; a separate run, since counting slows it).

``--single-group BROKERS QUEUES CONSUMERS ADDED`` runs instead the previous benchmark's shape, which older code
can run too: a copy of ``rocketmq-scale-out-averagely`` with that many brokers, queues per broker and consumers,
and ADDED more consumers at 300 s (for before/after comparisons: run this file with an exported older tree first
on ``PYTHONPATH``). Usage::

    python benchmarks/rocketmq_large_bench.py [--scale 1.0] [--until 3600] [--agents inproc procs:2] [--figures] [--json]
                                             [--consumption closed_form|pull] [--count-messages]
                                             [--trace-unchanged-rebalances true|false]
    python benchmarks/rocketmq_large_bench.py --single-group 10 16 100 20 --until 400
"""
from __future__ import annotations

import argparse
import copy
import gc
import json
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from clusteremu.emulator.models import load_model  # noqa: E402
from clusteremu.emulator.runner import execute  # noqa: E402
from clusteremu.emulator.trace import open_run  # noqa: E402
from clusteremu.scenarios.loader import load_scenario, validate_scenario  # noqa: E402

NAME = "rocketmq-large"


class _CollectorRuns:
    """The cyclic collector's runs in this process and their wall seconds (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.count = 0
        self.seconds = 0.0
        self._started = 0.0

    def __call__(self, phase: str, _info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.count += 1
            self.seconds += time.perf_counter() - self._started


def scaled(scenario, scale: float):
    """The scenario with its groups (and so its consumers, queues and scale-out) multiplied by ``scale``: each group
    keeps its 100 consumers, its topic on 10 of the 50 brokers and its 5 added consumers, so a consumer, a group
    and a topic do what they do at full size; the crashed consumer is kept if it still exists."""
    data = copy.deepcopy(scenario.data)
    cluster, work = data["cluster"], data["workload"]
    groups = max(1, round(work["groups"] * scale))
    per_group = cluster["consumers"] // work["groups"]
    work["groups"] = groups
    cluster["consumers"] = per_group * groups
    faults = []
    for f in data["faults"]:
        f = dict(f)
        if f["kind"] == "scale_out":
            n = len(f["agents"]) // scenario.data["workload"]["groups"] * groups
            f["agents"] = [f"consumer-{cluster['consumers'] + i + 1}" for i in range(n)]
            f["label"] = f"{n} more consumers"
        elif f["kind"] == "crash":
            f["agents"] = [a if int(a.rsplit("-", 1)[1]) <= cluster["consumers"] else "consumer-1" for a in f["agents"]]
        faults.append(f)
    data["faults"] = faults
    return validate_scenario(data, f"{scenario.source} (scale {scale})")


def single_group(brokers: int, queues: int, consumers: int, added: int):
    """The previous benchmark's shape: ``rocketmq-scale-out-averagely`` at the given size, ``added`` consumers more
    at 300 s."""
    base = load_scenario("rocketmq-scale-out-averagely", [])
    data = copy.deepcopy(base.data)
    data["scenario"]["name"] = "rocketmq-single-group"
    data["cluster"].update(brokers=brokers, queues_per_broker=queues, consumers=consumers)
    data["faults"] = [{"kind": "scale_out", "at": 300.0, "label": f"{added} more consumers",
                       "agents": [f"consumer-{i}" for i in range(consumers + 1, consumers + added + 1)]}]
    return validate_scenario(data, f"{base.source} (single group)")


def trace_figures(run_dir: Path, scale_out_at: float) -> dict:
    """What the trace says about the scale-out and the crash (after the timed run)."""
    from clusteremu.agents.rocketmq.views import RocketMQViews
    from clusteremu.emulator.trace.query import Trace

    v = RocketMQViews(Trace(run_dir))
    return {
        "overlap_queue_s_after_scale_out": round(v.overlap_seconds(within=(scale_out_at, None)), 3),
        "orphan_queue_s_after_scale_out": round(v.orphan_seconds(within=(scale_out_at, None)), 3),
        "consumed_twice": round(v.duplicates_total(), 1),
        "queues_taken_after_scale_out": sum(1 for h in v.holdings() if h.start >= scale_out_at),
    }


def count_messages(scale_out_at: float) -> Counter:
    """Count every message the network routes from now on by (span of its send time, kind), for a run in this
    process (``--agents inproc``): the spans are the first 300 s, the steady state up to the scale-out, the 300 s
    from the scale-out, and the rest. The counting slows the run: its wall time is not the benchmark's."""
    from clusteremu.emulator.network import NetworkModel

    counts: Counter = Counter()
    spans = (("start_0_300", 0.0, 300.0), ("steady_300_scale_out", 300.0, scale_out_at),
             ("scale_out_300", scale_out_at, scale_out_at + 300.0), ("rest", scale_out_at + 300.0, float("inf")))
    route = NetworkModel.route

    def counted(self, msg):
        for name, a, b in spans:
            if a <= msg.sent_t < b:
                counts[(name, msg.kind)] += 1
                break
        return route(self, msg)

    NetworkModel.route = counted
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--until", type=float, default=None, help="virtual seconds (default: the scenario's hour)")
    ap.add_argument("--agents", nargs="+", default=["inproc"], help="placements to run in turn")
    ap.add_argument("--figures", action="store_true", help="also compute the trace's figures (slow at full size)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--count-messages", action="store_true",
                    help="count the messages by kind and span of virtual time (slows the run: not for timing)")
    ap.add_argument("--consumption", choices=("closed_form", "pull"), default=None,
                    help="override the scenario's workload.consumption (pull: with consume_tick_s 5 s)")
    ap.add_argument("--start", choices=("cold", "running"), default=None,
                    help="override the scenario's cluster.start (cold: RocketMQ's start-up storm)")
    ap.add_argument("--heartbeats", choices=("messages", "lease"), default=None,
                    help="override the scenario's workload.heartbeats")
    ap.add_argument("--route-poll", choices=("messages", "lease"), default=None,
                    help="override the scenario's workload.route_poll")
    ap.add_argument("--cid-lists", choices=("messages", "lease"), default=None,
                    help="override the scenario's workload.cid_lists")
    ap.add_argument("--register-broker", choices=("messages", "lease"), default=None,
                    help="override the scenario's workload.register_broker")
    ap.add_argument("--persist-offsets", choices=("messages", "lease"), default=None,
                    help="override the scenario's workload.persist_offsets")
    ap.add_argument("--trace-unchanged-rebalances", choices=("true", "false"), default=None,
                    help="override the scenario's workload.trace_unchanged_rebalances")
    ap.add_argument("--single-group", nargs=4, type=int, metavar=("BROKERS", "QUEUES", "CONSUMERS", "ADDED"),
                    help="the previous benchmark's shape instead (see above)")
    args = ap.parse_args(argv)

    if args.single_group:
        scenario = single_group(*args.single_group)
    else:
        base = load_scenario(NAME, [])
        scenario = scaled(base, args.scale) if args.scale != 1.0 else base
    if args.consumption is not None and not args.single_group:
        data = copy.deepcopy(scenario.data)
        data["workload"]["consumption"] = args.consumption
        if args.consumption == "pull":
            data["workload"]["consume_tick_s"] = 5.0
        scenario = validate_scenario(data, f"{scenario.source} (consumption {args.consumption})")
    for key, value in (("cluster.start", args.start), ("workload.heartbeats", args.heartbeats),
                       ("workload.route_poll", args.route_poll), ("workload.cid_lists", args.cid_lists),
                       ("workload.register_broker", args.register_broker),
                       ("workload.persist_offsets", args.persist_offsets),
                       ("workload.trace_unchanged_rebalances",
                        None if args.trace_unchanged_rebalances is None else args.trace_unchanged_rebalances == "true")):
        if value is not None and not args.single_group:
            data = copy.deepcopy(scenario.data)
            section, name = key.split(".")
            data[section][name] = value
            scenario = validate_scenario(data, f"{scenario.source} ({key} {value})")
    counts = None
    if args.count_messages:
        counts = count_messages(next(f["at"] for f in scenario.data["faults"] if f["kind"] == "scale_out"))
    t0 = time.perf_counter()
    specs = load_model("rocketmq").agents(scenario.data)
    setup_s = time.perf_counter() - t0
    load_before = [round(x, 2) for x in os.getloadavg()]
    placements = []
    out: dict = {}
    collections = _CollectorRuns()
    with tempfile.TemporaryDirectory() as tmp:
        for i, agents in enumerate(args.agents):
            t0 = time.perf_counter()
            if i == 0:
                gc.callbacks.append(collections)
            try:
                result = execute(scenario, Path(tmp) / f"run-{i}", until=args.until, agents=agents)
            finally:
                if collections in gc.callbacks:
                    gc.callbacks.remove(collections)
            wall_s = time.perf_counter() - t0
            placements.append({"agents": agents, "wall_s": round(wall_s, 2), "digest": result.digest})
            if i == 0:
                first, first_wall = result, wall_s
                rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
                trace_mb = sum(f.stat().st_size for f in Path(result.run_dir).rglob("*") if f.is_file()) / 1e6
                kinds = Counter(e.kind for e in open_run(result.run_dir).events())
                if args.figures:
                    at = next(f["at"] for f in scenario.data["faults"] if f["kind"] == "scale_out")
                    out = trace_figures(result.run_dir, at)
    load_after = [round(x, 2) for x in os.getloadavg()]
    events = first.manifest["events"]["count"]
    figures = {
        "scale": args.scale,
        "consumers": scenario.data["cluster"]["consumers"],
        "brokers": scenario.data["cluster"]["brokers"],
        "queues": scenario.data["cluster"]["queues_per_broker"] * (
            scenario.data["workload"].get("groups", 1) * scenario.data["workload"].get("topic_brokers", 0)
            or scenario.data["cluster"]["brokers"]),
        "agents": len(specs),
        "virtual_s": args.until or scenario.duration_s,
        "consumption": scenario.data["workload"].get("consumption", "pull"),
        "start": scenario.data["cluster"].get("start", "cold"),
        "heartbeats": scenario.data["workload"].get("heartbeats", "messages"),
        "route_poll": scenario.data["workload"].get("route_poll", "messages"),
        "cid_lists": scenario.data["workload"].get("cid_lists", "messages"),
        "register_broker": scenario.data["workload"].get("register_broker", "messages"),
        "persist_offsets": scenario.data["workload"].get("persist_offsets", "messages"),
        "trace_unchanged_rebalances": scenario.data["workload"].get("trace_unchanged_rebalances", True),
        "setup_s": round(setup_s, 2),
        "wall_s": round(first_wall, 2),
        "events": events,
        "events_per_s": round(events / first_wall),
        "messages": first.manifest["stats"]["messages"],
        "windows": first.manifest["stats"]["windows"],
        "peak_rss_mb": round(rss),
        "collections": collections.count,
        "collection_s": round(collections.seconds, 2),
        "trace_mb": round(trace_mb, 1),
        "by_kind": dict(kinds.most_common()),
        **out,
        **({"messages_by_span": {span: dict(sorted(((k, n) for (sp, k), n in counts.items() if sp == span),
                                                   key=lambda kv: -kv[1]))
                                 for span in dict.fromkeys(sp for sp, _k in counts)}} if counts is not None else {}),
        "placements": placements,
        "same_digest": len({p["digest"] for p in placements}) == 1,
        "load_before": load_before,
        "load_after": load_after,
    }
    if args.json:
        print(json.dumps(figures))
    else:
        for k, v in figures.items():
            if k not in ("placements", "by_kind", "messages_by_span"):
                print(f"{k:>32}: {v}")
        print(f"{'events by kind':>32}: " + ", ".join(f"{k} {n}" for k, n in figures["by_kind"].items()))
        for span, kinds in figures.get("messages_by_span", {}).items():
            listed = ", ".join(f"{k} {n}" for k, n in kinds.items())
            print(f"{'messages ' + span:>32}: {sum(kinds.values())}: {listed}")
        for p in placements:
            print(f"{p['agents']:>32}: wall {p['wall_s']} s, digest {p['digest'][:16]}")
    return 0 if figures["same_digest"] else 1


if __name__ == "__main__":
    sys.exit(main())
