"""Benchmark (not a test): a large RocketMQ consumer group in-process (or in worker processes).

Builds a copy of the built-in ``rocketmq-scale-out-averagely`` scenario at a large size — ``--brokers`` brokers
with ``--queues`` queues each, ``--consumers`` consumers, a scale-out of ``--add`` more consumers at 300 s — and
runs it for ``--until`` seconds of virtual time. Prints the set-up and run times, events written and events per
second, the peak resident memory, and what the trace says about the scale-out (overlap and orphan queue-seconds,
messages consumed twice, queues moved) — computed from the trace after the timed run. Usage::

    python benchmarks/rocketmq_large_bench.py [--brokers 20] [--queues 16] [--consumers 200] [--add 50]
                                              [--until 600] [--agents inproc|procs:N] [--json]
"""
from __future__ import annotations

import argparse
import copy
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from clusteremu.agents.rocketmq.views import RocketMQViews  # noqa: E402
from clusteremu.emulator.runner import execute  # noqa: E402
from clusteremu.emulator.trace.query import Trace  # noqa: E402
from clusteremu.scenarios.loader import load_scenario, validate_scenario  # noqa: E402

SCALE_OUT_AT = 300.0


def large(brokers: int, queues: int, consumers: int, add: int):
    """The scale-out scenario at the given size."""
    base = load_scenario("rocketmq-scale-out-averagely")
    data = copy.deepcopy(base.data)
    data["scenario"]["name"] = "rocketmq-large"
    data["cluster"].update(brokers=brokers, queues_per_broker=queues, consumers=consumers)
    data["faults"] = [{"kind": "scale_out", "at": SCALE_OUT_AT, "label": f"{add} more consumers",
                       "agents": [f"consumer-{i}" for i in range(consumers + 1, consumers + add + 1)]}] if add else []
    return validate_scenario(data, f"{base.source} (large)")


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--brokers", type=int, default=20)
    ap.add_argument("--queues", type=int, default=16)
    ap.add_argument("--consumers", type=int, default=200)
    ap.add_argument("--add", type=int, default=50)
    ap.add_argument("--until", type=float, default=600.0)
    ap.add_argument("--agents", default="inproc")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    sc = large(args.brokers, args.queues, args.consumers, args.add)
    t1 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        result = execute(sc, Path(tmp) / "run", until=args.until, agents=args.agents)
        t2 = time.perf_counter()
        events = result.manifest["events"]["count"]
        v = RocketMQViews(Trace(result.run_dir))
        moved = sum(1 for h in v.holdings() if h.start >= SCALE_OUT_AT)
        out = {
            "brokers": args.brokers, "queues": args.brokers * args.queues, "consumers": args.consumers,
            "added": args.add, "until_s": args.until, "agents": args.agents,
            "setup_s": round(t1 - t0, 3), "run_s": round(t2 - t1, 3), "events": events,
            "events_per_s": round(events / max(t2 - t1, 1e-9)),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
            "overlap_queue_s": round(v.overlap_seconds(within=(SCALE_OUT_AT, None)), 3),
            "orphan_queue_s": round(v.orphan_seconds(within=(SCALE_OUT_AT, None)), 3),
            "consumed_twice": round(v.duplicates_total(), 1),
            "queues_taken_after_scale_out": moved,
            "digest": result.digest,
        }
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for k, val in out.items():
            print(f"{k:30s} {val}")
    return out


if __name__ == "__main__":
    main()
