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

from .shrink import SHRINK

PINS = Path(__file__).with_name("golden_digests.json")
SEED = 7
UNTIL = 1800.0
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
