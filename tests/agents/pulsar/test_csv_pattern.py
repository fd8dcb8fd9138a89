"""A task whose traffic follows a recorded series (``pattern = {kind = "csv", path = ...}``): the file is read
relative to the scenario, carried in the run's manifest, and the run replays anywhere after the file is gone."""
from __future__ import annotations

import os

import pytest

from clusteremu.base.errors import InputError
from clusteremu.cli import main
from clusteremu.emulator.trace import open_run
from clusteremu.scenarios.loader import load_scenario

LIBRARY_SCENARIO = "threshold-jitter"


def write_scenario(folder, series: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data").mkdir(exist_ok=True)
    (folder / "data" / "rates.csv").write_text(series)
    source = load_scenario(LIBRARY_SCENARIO).source
    text = open(source).read().replace(
        'pattern = { kind = "on_off", on_s = 60.0, off_s = 60.0, off_factor = 0.0 }',
        'pattern = { kind = "csv", path = "data/rates.csv" }')
    assert 'kind = "csv"' in text
    path = folder / "mine.toml"
    path.write_text(text)
    return str(path)


def test_the_series_is_read_next_to_the_scenario_and_replays_after_it_is_gone(tmp_path, monkeypatch, capsys):
    scenario = write_scenario(tmp_path / "scen", "t_s,factor\n0,1\n60,0\n120,1\n")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # not the scenario's folder
    run_dir = tmp_path / "run"
    assert main(["run", scenario, "--until", "300", "--out", str(run_dir), "--quiet"]) == 0
    task = open_run(run_dir).manifest["scenario"]["workload"]["tasks"][-1]
    assert task["pattern"]["path"] == {"path": "data/rates.csv", "text": "t_s,factor\n0,1\n60,0\n120,1\n"}
    os.remove(tmp_path / "scen" / "data" / "rates.csv")
    capsys.readouterr()
    assert main(["replay", str(run_dir)]) == 0


def test_the_series_changes_the_run(tmp_path):
    from clusteremu.emulator.runner import execute

    on = execute(load_scenario(write_scenario(tmp_path / "a", "t_s,factor\n0,1\n")), tmp_path / "ra", until=300)
    off = execute(load_scenario(write_scenario(tmp_path / "b", "t_s,factor\n0,0\n")), tmp_path / "rb", until=300)
    assert on.digest != off.digest


@pytest.mark.parametrize("series, reason", [
    ("time,factor\n0,1\n", "no t_s column"),
    ("t_s,factor\n0,x\n", "line 2: factor: not a number"),
    ("t_s,factor\n60,1\n0,1\n", "t_s must not decrease"),
    ("t_s,factor\n", "no rows"),
])
def test_a_bad_series_is_refused_naming_the_file_and_the_line(tmp_path, series, reason):
    with pytest.raises(InputError) as err:
        load_scenario(write_scenario(tmp_path, series))
    assert "pattern.path" in str(err.value) and "data/rates.csv" in str(err.value) and reason in str(err.value)
