"""Runs of the Storm scenarios shared by the tests of a module (a run takes under a second)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from clusteremu.emulator.runner import execute
from clusteremu.emulator.trace.query import Trace
from clusteremu.scenarios.loader import load_scenario


@pytest.fixture(scope="module")
def storm_run(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Trace]:
    """``storm_run(name, *overrides, seed=1)``: the trace of a built-in scenario (``--set`` style overrides)."""
    cache: dict[tuple, Trace] = {}

    def run(name: str, *overrides: str, seed: int = 1) -> Trace:
        key = (name, overrides, seed)
        if key not in cache:
            out: Path = tmp_path_factory.mktemp(name)
            r = execute(load_scenario(name, list(overrides)), out / "run", seed=seed)
            cache[key] = Trace(r.run_dir)
        return cache[key]

    return run
