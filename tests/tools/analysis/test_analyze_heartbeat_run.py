"""``clusteremu analyze`` end to end on a real run of the kernel's heartbeat model, and its report in a browser."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from clusteremu.cli import main
from clusteremu.emulator.trace import open_run

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def analysed(spark, tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("hb") / "run"
    # As a user would: `clusteremu run` in its own process, then `clusteremu analyze`.
    subprocess.run([sys.executable, "-m", "clusteremu", "run", "kernel-heartbeat", "--until", "300", "--out", str(run_dir), "--quiet"],
                   check=True, capture_output=True, timeout=120)
    assert main(["analyze", str(run_dir), "--settle-window-min", "2"]) == 0
    return run_dir, run_dir / "analysis"


def test_summary_matches_the_trace(analysed):
    run_dir, out = analysed
    s = json.loads((out / "summary.json").read_text())
    kinds = Counter(e.kind for e in open_run(run_dir).events())
    f = s["figures"]
    assert s["partial"] is False and s["run"]["model"] == "heartbeat" and s["window"] == {"start_s": 180.0, "end_s": 300.0}
    assert f["events"]["by_kind"] == dict(sorted(kinds.items()))
    # The scenario's 15 s pause of member-2 at t=120 outlasts the 10 s session timeout: one expiry, restored.
    assert f["sessions"]["expiries"] == 1 and f["sessions"]["by_member"] == {"member-2": 1}
    outage = f["sessions"]["outages"]["list"][0]
    assert outage["member"] == "member-2" and 120.0 < outage["expired_s"] < outage["restored_s"] < 140.0
    hb = f["heartbeats"]
    assert hb["sent"] == kinds["heartbeat_sent"] and hb["received"] == kinds["heartbeat_received"]
    assert hb["gaps_over_timeout"] == 1 and hb["gap_s_by_member"]["member-2"]["max"] > 15.0
    assert hb["gap_s"]["p50"] == pytest.approx(2.0, abs=0.01)
    assert f["gc_pauses"]["by_cause"]["fault"] == {"count": 1, "total_s": 15.0, "max_s": 15.0}
    assert f["faults"][0]["start_s"] == 120.0 and f["faults"][0]["end_s"] == 135.0
    for name in ("heartbeat_gaps", "gc_pauses", "markers"):
        assert (out / f"{name}.parquet").exists()


def test_every_image_of_the_report_is_a_png_that_decodes(analysed):
    import matplotlib.image as mpimg

    _run, out = analysed
    html = (out / "report.html").read_text()
    sources = re.findall(r'<img src="([^"]+)"', html)
    assert {Path(s).stem for s in sources} == {"heartbeat_gaps", "gc_pauses", "gc_pause_lengths"}
    for src in sources:
        path = out / src
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        pixels = mpimg.imread(path)
        assert pixels.shape[0] > 200 and pixels.shape[1] > 600


def test_the_report_shows_its_plots_in_headless_chromium(analysed, screenshot):
    import numpy as np
    import matplotlib.image as mpimg

    _run, out = analysed
    shot = screenshot(out / "report.html", out / "screenshot.png", 2000)
    rgb = mpimg.imread(shot)[..., :3]
    # The plots' coloured lines and markers: strongly saturated pixels, which text and table rules never are.
    # With its images missing the same page has about 60 of them (2.4 million pixels); with them, thousands.
    saturated = (rgb.max(axis=2) - rgb.min(axis=2)) > 0.3
    assert saturated.sum() > 1000
    # Both plots are on the page: coloured pixels in two separate bands of rows.
    rows = np.flatnonzero(saturated.any(axis=1))
    assert rows.size and (np.diff(rows) > 40).any()
