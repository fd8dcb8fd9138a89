"""The trace reader on whole, truncated, corrupt and killed runs."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgpack
import pytest

from clusteremu.emulator.manifest import new_manifest, write_manifest
from clusteremu.emulator.trace import open_run
from clusteremu.emulator.trace.framing import frame
from clusteremu.emulator.trace.writer import SegmentWriter


def make_run(tmp_path: Path, n: int = 50, writers=("w000", "w001"), complete=True) -> Path:
    run_dir = tmp_path / "run"
    for w, name in enumerate(writers):
        sw = SegmentWriter(run_dir / "events", name, segment_bytes=1024)
        sw.write([(i * 1.0 + w * 0.5, f"agent-{w}", i + 1, "stw_pause", {"duration_s": 0.1, "cause": "gc"})
                  for i in range(n)])
        sw.close()
    m = new_manifest({"scenario": {"name": "t"}}, "test", 1, 100.0, {"mode": "inproc", "workers": len(writers)})
    m["complete"] = complete
    write_manifest(run_dir, m)
    return run_dir


def test_reads_every_event_in_canonical_order(tmp_path):
    run = open_run(make_run(tmp_path))
    events = list(run.events())
    assert len(events) == 100 and run.complete and not run.problems
    assert [e.key for e in events] == sorted(e.key for e in events)
    assert events[0].duration_s == 0.1 and events[0].get("cause") == "gc"
    with pytest.raises(AttributeError):
        events[0].nonexistent
    table = run.to_arrow()
    assert table.num_rows == 100 and set(table.column_names) >= {"t", "agent", "seq", "kind", "duration_s"}


def test_a_record_written_in_rows_reads_as_one_event_a_row_and_bad_rows_are_damage(tmp_path):
    from clusteremu.emulator.trace.kinds import ROWS_KEY

    run_dir = tmp_path / "run"
    sw = SegmentWriter(run_dir / "events", "w000")
    sw.write([(1.0, "broker-a", 1, "queue_stats", {"max_offset": 50.0, ROWS_KEY: {
                  "group": ["G", "G"], "queue": ["T/broker-a/0", "T/broker-a/1"], "committed": [40.0, -1.0],
                  "lag": [10.0, -1.0]}}),
              (1.5, "broker-a", 2, "queue_stats", {"max_offset": 60.0, ROWS_KEY: {"queue": [], "lag": []}}),
              (2.0, "broker-a", 3, "stw_pause", {"duration_s": 0.1, "cause": "gc"}),
              (3.0, "broker-a", 4, "queue_stats", {"max_offset": 70.0, ROWS_KEY: {"queue": ["q"], "lag": []}}),
              (4.0, "broker-a", 5, "stw_pause", {"duration_s": 0.1, "cause": "gc"})])
    sw.close()
    placement = {"mode": "inproc", "workers": 1}
    write_manifest(run_dir, new_manifest({"scenario": {"name": "t"}}, "test", 1, 10.0, placement))
    run = open_run(run_dir)
    events = list(run.events())
    assert [(e.t, e.seq, e.kind) for e in events] == [(1.0, 1, "queue_stats"), (1.0, 1, "queue_stats"),
                                                     (2.0, 3, "stw_pause")]
    assert [e.as_dict() for e in events[:2]] == [
        {"t": 1.0, "agent": "broker-a", "seq": 1, "kind": "queue_stats", "max_offset": 50.0, "group": "G",
         "queue": "T/broker-a/0", "committed": 40.0, "lag": 10.0},
        {"t": 1.0, "agent": "broker-a", "seq": 1, "kind": "queue_stats", "max_offset": 50.0, "group": "G",
         "queue": "T/broker-a/1", "committed": -1.0, "lag": -1.0}]
    [problem] = run.problems
    assert "rows of unequal lengths: queue 1, lag 0" in problem.reason and not run.complete


def last_segment(run_dir: Path) -> Path:
    return sorted((run_dir / "events").glob("w000-*.seg"))[-1]


def test_a_truncated_last_record_is_reported_and_skipped(tmp_path):
    run_dir = make_run(tmp_path)
    seg = last_segment(run_dir)
    data = seg.read_bytes()
    seg.write_bytes(data[:-3])
    run = open_run(run_dir)
    events = list(run.events())
    assert len(events) == 99
    assert not run.complete
    (problem,) = run.problems
    assert problem.file == f"events/{seg.name}" and "truncated" in problem.reason and problem.offset > 0


def test_a_corrupt_record_ends_its_segment_but_not_the_others(tmp_path):
    run_dir = make_run(tmp_path)
    segs = sorted((run_dir / "events").glob("w000-*.seg"))
    assert len(segs) >= 3
    data = bytearray(segs[0].read_bytes())
    data[-5] ^= 0xFF  # inside the last record's payload: CRC mismatch
    segs[0].write_bytes(bytes(data))
    run = open_run(run_dir)
    events = list(run.events())
    assert 90 <= len(events) < 100
    assert any("CRC" in p.reason and p.file.endswith(segs[0].name) for p in run.problems)
    # The other segments of the same writer and the other writer are still read.
    assert sum(1 for e in events if e.agent == "agent-1") == 50


def test_a_damaged_header_and_garbage_payload_are_reported(tmp_path):
    run_dir = make_run(tmp_path)
    segs = sorted((run_dir / "events").glob("w001-*.seg"))
    segs[0].write_bytes(b"garbage")
    with open(segs[1], "ab") as fh:
        fh.write(frame(msgpack.packb({"not": "a record"})))
    run = open_run(run_dir)
    list(run.events())
    reasons = " | ".join(str(p) for p in run.problems)
    assert "bad magic" in reasons and "undecodable" in reasons


@pytest.mark.parametrize("cut", [0, 4])
def test_a_segment_cut_inside_its_magic_is_a_truncated_header_not_a_foreign_file(tmp_path, cut):
    # a writer killed right after creating its next segment leaves an empty file or part of the magic
    run_dir = make_run(tmp_path)
    segs = sorted((run_dir / "events").glob("w001-*.seg"))
    segs[-1].write_bytes(segs[-1].read_bytes()[:cut])
    run = open_run(run_dir)
    list(run.events())
    assert [p.reason for p in run.problems if p.file.endswith(segs[-1].name)] == ["truncated header"]


def test_missing_manifest_means_incomplete(tmp_path):
    run_dir = make_run(tmp_path)
    (run_dir / "manifest.json").unlink()
    run = open_run(run_dir)
    assert not run.complete and len(list(run.events())) == 100


@pytest.mark.slow
def test_a_run_killed_with_sigkill_leaves_a_readable_incomplete_trace(tmp_path):
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "clusteremu", "run", "kernel-heartbeat", "--out", str(out), "--quiet",
           "--set", "cluster.members=300", "--set", "scenario.duration_s=100000",
           "--set", "run.segment_bytes=8192"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if len(list((out / "events").glob("w000-*.seg"))) >= 6:
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.05)
        else:
            pytest.fail("the run wrote no segments in 60 s")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    run = open_run(out)
    assert run.manifest["complete"] is False
    events = list(run.events())
    assert not run.complete
    assert len(events) > 100
    assert all(isinstance(e.t, float) and e.kind for e in events)
    keys = [e.key for e in events]
    assert keys == sorted(keys)
    for p in run.problems:  # at most a torn tail per segment, each named with its offset
        assert "truncated" in p.reason and p.file.startswith("events/")
