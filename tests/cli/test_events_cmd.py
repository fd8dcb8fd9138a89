"""The committed event catalogue is the one the code declares, and every model's kinds are in it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _catalogue() -> str:
    out = subprocess.run([sys.executable, "-m", "clusteremu", "events"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_docs_events_md_is_up_to_date():
    text = _catalogue()
    committed = (ROOT / "docs" / "events.md").read_text()
    assert committed == text, "docs/events.md is stale: regenerate it with `clusteremu events > docs/events.md`"


def test_every_model_declares_its_kinds_in_the_catalogue():
    text = _catalogue()
    for kind in ("heartbeat_sent", "store_session_expired", "leader_elected", "bundle_unloaded", "fault_begin"):
        assert f"`{kind}`" in text, kind
