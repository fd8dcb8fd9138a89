"""The demo's report (``avgshedder-homogeneous``, as ``make demo`` runs it) opened in headless Chromium.

The screenshot is saved in the test's directory and, when ``CLUSTEREMU_SCREENSHOT_DIR`` is set, copied there
(``report-avgshedder-homogeneous.png``) for a person to look at.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from clusteremu.cli import main

pytestmark = pytest.mark.spark

SCENARIO = "avgshedder-homogeneous"


@pytest.fixture(scope="module")
def demo_report(spark, tmp_path_factory) -> Path:
    run_dir = tmp_path_factory.mktemp("demo") / "run"
    subprocess.run([sys.executable, "-m", "clusteremu", "run", SCENARIO, "--out", str(run_dir), "--quiet"],
                   check=True, capture_output=True, timeout=120)
    assert main(["analyze", str(run_dir), "--quiet"]) == 0
    return run_dir / "analysis" / "report.html"


def test_the_demo_report_names_its_figures_plainly(demo_report):
    page = demo_report.read_text()
    assert "strategy AvgShedder+AvgShedder" in page
    # Every panel is there once: CPU is the score here, so the score panel says so instead of a twin panel.
    images = re.findall(r'<img src="plots/([^"]+)\.png" alt="([^"]+)"', page)
    names = [n for n, _alt in images]
    assert names == ["score", "msg_rate", "throughput", "num_bundles", "topic_unavailability", "score_spread", "ratios"]
    assert dict(images)["score"].endswith("— same as: CPU usage per broker")
    # No figure is printed as floating-point noise or in scientific notation.
    cells = re.findall(r'<td class="num">([^<]*)</td>', page)
    assert cells and not [c for c in cells if re.search(r"\de[-+]\d", c)]


def test_the_demo_report_in_headless_chromium_is_not_blank(demo_report, screenshot):
    import matplotlib.image as mpimg

    shot = screenshot(demo_report, demo_report.parent / "screenshot.png", 3400)
    target = os.environ.get("CLUSTEREMU_SCREENSHOT_DIR")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, Path(target) / f"report-{SCENARIO}.png")
    rgb = mpimg.imread(shot)[..., :3]
    assert rgb.shape[0] >= 3000 and rgb.shape[1] >= 1200
    # Not blank: dark text on most of the page, and the plots' coloured lines (strongly saturated pixels, which
    # text and table rules never are) in one band of rows per plot.
    assert (rgb.max(axis=2) < 0.3).sum() > 20_000
    saturated = (rgb.max(axis=2) - rgb.min(axis=2)) > 0.3
    rows = np.flatnonzero(saturated.any(axis=1))
    bands = 1 + int((np.diff(rows) > 40).sum()) if rows.size else 0
    assert saturated.sum() > 5_000 and bands >= 5
