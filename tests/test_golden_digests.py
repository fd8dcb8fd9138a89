"""Golden digests: every built-in scenario, at a fixed seed and horizon, gives the digest pinned in
``golden_digests.json``. A change to the model that alters a trace on purpose updates the pin (run this file with
``CLUSTEREMU_UPDATE_GOLDEN=1``) and says why in its commit message; any other change must leave every digest as it
is."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from clusteremu.emulator.runner import execute
from clusteremu.scenarios.catalog import builtins
from clusteremu.scenarios.loader import load_scenario

PINS = Path(__file__).with_name("golden_digests.json")
SEED = 7
UNTIL = 1800.0
#: large scenarios shrunk to a size that runs in a second or two (their benchmarks run them at full size)
SHRINK = {
    "pulsar-large": ["cluster.brokers=20", "cluster.clients=40",
                     "workload.namespaces.0.bundles=64", "workload.namespaces.1.bundles=64",
                     "workload.namespaces.2.bundles=32", "workload.tasks.0.topics=2000",
                     "workload.tasks.1.topics=2000", "workload.tasks.2.topics=1000"],
    "storm-large": ['cluster.supervisors=[{count=5, rack="/rack-00"}, {count=5, rack="/rack-01"}, '
                    '{count=5, rack="/rack-02"}, {count=5, rack="/rack-03"}]',
                    'faults=[{kind="restart", at=600.0, duration_s=120.0, agents=["supervisor-3"]}, '
                    '{kind="pause", at=1200.0, duration_s=40.0, agents=["supervisor-7"]}]'],
    "rocketmq-large": ["workload.groups=2", "cluster.consumers=8", "cluster.brokers=4", "workload.topic_brokers=2",
                       "cluster.queues_per_broker=4", 'faults.0.agents=["consumer-9", "consumer-10"]',
                       'faults.1.agents=["consumer-3"]'],
    # Pulsar's published load-manager benchmark: twenty brokers (two per restart wave), a thousandth of the bundles.
    **{f"lm-bench-rolling-restart-{lm}": ["cluster.brokers=20", "cluster.clients=4",
                                          "workload.namespaces.0.bundles=64", "workload.tasks.0.topics=300"]
       for lm in ("modular", "extensible")},
    # A tenth of the publishers, each ten times as busy: the same load per broker.
    **{f"lm-bench-scale-out-{lm}": ["cluster.clients=4", "workload.tasks.0.topics=1000",
                                    "workload.tasks.0.rate_msgs=500"] for lm in ("modular", "extensible")},
}
UPDATE = os.environ.get("CLUSTEREMU_UPDATE_GOLDEN") == "1"
NAMES = [b.name for b in builtins()]


def _pins() -> dict[str, str]:
    return json.loads(PINS.read_text()) if PINS.exists() else {}


def test_every_builtin_scenario_is_pinned():
    if UPDATE:
        pytest.skip("updating the pins")
    assert sorted(_pins()) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_builtin_scenario_digest_is_the_pinned_one(tmp_path, name):
    result = execute(load_scenario(name, SHRINK.get(name, [])), tmp_path / name, seed=SEED, until=UNTIL)
    assert result.manifest["complete"]
    if UPDATE:
        pins = _pins()
        pins[name] = result.digest
        PINS.write_text(json.dumps(dict(sorted(pins.items())), indent=1) + "\n")
        return
    assert result.digest == _pins().get(name), f"{name}: the trace changed (seed {SEED}, until {UNTIL:g} s)"
