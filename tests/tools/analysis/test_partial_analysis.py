"""A partial run's figures are marked partial everywhere, and a figure that needs the whole run is absent with the
reason — never a confident number (issue 17 §4); ``analyze`` tells a display of its progress."""
from __future__ import annotations

import json

import pytest

from clusteremu.cli import main
from clusteremu.tools.analysis import analyze_runs

pytestmark = pytest.mark.spark


def quiet_cluster(trace, until_s: float):
    """Four brokers balanced (spread 9) from the first report, no unloads: settled from the start — as far as
    anyone can tell from the part of the run written."""
    b = trace(name="cut", until=1800.0)
    for k in range(int(until_s // 60) + 1):
        for i, broker in enumerate(("b1", "b2", "b3", "b4")):
            b.load_report(0.0125 + 60.0 * k, broker, 40.0 + 3 * i)
    return b


def test_a_truncated_run_has_no_settle_time_and_says_why(spark, trace, capsys):
    run_dir = quiet_cluster(trace, 700.0).write(complete=False)  # the run died at 700 s of 1,800 s
    assert main(["analyze", str(run_dir), "--settle-window-min", "10"]) == 0
    out, err = capsys.readouterr()
    s = json.loads((run_dir / "analysis" / "summary.json").read_text())
    reason = "the run did not finish (trace ends at 660 s of 1,800 s): needs the whole run"
    assert s["partial"] is True and s["figures"]["settle"]["time_s"] is None
    assert s["absent"]["settle.time_s"] == reason and s["absent"]["settle.settled"] == reason
    assert "partial (the trace read to 660 s of 1,800 s" in out
    assert f"settle (s): — ({reason})" in out and "unloads: 0 (partial)" in out
    assert "the run did not finish" in err
    page = (run_dir / "analysis" / "report.html").read_text()
    assert f"absent: {reason}" in page and '<span class="badge">partial</span>' in page


def test_a_damaged_segment_makes_the_whole_run_figures_absent_too(spark, trace):
    run_dir = quiet_cluster(trace, 1800.0).write(segment_bytes=2048)
    segments = sorted((run_dir / "events").glob("*.seg"))
    data = bytearray(segments[1].read_bytes())
    data[len(data) // 2] ^= 0x55
    segments[1].write_bytes(bytes(data))
    ((analysis, _out),) = analyze_runs([run_dir], report=False)
    s = analysis.summary
    assert s["partial"] and s["figures"]["settle"]["time_s"] is None
    assert s["absent"]["settle.time_s"].startswith("part of the trace could not be read (1 problem)")


def test_the_same_run_complete_settles_from_its_first_report(spark, trace):
    run_dir = quiet_cluster(trace, 1800.0).write()
    ((analysis, _out),) = analyze_runs([run_dir], report=False)
    assert not analysis.summary["partial"] and analysis.summary["figures"]["settle"]["time_s"] == 0.0125
    assert "settle.time_s" not in analysis.summary["absent"]


def test_analyze_tells_its_progress_stage_by_stage(spark, trace, tmp_path, capsys):
    run_dir = quiet_cluster(trace, 600.0).write()
    seen: list[tuple[str, int, int | None]] = []
    analyze_runs([run_dir], progress=lambda stage, done, total: seen.append((stage, done, total)))
    stages = [s for s, _d, _t in seen]
    assert stages[:2] == ["starting Spark", "reading segments, computing figures"]
    assert "writing cut" in stages and stages[-1] == "report.html"
    plots = [(s, d, t) for s, d, t in seen if s.startswith("plot ")]
    assert plots[0] == ("plot score", 0, len(plots)) and [d for _s, d, _t in plots] == list(range(len(plots)))
    # Piped (as here: not a terminal), the verb prints its results and no progress.
    assert main(["analyze", str(run_dir), "--out", str(tmp_path / "a")]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.startswith("cut (pulsar, ThresholdShedder+LeastLongTermMessageRate) complete")
