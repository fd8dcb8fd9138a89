"""A truncated and a corrupt segment: the analysis names the files and offsets, reads the rest, says partial."""
from __future__ import annotations

import pytest

from clusteremu.emulator.trace import open_run
from clusteremu.tools.analysis import AnalysisOptions, analyze
from clusteremu.tools.analysis.runs import open_run_info

pytestmark = pytest.mark.spark


def test_damaged_segments_are_reported_and_the_rest_is_analysed(spark, trace):
    b = trace(name="damaged", until=600.0)
    for k in range(60):
        for broker in ("b1", "b2", "b3", "b4"):
            b.load_report(10.0 * k, broker, 40.0 + k % 7)
            b.event(10.0 * k + 1, broker, "stw_pause", duration_s=0.01, cause="gc-young")
    run_dir = b.write(writers=2, segment_bytes=4096)
    w0 = sorted((run_dir / "events").glob("w000-*.seg"))
    w1 = sorted((run_dir / "events").glob("w001-*.seg"))
    assert len(w0) >= 3 and len(w1) >= 3
    w0[-1].write_bytes(w0[-1].read_bytes()[:-10])  # a writer killed mid-record
    data = bytearray(w1[1].read_bytes())
    data[len(data) // 2] ^= 0x55  # a flipped byte: CRC mismatch
    w1[1].write_bytes(bytes(data))

    (result,) = analyze(spark, [open_run_info(0, run_dir)], AnalysisOptions(settle_window_s=60.0))
    s = result.summary
    reader = open_run(run_dir)
    kept = list(reader.events())  # reading finds the damage
    assert s["partial"] is True
    assert sorted((p["file"], p["offset"]) for p in s["problems"]) == sorted((p.file, p.offset) for p in reader.problems)
    reasons = " ".join(p["reason"] for p in s["problems"])
    assert "truncated" in reasons and "CRC" in reasons
    # Everything the kernel's reader still reads is counted, and nothing more.
    assert s["run"]["events_read"] == len(kept) < 480
    f = s["figures"]
    assert f["load_reports"]["count"] == sum(1 for e in kept if e.kind == "load_report")
    assert f["gc_pauses"]["count"] == sum(1 for e in kept if e.kind == "stw_pause")
    assert len(result.tables["broker_load"]) == f["load_reports"]["count"]


def test_runs_without_a_manifest_or_without_model_figures_get_the_common_figures(spark, trace):
    # a system no plug-in registers here (a run copied from another installation): the figures every trace has
    other = trace("kafka", name="kf", model="kafka", until=100.0)
    other.event(1.0, "broker-a", "stw_pause", duration_s=0.2, cause="gc-young")
    other.event(50.0, "namesrv", "agent_stopped", reason="crash")
    kf = other.write()
    orphan = trace("orphan", until=100.0).event(3.0, "x", "stw_pause", duration_s=0.5, cause="gc").write()
    (orphan / "manifest.json").unlink()
    a, b = analyze(spark, [open_run_info(0, kf), open_run_info(1, orphan)], AnalysisOptions())
    assert a.summary["run"]["model"] == "kafka" and not a.summary["partial"]
    assert a.summary["figures"]["gc_pauses"]["count"] == 1 and set(a.summary["figures"]) == {
        "events", "gc_pauses", "faults", "dropped_messages"}
    assert list(a.tables["markers"]["kind"]) == ["agent_stopped"]
    # Without a manifest: model unknown, the end is the last event, and the analysis says why it is partial.
    assert b.summary["run"]["model"] == "unknown" and b.summary["run"]["end_s"] == 3.0
    assert b.summary["partial"] and b.summary["problems"][0] == {"file": "manifest.json", "offset": 0, "reason": "missing manifest"}
    assert b.summary["figures"]["gc_pauses"]["max_s"] == 0.5
