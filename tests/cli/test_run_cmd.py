"""``clusteremu run``'s account of a run: its events as readers give them, and the records written."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from clusteremu.emulator.trace import open_run

ROOT = Path(__file__).resolve().parents[2]


def test_the_summary_counts_the_events_read_and_says_how_many_records_held_them(tmp_path):
    # a RocketMQ run: its observers write a sample of all their queues in one record, a row a queue
    out = subprocess.run([sys.executable, "-m", "clusteremu", "run", "rocketmq-scale-out-averagely", "--until", "60",
                          "--out", str(tmp_path / "run"), "--quiet", "--format", "json"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout)
    run = open_run(tmp_path / "run")
    assert s["events"] == sum(s["event_kinds"].values()) == sum(1 for _ in run.events())
    assert s["records"] == run.manifest["events"]["count"] == run.count() < s["events"]
