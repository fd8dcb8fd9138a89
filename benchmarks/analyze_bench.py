"""Benchmark (not a test): ``analyze`` on a 1,000,000-event Pulsar trace against Spark over the same events in Parquet.

Builds a synthetic trace with the Pulsar model's event kinds in realistic proportions (20 brokers with young GC
pauses, host-usage samples and load reports, a leader moving a bundle every 10 s whose topics reconnect through
a redirecting lookup, and client churn reconnecting topics), written by several writers into several segments as
a run would be. The same events are stored as Parquet (every event one row, every field of it a column).
Then, in one Spark session on ``local[2]``:

* ``analyze``: the whole Spark part of ``clusteremu analyze`` (decode in the executors + every figure);
* ``analyze over Parquet``: the same analysis fed from the Parquet copy instead of the segments;
* ``decode scan`` / ``Parquet scan``: one plain aggregation over each source reading the columns the analysis
  reads (events per kind, latest time, and a non-null count of each column).

It prints each time, the ratios and events per second. Targets: ``analyze`` within 2x of the Parquet scan, and at
least 300,000 events/s. Usage::

    python benchmarks/analyze_bench.py [--events 1000000] [--master local[2]] [--repeat 2] [--warmup 1] [--dir DIR]
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from clusteremu.emulator.manifest import new_manifest, write_manifest  # noqa: E402
from clusteremu.emulator.trace.writer import SegmentWriter  # noqa: E402
from clusteremu.tools.analysis import AnalysisOptions, analyze  # noqa: E402
from clusteremu.tools.analysis.common import COMMON_SCHEMA  # noqa: E402
from clusteremu.tools.analysis.pulsar import SCHEMA as PULSAR_SCHEMA  # noqa: E402
from clusteremu.tools.analysis.runs import open_run_info  # noqa: E402
from clusteremu.tools.spark import EventSchema, decode_segment, read_events, spark_session  # noqa: E402

BROKERS = 20
CLIENTS = 200
WRITERS = 4
TOPICS = 4000
TOPICS_PER_BUNDLE = 10

_TYPE_OF = {float: "float", int: "int", str: "str", bool: "bool", dict: "dict", list: "list"}


def build_trace(run_dir: Path, target: int, *, brokers: int = BROKERS, seed: int = 7) -> EventSchema:
    """Write a synthetic Pulsar run of about ``target`` events into ``run_dir``; return the schema of every
    field of every kind it wrote (for the Parquet copy).

    Per second of virtual time: every broker has a young GC pause every 2 s, samples its host every 10 s and
    writes a load report every 20 s; the leader moves one bundle every 10 s (its clients reconnect through a
    redirect); and client churn reconnects 25 topics.
    """
    rng = np.random.default_rng(seed)
    names = [f"broker-{i + 1}" for i in range(brokers)]
    clients = [f"client-{i + 1}" for i in range(CLIENTS)]
    seq: dict[str, int] = {}
    per_writer: list[list[tuple]] = [[] for _ in range(WRITERS)]
    writer_of = {a: i % WRITERS for i, a in enumerate(sorted(names + clients))}
    base_load = rng.uniform(20, 80, brokers)
    count = 0
    kinds: dict[str, dict[str, str]] = {}

    def emit(t: float, agent: str, kind: str, fields: dict) -> None:
        nonlocal count
        if kind not in kinds:
            kinds[kind] = {k: _TYPE_OF[type(v)] for k, v in fields.items()}
        seq[agent] = seq.get(agent, 0) + 1
        per_writer[writer_of[agent]].append((float(t), agent, seq[agent], kind, fields))
        count += 1

    def reconnect(t: float, client: str, topic: str, src: str, dst: str, reason: str) -> None:
        emit(t, client, "topic_disconnected", {"topic": topic, "broker": src, "reason": reason})
        backoff = float(rng.uniform(0.1, 1.0))
        emit(t + 0.001, client, "reconnect_scheduled", {"topic": topic, "attempt": 1, "backoff_s": backoff})
        up, hops = t + backoff, 1
        if src != dst:
            emit(up, client, "lookup_hop", {"topic": topic, "hop": 1, "broker": src, "response": "redirect", "target": dst, "authoritative": False})
            hops = 2
        emit(up + 0.002, client, "lookup_hop", {"topic": topic, "hop": hops, "broker": dst, "response": "connect", "target": dst, "authoritative": True})
        emit(up + 0.004, client, "topic_connected", {"topic": topic, "broker": dst, "hops": hops, "unavailable_s": up + 0.004 - t})

    for b in names:
        emit(0.0, b, "agent_started", {"agent_kind": "broker"})
    emit(1.0, names[0], "leader_elected", {"previous": ""})
    t, n_bundle = 0.0, 0
    while count < target:
        t += 1.0
        for i in rng.choice(brokers, max(1, brokers // 2), replace=False):
            emit(t + rng.uniform(0, 1), names[i], "stw_pause", {"duration_s": float(rng.lognormal(-3.5, 0.4)), "cause": "gc-young"})
        for i in rng.choice(brokers, max(1, brokers // 10), replace=False):
            emit(t + rng.uniform(0, 1), names[i], "host_usage_sampled", {
                "cpu": float(base_load[i] + rng.normal(0, 3)), "elapsed_s": 10.0, "bandwidth_in": 1.0e6, "bandwidth_out": 2.0e6})
        for i in rng.choice(brokers, max(1, brokers // 20), replace=False):
            load = float(base_load[i] + rng.normal(0, 3))
            cpu = float("inf") if rng.random() < 1e-3 else load
            emit(t + rng.uniform(0, 1), names[i], "load_report", {
                "cpu": cpu, "memory": 40.0, "direct_memory": 10.0, "bandwidth_in": 5.0, "bandwidth_out": 7.0,
                "msg_rate_in": load * 100, "msg_rate_out": load * 90, "msg_throughput_in": load * 1e5,
                "msg_throughput_out": load * 9e4, "num_bundles": 40, "num_topics": 320, "score": load,
                "reason": "periodic"})
        if int(t) % 60 == 0:
            emit(t, names[0], "shedding_cycle", {"strategy": "ThresholdShedder", "brokers": brokers, "unloads": 6, "skipped": ""})
        if int(t) % 10 == 0:
            n_bundle += 1
            src, dst = rng.choice(brokers, 2, replace=False)
            bundle = f"public/default/0x{n_bundle:08x}_0x{n_bundle + 1:08x}"
            scores = {names[j]: float(base_load[j]) for j in range(brokers)}
            emit(t, names[0], "unload_decided", {"bundle": bundle, "source": names[src], "destination": "", "reason": "overloaded"})
            emit(t + 0.01, names[src], "bundle_unloaded", {"bundle": bundle, "destination": "", "reason": "shedding", "topics": TOPICS_PER_BUNDLE})
            emit(t + 0.02, names[0], "bundle_placed", {"bundle": bundle, "broker": names[dst], "strategy": "LeastResourceUsageWithWeight",
                                                     "random_fallback": bool(rng.random() < 0.2), "scores": scores})
            emit(t + 0.03, names[dst], "bundle_owned", {"bundle": bundle, "via": "lookup"})
            for k in range(TOPICS_PER_BUNDLE):
                topic = f"persistent://public/default/topic-{int(rng.integers(TOPICS))}"
                reconnect(t + 0.01, clients[int(rng.integers(CLIENTS))], topic, names[src], names[dst], "unload")
        for _ in range(25):
            topic = f"persistent://public/default/topic-{int(rng.integers(TOPICS))}"
            b = names[int(rng.integers(brokers))]
            reconnect(t + rng.uniform(0, 1), clients[int(rng.integers(CLIENTS))], topic, b, b, "timeout")
    summaries = []
    for w, events in enumerate(per_writer):
        writer = SegmentWriter(run_dir / "events", f"w{w:03d}", segment_bytes=8 * 1024 * 1024)
        writer.write(events)
        summaries.append(writer.close())
    manifest = new_manifest(
        {"scenario": {"name": "bench-pulsar", "model": "pulsar"}, "strategy": {"shedding": "ThresholdShedder", "placement": "LeastResourceUsageWithWeight"}},
        "benchmarks/analyze_bench.py", seed, float(np.ceil(t + 2)), {"mode": "inproc", "workers": WRITERS},
    )
    manifest["complete"] = True
    manifest["events"] = {"count": count, "rows": sum(s.rows for s in summaries), "digest": None,
                          "writers": {s.writer: {"count": s.count, "segments": s.segments} for s in summaries}}
    write_manifest(run_dir, manifest)
    return EventSchema(kinds)


def to_parquet(run_dir: Path, path: Path, full: EventSchema) -> int:
    """Store every event of the run as one Parquet row with every one of its fields as a column."""
    schema = COMMON_SCHEMA.merged(PULSAR_SCHEMA).merged(full)
    writer = pq.ParquetWriter(path, schema.arrow_schema)
    rows = 0
    for seg in sorted((run_dir / "events").glob("*.seg")):
        for batch in decode_segment(seg.read_bytes(), file=seg.name, run=0, schema=schema):
            writer.write_batch(batch)
            rows += batch.num_rows
    writer.close()
    return rows


def scan(df, columns: list[str]) -> list:
    """A plain scan reading ``columns`` (those the analysis reads): events per kind, the latest time, and the
    non-null count of each column."""
    from pyspark.sql import functions as F

    fields = [c for c in columns if c not in ("_run", "kind", "_n")]
    return df.groupBy("kind").agg(F.sum("_n").alias("events"), F.max("t").alias("last_t"), *[F.count(c).alias(f"n_{c}") for c in fields]).collect()


def timed(label: str, repeat: int, fn, warmup: int = 1) -> float:
    """Best wall time of ``repeat`` calls of ``fn`` after ``warmup`` untimed ones.

    Without the warm-up the step timed first paid for the JVM's class loading and JIT compilation of the code
    paths the later steps then shared (``analyze`` ran about 15 % slower first than after any other step)."""
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    print(f"  {label:<28} {best:8.2f} s")
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--brokers", type=int, default=BROKERS, help="brokers of the synthetic cluster")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=2, help="time each step this many times, keep the best")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs of each step before its timed ones")
    parser.add_argument("--dir", type=Path, default=None, help="keep the trace here (default: a temporary directory)")
    args = parser.parse_args(argv)

    base = args.dir or Path(tempfile.mkdtemp(prefix="clusteremu-bench-"))
    run_dir, parquet = base / "run", base / "events.parquet"
    try:
        if not (run_dir / "manifest.json").exists():
            start = time.perf_counter()
            full = build_trace(run_dir, args.events, brokers=args.brokers)
            rows = to_parquet(run_dir, parquet, full)
            print(f"trace: {rows:,} events, also as Parquet, in {time.perf_counter() - start:.1f} s")
        n = open_run_info(0, run_dir).recorded_events or 0
        segs = sorted((run_dir / "events").glob("*.seg"))
        size = sum(s.stat().st_size for s in segs)
        print(f"{len(segs)} segment files, {size / 1e6:.0f} MB; Parquet {parquet.stat().st_size / 1e6:.0f} MB; master {args.master}")

        spark = spark_session(args.master)
        spark.range(8).rdd.map(lambda x: x).count()  # start the Python workers before timing anything
        info = open_run_info(0, run_dir)
        options = AnalysisOptions()
        schema = COMMON_SCHEMA.merged(PULSAR_SCHEMA)
        pq_events = lambda: spark.read.parquet(str(parquet))  # noqa: E731

        print(f"times (best of {args.repeat} after {args.warmup} untimed):")
        t_analyze = timed("analyze (segments)", args.repeat, lambda: analyze(spark, [info], options), args.warmup)
        t_pq_analyze = timed("analyze over Parquet", args.repeat, lambda: analyze(spark, [info], options, events=pq_events()), args.warmup)
        columns = [name for name, _ty in schema.columns if not name.startswith("_problem")]
        t_decode = timed("decode scan (segments)", args.repeat, lambda: scan(read_events(spark, [run_dir], schema), columns), args.warmup)
        t_pq = timed("Parquet scan", args.repeat, lambda: scan(pq_events(), columns), args.warmup)
        print("ratios:")
        print(f"  analyze / Parquet scan        {t_analyze / t_pq:6.2f}x   (target <= 2x)")
        print(f"  analyze / analyze over Parquet {t_analyze / t_pq_analyze:5.2f}x")
        print(f"  decode scan / Parquet scan    {t_decode / t_pq:6.2f}x")
        print("throughput:")
        print(f"  analyze      {n / t_analyze:12,.0f} events/s   (target >= 300,000)")
        print(f"  decode scan  {n / t_decode:12,.0f} events/s")
        print(f"  Parquet scan {n / t_pq:12,.0f} events/s")
        spark.stop()
    finally:
        if args.dir is None:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
