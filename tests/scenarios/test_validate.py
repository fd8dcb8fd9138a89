"""`clusteremu validate` refuses bad scenarios with exit 2 and the key path."""
from __future__ import annotations

from pathlib import Path

import pytest

from clusteremu.cli import main
from clusteremu.scenarios.catalog import builtins

GOOD = """
[scenario]
name = "t"
model = "heartbeat"
duration_s = 60

[workload]
timer_mode = "fixed_delay"
"""


def write(tmp_path: Path, text: str) -> str:
    p = tmp_path / "s.toml"
    p.write_text(text)
    return str(p)


def test_a_good_scenario_validates(tmp_path, capsys):
    assert main(["validate", write(tmp_path, GOOD)]) == 0
    assert "ok" in capsys.readouterr().out


@pytest.mark.parametrize(
    "text, key, reason",
    [
        (GOOD + "\n[cluster]\nmembres = 3\n", "cluster.membres", "unknown key"),
        (GOOD.replace('timer_mode = "fixed_delay"', "timer_mode = 3"), "workload.timer_mode", "expected a string"),
        (GOOD.replace("duration_s = 60", "duration_s = -5"), "scenario.duration_s", "greater than 0"),
        (GOOD.replace('"fixed_delay"', '"sometimes"'), "workload.timer_mode", "unknown value 'sometimes'"),
        (GOOD + '\n[network]\nlatency = { dist = "uniform", min_ms = 0 }\n', "network.latency.min_ms", "greater than 0"),
        (GOOD + '\n[[faults]]\nkind = "pause"\nat = 5\n', "faults[0].agents", "needs the agents"),
        (GOOD.replace('model = "heartbeat"', 'model = "kafka"'), "scenario.model", "unknown value 'kafka'"),
    ],
)
def test_bad_scenarios_exit_2_naming_file_key_and_reason(tmp_path, capsys, text, key, reason):
    path = write(tmp_path, text)
    assert main(["validate", path]) == 2
    err = capsys.readouterr().err
    assert path in err and key in err and reason in err


def test_not_toml_and_missing_file(tmp_path, capsys):
    assert main(["validate", write(tmp_path, "[scenario\n")]) == 2
    assert "not valid TOML" in capsys.readouterr().err
    assert main(["validate", str(tmp_path / "nope.toml")]) == 2
    assert "no such scenario file" in capsys.readouterr().err


def test_set_overrides_are_validated_too(tmp_path, capsys):
    path = write(tmp_path, GOOD)
    assert main(["validate", path, "--set", "cluster.members=0"]) == 2
    assert "cluster.members" in capsys.readouterr().err
    assert main(["validate", path, "--set", "cluster.members=7"]) == 0


def test_every_builtin_scenario_validates(capsys):
    names = [b.name for b in builtins()]
    assert "kernel-heartbeat" in names
    for name in names:
        assert main(["validate", name]) == 0, capsys.readouterr().err
