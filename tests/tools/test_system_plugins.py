"""A system's figures, options and rating reach the analysis, ``compare`` and the CLI through the registry alone:
a toy system registered here gets its own strategy label, rating table, option flag and figures (no Spark)."""
from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any, Mapping, Sequence

import pytest

from clusteremu.cli import main
from clusteremu.emulator import systems
from clusteremu.tools.analysis import GENERIC, AnalysisOptions, ModelFigures, Option, declared_options, figures_for
from clusteremu.tools.analysis.pulsar import PulsarFigures
from clusteremu.tools.analysis.pulsar_rating import RATING
from clusteremu.tools.analysis.runs import generic_strategy_label, strategy_label
from clusteremu.tools.compare import Criterion, Group, Rating, RunSummary, comparison, group_runs, rating_for, to_csv


class ToyFigures(ModelFigures):
    model = "toy"
    options = (Option("toy_gap_s", 5.0, "gap between toy rounds", "--toy-gap-min", "MIN", 60.0),)


class ToyRating:
    title = "rating (toy)"

    def criteria(self) -> Mapping[str, Criterion]:
        return {"calm": Criterion("expiries", 0.0, 1.0)}

    def rate(self, groups: Sequence[Group]) -> list[dict[str, Any]]:
        crit = self.criteria()["calm"]
        rows = []
        for g in groups:
            figure = g.mean("sessions.expiries")
            cells = {} if figure is None else {"calm": {"grade": crit.grade(figure), "figure": figure, "unit": crit.unit}}
            rows.append({"strategy": g.label, "criteria": cells})
        return rows

    def strategy_label(self, scenario: Mapping[str, Any]) -> str:
        return f"toy:{scenario.get('strategy', {}).get('allocator', '?')}"


TOY_RATING = ToyRating()


@pytest.fixture
def toy():
    systems.register(systems.System(name="toy", description="a toy", model="nowhere:MODEL",
                                    figures=f"{__name__}:ToyFigures", rating=f"{__name__}:TOY_RATING"))
    systems.register(systems.System(name="bare", description="no figures, no rating", model="nowhere:MODEL"))
    try:
        yield
    finally:
        systems.unregister("toy")
        systems.unregister("bare")


def toy_run(label: str, allocator: str, expiries: float, model: str = "toy") -> RunSummary:
    summary = {"run": {"scenario": label, "model": model}, "figures": {"sessions": {"expiries": expiries}}}
    return RunSummary(Path(f"/runs/{label}"), summary, {"strategy": {"allocator": allocator}}, 1)


def test_figures_come_from_the_registry(toy):
    assert isinstance(figures_for("pulsar"), PulsarFigures)
    assert isinstance(figures_for("toy"), ToyFigures)
    assert figures_for("bare") is GENERIC and figures_for("no-such-model") is GENERIC


def test_each_system_labels_its_own_strategies(toy):
    assert strategy_label({"strategy": {"allocator": "Averagely"}}, "toy") == "toy:Averagely"
    # Without a rating: the short class names of the strategy table's values, in order.
    scenario = {"strategy": {"allocation": "org.example.AllocateAveragely", "scheduler": "Resource", "weight": 3}}
    assert strategy_label(scenario, "bare") == "AllocateAveragely+Resource" == generic_strategy_label(scenario)
    assert strategy_label({"strategy": {}}, "bare") == "(no strategy)" == strategy_label({}, "no-such-model")
    assert strategy_label({"strategy": {"shedding": "a.b.AvgShedder", "placement": "AvgShedder"}}, "pulsar") == "AvgShedder+AvgShedder"


def test_each_systems_rating_grades_its_own_runs(toy):
    assert isinstance(RATING, Rating) and isinstance(rating_for("toy"), Rating)
    assert rating_for("bare") is None and rating_for("heartbeat") is None
    runs = [toy_run("a", "X", 0.0), toy_run("b", "X", 1.0), toy_run("c", "Y", 3.0), toy_run("d", "Y", 3.0, "bare")]
    result = comparison(group_runs(runs, "scenario"), "scenario")
    rows = {r["strategy"]: r["criteria"] for r in result["rows"]}
    assert rows == {
        "toy:X": {"calm": {"grade": "fair", "figure": 0.5, "unit": "expiries"}},
        "toy:Y": {"calm": {"grade": "poor", "figure": 3.0, "unit": "expiries"}},
        "Y": {},  # the bare system's run: generic label, no rating
    }
    # The CSV has a column pair per criterion of every registered rating.
    header = to_csv(result).splitlines()[0].split(",")
    assert header[-2:] == ["calm.grade", "calm.figure"] and "speed.grade" in header


def test_the_cli_builds_each_systems_option_flags(toy, trace, capsys, tmp_path):
    names = [o.name for o in declared_options()]
    assert names[0] == "settle_window_s" and {"settle_spread", "toy_gap_s"} <= set(names)
    run_dir = trace().event(1.0, "b1", "stw_pause", duration_s=0.1, cause="gc").write()
    assert main(["analyze", str(run_dir), "--toy-gap-min", "-1"]) == 2
    assert "--toy-gap-min -1: toy_gap_s must be a number greater than 0" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    assert "--toy-gap-min MIN" in capsys.readouterr().out


def test_options_resolve_per_system_and_travel():
    opts = AnalysisOptions(settle_window_s=300.0, settle_spread=10.0)
    assert opts.resolved(PulsarFigures.options) == {
        "settle_window_s": 300.0, "settle_spread": 10.0, "round_gap_s": 300.0, "after_round_s": 180.0}
    assert opts.resolved(()) == {"settle_window_s": 300.0}
    assert pickle.loads(pickle.dumps(opts)) == opts and hash(opts) == hash(AnalysisOptions(300.0, settle_spread=10))
    json.dumps(opts.resolved(PulsarFigures.options))
    with pytest.raises(ValueError, match="settle_spread"):
        AnalysisOptions(settle_spread=0)
    with pytest.raises(AttributeError):
        opts.settle_window_s = 1.0  # type: ignore[misc]


def test_an_option_no_system_declares_is_refused():
    from clusteremu.tools.analysis import analyze

    with pytest.raises(ValueError, match="settle_sprad"):
        analyze(None, [], AnalysisOptions(settle_sprad=15.0))  # type: ignore[arg-type]
