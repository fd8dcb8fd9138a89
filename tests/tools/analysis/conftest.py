"""The headless browser the report tests open ``report.html`` in.

``chromium`` gives the path of Debian's headless Chromium, installing it first with ``tools/ensure_chromium.sh``
when it is missing and the tests run as root with apt-get (as ``make java`` installs Java), so that a fresh
machine checks the report in a real browser; elsewhere the test is skipped with the reason. ``screenshot(html,
png, height)`` takes a full-width screenshot of a page.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

import pytest

ENSURE = Path(__file__).resolve().parents[3] / "tools" / "ensure_chromium.sh"


def find_chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def chromium() -> str:
    browser = find_chromium()
    if browser is None and os.geteuid() == 0 and shutil.which("apt-get"):
        done = subprocess.run(["bash", str(ENSURE)], capture_output=True, text=True, timeout=900)
        browser = find_chromium()
        if browser is None:
            pytest.skip(f"chromium could not be installed: {done.stderr.strip()[-300:]}")
    if browser is None:
        pytest.skip("chromium is not installed and cannot be here (not root, or no apt-get): "
                    "run 'sudo apt-get install chromium' (or 'make chromium' as root)")
    return browser


@pytest.fixture(scope="session")
def screenshot(chromium: str) -> Callable[[Path, Path, int], Path]:
    def take(page: Path, png: Path, height: int) -> Path:
        profile = tempfile.mkdtemp(prefix="clusteremu-chromium-")
        try:
            subprocess.run(
                [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                 f"--user-data-dir={profile}", f"--screenshot={png}", f"--window-size=1240,{height}", page.as_uri()],
                check=True, capture_output=True, timeout=120,
            )
        finally:
            shutil.rmtree(profile, ignore_errors=True)
        return png

    return take
