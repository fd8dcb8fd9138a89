"""The session builder, and the events DataFrame of a real run against the kernel's reader."""
from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import pytest

from clusteremu.emulator.trace import open_run
from clusteremu.tools.analysis.common import COMMON_SCHEMA
from clusteremu.tools.analysis.heartbeat import SCHEMA
from clusteremu.tools.spark.session import MASTER_ENV, _local_cores, resolve_master
from clusteremu.tools.spark.segments import read_events


def test_the_master_comes_from_the_flag_then_the_environment_then_local(monkeypatch):
    monkeypatch.delenv(MASTER_ENV, raising=False)
    assert resolve_master(None) == "local[*]"
    monkeypatch.setenv(MASTER_ENV, "spark://h:7077")
    assert resolve_master(None) == "spark://h:7077"
    assert resolve_master("local[2]") == "local[2]"
    assert _local_cores("local[3]") == 3 and _local_cores("local") == 1 and _local_cores("yarn") is None
    assert _local_cores("local[*]") == (os.cpu_count() or 1)


@pytest.mark.spark
def test_the_shared_session_is_set_up_for_clusteremu(spark):
    conf = spark.sparkContext.getConf()
    assert spark.sparkContext.master == "local[2]"
    assert conf.get("spark.ui.enabled") == "false"
    assert spark.conf.get("spark.sql.execution.arrow.pyspark.enabled") == "true"
    # The Python workers run the configured interpreter (ours unless the environment chose one), which has
    # clusteremu and pyarrow.
    ((executable, module),) = spark.sparkContext.parallelize([0], 1).map(
        lambda _: (__import__("sys").executable, __import__("importlib").import_module("clusteremu.tools.spark").__name__)
    ).collect()
    assert module == "clusteremu.tools.spark"
    assert os.path.realpath(executable) == os.path.realpath(os.environ.get("PYSPARK_PYTHON", sys.executable))


@pytest.mark.spark
def test_read_events_gives_what_the_kernel_reader_gives(spark, tmp_path):
    run_dir = tmp_path / "run"
    subprocess.run([sys.executable, "-m", "clusteremu", "run", "kernel-heartbeat", "--until", "60", "--agents", "inproc:2",
                    "--out", str(run_dir), "--quiet"], check=True, capture_output=True, timeout=120)
    schema = COMMON_SCHEMA.merged(SCHEMA)
    df = read_events(spark, [run_dir], schema)
    counts = {r["kind"]: r["n"] for r in df.groupBy("kind").agg({"_n": "sum"}).withColumnRenamed("sum(_n)", "n").collect()}
    assert counts == dict(Counter(e.kind for e in open_run(run_dir).events()))
    rows = df.where("kind = 'heartbeat_received'").orderBy("t", "agent", "seq").select("t", "member", "gap_s").collect()
    kernel = [e for e in open_run(run_dir).events(["heartbeat_received"])]
    assert [(r["t"], r["member"], r["gap_s"]) for r in rows] == [(e.t, e.member, e.gap_s) for e in kernel]


def test_jvm_stderr_passes_everything_but_the_incubator_notice(tmp_path):
    from clusteremu.tools.spark.jvm_stderr import NOISE, forward

    lines = [b"WARNING: Using incubator modules: jdk.incubator.vector\n", b"12:00:01 ERROR SparkContext: it broke\n",
             b"WARNING: Using incubator modules: jdk.incubator.vector, jdk.incubator.other\n", b"Traceback (most recent call last):\n",
             b"no newline at the end"]
    read_end, write_end = os.pipe()
    os.write(write_end, b"".join(lines))
    os.close(write_end)
    out = tmp_path / "stderr"
    with out.open("wb") as sink:
        forward(os.fdopen(read_end, "rb"), os.dup(sink.fileno()))
    assert out.read_bytes() == b"".join(lines[1:])
    assert NOISE == {lines[0].strip()}


@pytest.mark.spark
def test_the_session_jvm_stderr_goes_through_the_filter(spark):
    import threading

    from clusteremu.tools.spark.jvm_stderr import NOISE, dropped_lines

    # The shared session's JVM was started by spark_session: its stderr is copied by the filter thread, and all
    # the filter ever dropped is the notice (which Java prints at every start of Spark's JVM).
    assert any(t.name == "spark-jvm-stderr" and t.is_alive() for t in threading.enumerate())
    assert dropped_lines() and {line.encode() for line in dropped_lines()} <= NOISE
