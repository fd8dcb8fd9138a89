"""The report of a cluster with more brokers than a plot can show: ``pulsar-large`` shrunk to 30 brokers (the golden
test's shrink, with 30 brokers instead of 20) — distributions instead of a line per broker, the default
strategies named."""
from __future__ import annotations

import json
import re

import pytest

from clusteremu.emulator.runner import execute
from clusteremu.scenarios.loader import load_scenario
from clusteremu.tools.analysis import analyze_runs
from clusteremu.tools.report import MAX_LINES

pytestmark = [pytest.mark.spark, pytest.mark.slow]

BROKERS = 30
SHRUNK = [f"cluster.brokers={BROKERS}", "cluster.clients=40", "workload.namespaces.0.bundles=64",
          "workload.namespaces.1.bundles=64", "workload.namespaces.2.bundles=32", "workload.tasks.0.topics=2000",
          "workload.tasks.1.topics=2000", "workload.tasks.2.topics=1000"]


def test_thirty_brokers_are_drawn_as_their_distribution(spark, tmp_path):
    assert BROKERS > MAX_LINES
    run = execute(load_scenario("pulsar-large", SHRUNK), tmp_path / "large", seed=7, until=600.0)
    ((analysis, out),) = analyze_runs([run.run_dir])
    assert analysis.summary["run"]["strategy"] == "ThresholdShedder+LeastLongTermMessageRate"  # not "(no strategy)"
    page = (out / "report.html").read_text()
    titles = dict(re.findall(r'<img src="plots/([^"]+)\.png" alt="([^"]+)"', page))
    for name in ("score", "msg_rate", "throughput", "num_bundles"):
        assert f"distribution over {BROKERS} brokers and the 3 with the highest peak" in titles[name], name
    summary = json.loads((out / "summary.json").read_text())
    assert summary["figures"]["load_reports"]["count"] > 0 and "strategy ThresholdShedder+LeastLongTermMessageRate" in page
