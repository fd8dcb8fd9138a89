"""Running a scenario for a test: any scenario form plus keyword overrides in, a finished :class:`Run` out.

This is what the ``emulate`` fixture of :mod:`clusteremu.emulator.pytest_plugin` calls with a fresh directory under
pytest's temporary directories; it works the same outside pytest.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Mapping, Union

from clusteremu.emulator.runner import execute
from clusteremu.emulator.trace.reader import Run, open_run
from clusteremu.scenarios.loader import Scenario, validate_scenario

from .builder import ScenarioBuilder, raw_scenario, with_overrides

#: Every form a scenario may be given in.
ScenarioLike = Union[str, Path, Mapping[str, Any], Scenario, ScenarioBuilder]


def prepare(scenario: ScenarioLike, overrides: Mapping[str, Any] | None = None) -> Scenario:
    """The validated scenario: a built-in's name, a TOML path, a dict, a :class:`Scenario` or a
    :class:`ScenarioBuilder`, with ``overrides`` (``{"workload.timer_mode": "fixed_delay"}``; ``__`` may stand
    for ``.``) applied before validation, as ``--set`` would be."""
    raw, source = raw_scenario(scenario)
    return validate_scenario(with_overrides(raw, overrides or {}), source)


def run_key(scenario: Scenario, seed: int, until: float, agents: str) -> str:
    """Identity of a run: equal keys give byte-identical traces (DESIGN.md principle 1), so a run can be reused."""
    text = json.dumps([scenario.data, seed, until, agents], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def emulate_into(
    scenario: ScenarioLike,
    run_dir: str | os.PathLike,
    *,
    seed: int | None = None,
    until: float | None = None,
    agents: str = "inproc",
    **overrides: Any,
) -> Run:
    """Run ``scenario`` into ``run_dir`` (new or empty) and open the finished run.

    ``seed`` defaults to the scenario's own, ``until`` to its duration; keyword ``overrides`` set key paths
    (``emulate_into(s, d, workload__timer_mode="fixed_delay")`` or ``**{"workload.timer_mode": ...}``).
    """
    sc = prepare(scenario, overrides)
    result = execute(sc, Path(run_dir), seed=seed, until=until, agents=agents)
    return open_run(result.run_dir)
