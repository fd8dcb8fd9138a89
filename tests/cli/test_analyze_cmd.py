"""``clusteremu analyze``: bad input is refused with exit status 2 before any Spark work."""
from __future__ import annotations

from clusteremu.cli import main


def test_a_missing_directory_is_bad_input(tmp_path, capsys):
    assert main(["analyze", str(tmp_path / "nope")]) == 2
    assert "no such run directory" in capsys.readouterr().err


def test_a_directory_that_is_not_a_run_is_bad_input(tmp_path, capsys):
    (tmp_path / "x").mkdir()
    assert main(["analyze", str(tmp_path / "x")]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_a_settle_window_of_zero_is_bad_input(tmp_path, capsys, trace):
    run_dir = trace().event(1.0, "b1", "stw_pause", duration_s=0.1, cause="gc").write()
    assert main(["analyze", str(run_dir), "--settle-window-min", "0"]) == 2
    assert "settle_window_s" in capsys.readouterr().err
