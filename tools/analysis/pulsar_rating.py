"""Pulsar's rating: the table of BIGO's AvgShedder article, computed from runs (the ``rating`` target of the
``pulsar`` system, :data:`RATING`).

The article grades each strategy pair on five criteria — adapting to heterogeneous brokers, to load jitter,
over-loading, over-unloading, and balancing speed — as ``good`` / ``fair`` / ``poor`` (its 良 / 一般 / 差), each
with the figure behind the grade. docs/rating.md gives the rules and how the thresholds were calibrated.

Components:

* :class:`RatingRules`: the thresholds and which runs (scenario globs) exercise each criterion;
* the criteria's figures over a group's runs: :func:`strongest_share`, :func:`over_unloading_pct`,
  :func:`speed_minutes` (with :func:`step_time_s`), and :data:`FIGURES` (criterion → its figure);
* :func:`rate`: the rating table of groups of runs;
* :func:`strategy_label`: a Pulsar run's strategy, ``<shedding>+<placement>`` as the article writes them;
* :class:`PulsarRating` / :data:`RATING`: all of it behind :class:`clusteremu.tools.compare.Rating`, and the
  article's measured figures beside the runs' (:mod:`.pulsar_article`, its ``article`` tables).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from clusteremu.tools.compare import Criterion, Group, RunSummary

from .encoding import number
from .runs import short_class_name

if TYPE_CHECKING:
    import pandas as pd

#: Scenario globs of the article's experiments that start from, or step into, an unbalanced cluster of equal
#: machines, run for every strategy pair: where over-loading, over-unloading and balancing speed are judged.
STEP_CHANGES = ("*-homogeneous", "*-scale-in")
#: The model whose runs this rating grades.
MODEL = "pulsar"


@dataclass(frozen=True)
class RatingRules:
    """Thresholds of the rating table, calibrated on the figures of BIGO's article (docs/rating.md)."""

    heterogeneous: Criterion = Criterion(
        "msg rate of the strongest broker / mean msg rate of the others, at the end", 2.0, 1.2, ("*-heterogeneous",), True
    )
    jitter: Criterion = Criterion("shedding unloads per hour in the settle window", 1.0, 6.0, ("*-jitter",))
    over_loading: Criterion = Criterion("% of placements after shedding on an above-average broker", 10.0, 20.0, STEP_CHANGES)
    over_unloading: Criterion = Criterion(
        "% of shedding rounds that made their broker the least loaded by over 2 score points", 10.0, 20.0, STEP_CHANGES
    )
    speed: Criterion = Criterion(
        "minutes from the load step to the last shedding unload (still unloading at the end: until the end)",
        12.0, 30.0, STEP_CHANGES,
    )
    #: Score points by which a shed broker must end below every other broker to count as over-unloaded: the
    #: load reports' own noise (about ±1 point), so that a pair left even by AvgShedder is balance.
    least_margin: float = 2.0

    def criteria(self) -> dict[str, Criterion]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.type in ("Criterion", Criterion)}


def _ratio_pct(runs: Iterable[RunSummary], num: str, den: str) -> float | None:
    pairs = [(r.figure(num), r.figure(den)) for r in runs]
    pairs = [(n, d) for n, d in pairs if n is not None and d is not None]
    if not pairs:
        return None
    total = sum(d for _n, d in pairs)
    return 100.0 * sum(n for n, _d in pairs) / total if total else 0.0


def over_unloading_pct(runs: Iterable[RunSummary], margin: float) -> float | None:
    """100 × rounds that over-unloaded their broker / determined rounds, pooled, from each run's
    ``over_unloading.rounds_detail``: the broker was above the others' mean before the round and ended more
    than ``margin`` points below every other broker."""
    events = determined = 0
    seen = False
    for r in runs:
        detail = r.figures.get("over_unloading", {}).get("rounds_detail")
        if not isinstance(detail, list):
            continue
        seen = True
        for d in detail:
            if not isinstance(d, dict) or d.get("over_unloaded") is None:
                continue
            determined += 1
            before, mean, after, least = (number(d.get(k)) for k in ("score_before", "others_mean_before", "score_after", "others_min_after"))
            if None not in (before, mean, after, least) and before > mean and after < least - margin:
                events += 1
    if not seen:
        return None
    return 100.0 * events / determined if determined else 0.0


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None and not math.isnan(v)]
    return sum(vals) / len(vals) if vals else None


def _end_s(run: RunSummary) -> float | None:
    return number(run.summary.get("run", {}).get("end_s"))


def step_time_s(run: RunSummary) -> float:
    """When the run's load step happens: the start of its first fault (a scale-in or -out), else 0 (the load
    tasks start together)."""
    starts = [number(f.get("start_s")) for f in run.figures.get("faults", []) if isinstance(f, dict)]
    starts = [s for s in starts if s is not None]
    return min(starts) if starts else 0.0


def speed_minutes(run: RunSummary) -> float | None:
    """Minutes from the load step to the last shedding unload (``settle.quiet_time_s``; 0 when nothing moved
    after the step); a run whose shedding had not stopped for a whole settle window counts until its end."""
    settle = run.figures.get("settle")
    if not isinstance(settle, dict):
        return None
    quiet = number(settle.get("quiet_time_s"))
    if quiet is None:
        quiet = _end_s(run)
        if quiet is None:
            return None
    return max(0.0, quiet - step_time_s(run)) / 60.0


def strongest_share(run: RunSummary) -> float | None:
    """The msg rate (in + out) of the broker with the most cores over the mean msg rate of the other brokers,
    each at its latest load report (``broker_load.parquet``); None when the brokers are all alike."""
    from .pipeline import ANALYSIS_DIR

    cluster = run.scenario.get("cluster", {}) if isinstance(run.scenario.get("cluster"), dict) else {}
    base = number((cluster.get("machine") or {}).get("cores"))
    base = 8.0 if base is None else base
    cores = {b: number((m or {}).get("cores")) or base for b, m in (cluster.get("machines") or {}).items()}
    if not cores or max(cores.values()) <= base:
        return None
    strongest = max(sorted(cores), key=lambda b: cores[b])
    path = run.dir / ANALYSIS_DIR / "broker_load.parquet"
    if not path.exists():
        return None
    latest = _latest_msg_rates(str(path), path.stat().st_mtime_ns)
    others = latest.drop(strongest, errors="ignore")
    if strongest not in latest or others.empty or others.mean() <= 0:
        return None
    return float(latest[strongest] / others.mean())


@functools.lru_cache(maxsize=256)
def _latest_msg_rates(path: str, mtime_ns: int) -> "pd.Series":
    """Each broker's msg rate at its latest report in a ``broker_load.parquet`` — cached by path and
    modification time, because the rating's bootstrap over seeds (:mod:`.pulsar_article`) recomputes the
    heterogeneous figure thousands of times from the same few files."""
    import pandas as pd

    load = pd.read_parquet(path, columns=["t", "broker", "msg_rate"]).sort_values("t", kind="stable")
    return load.groupby("broker")["msg_rate"].last()


#: How each criterion's figure is computed from a group's runs (the selected ones) and the rules.
FIGURES: dict[str, Callable[[Sequence[RunSummary], RatingRules], float | None]] = {
    "heterogeneous": lambda runs, _rules: _mean(strongest_share(r) for r in runs),
    "jitter": lambda runs, _rules: _mean(r.figure("unloads.window_per_hour") for r in runs),
    "over_loading": lambda runs, _rules: _ratio_pct(runs, "over_loading.events", "over_loading.after_shedding"),
    "over_unloading": lambda runs, rules: over_unloading_pct(runs, rules.least_margin),
    "speed": lambda runs, _rules: _mean(speed_minutes(r) for r in runs),
}


def rate(groups: Sequence[Group], rules: RatingRules = RatingRules()) -> dict[str, Any]:
    """The rating table: ``{"rows": [{"strategy": label, "criteria": {name: {"grade", "figure", "unit"}}}]}``.

    Only Pulsar runs are rated (the criteria are load-balancing figures); a criterion that none of the group's
    selected runs gives a figure for is left out of that row.
    """
    rows = []
    for g in groups:
        pulsar = [r for r in g.runs if r.model == MODEL]
        criteria: dict[str, Any] = {}
        for name, crit in rules.criteria().items():
            runs = [r for r in pulsar if crit.selects(r.name)]
            if not runs:
                continue
            figure = FIGURES[name](runs, rules)
            if figure is None or math.isnan(figure):
                continue
            criteria[name] = {"grade": crit.grade(figure), "figure": figure, "unit": crit.unit}
        rows.append({"strategy": g.label, "criteria": criteria})
    return {"rows": rows}


#: The strategies ``ExtensibleLoadManagerImpl`` runs unless the scenario names others (the model's defaults).
EXTENSIBLE_DEFAULTS = {"shedding": "org.apache.pulsar.broker.loadbalance.extensions.scheduler.TransferShedder",
                       "placement": "org.apache.pulsar.broker.loadbalance.extensions.strategy.LeastResourceUsageWithWeight"}


def strategy_label(scenario: Mapping[str, Any]) -> str:
    """``<shedding>+<placement>``: the strategies the run used, class names shortened as the article writes them
    — the scenario's ``strategy`` table, else its ``loadBalancerLoadSheddingStrategy`` /
    ``loadBalancerLoadPlacementStrategy`` config keys (modular load manager only: the extensible one takes its
    own), else Pulsar's defaults for its load manager (ThresholdShedder+LeastLongTermMessageRate for the modular
    one, TransferShedder+LeastResourceUsageWithWeight for the extensible one), as the model resolves them."""
    from clusteremu.strategies.pulsar.config import DEFAULTS

    def table(name: str) -> Mapping[str, Any]:
        value = scenario.get(name) if isinstance(scenario, Mapping) else None
        return value if isinstance(value, Mapping) else {}

    strategy, config = table("strategy"), table("config")
    if strategy.get("load_manager") == "extensible":
        defaults = EXTENSIBLE_DEFAULTS
    else:
        defaults = {"shedding": config.get("loadBalancerLoadSheddingStrategy") or DEFAULTS["loadBalancerLoadSheddingStrategy"],
                    "placement": config.get("loadBalancerLoadPlacementStrategy") or DEFAULTS["loadBalancerLoadPlacementStrategy"]}
    return "+".join(short_class_name(strategy.get(k) or defaults[k]) for k in ("shedding", "placement"))


@dataclass(frozen=True)
class PulsarRating:
    """The AvgShedder article's rating as a :class:`clusteremu.tools.compare.Rating`."""

    rules: RatingRules = RatingRules()
    title: str = "rating (AvgShedder article)"

    def criteria(self) -> dict[str, Criterion]:
        return self.rules.criteria()

    def rate(self, groups: Sequence[Group]) -> list[dict[str, Any]]:
        return rate(groups, self.rules)["rows"]

    def strategy_label(self, scenario: Mapping[str, Any]) -> str:
        return strategy_label(scenario)

    def article(self, runs: Sequence[RunSummary]) -> list[dict[str, Any]]:
        """The article's measured figures and its rating table beside the runs' (seeds pooled, with their
        spread): :func:`.pulsar_article.article_tables`, for :func:`clusteremu.tools.compare.article_tables`;
        then Pulsar's published load-manager benchmark beside its runs (:mod:`.pulsar_lm_benchmark`). Runs of
        the benchmark alone give no article tables (they would be rows without figures)."""
        from .pulsar_article import article_tables
        from .pulsar_lm_benchmark import SCENARIO_PREFIX, lm_benchmark_tables

        article_runs = [r for r in runs if not str(r.name).startswith(SCENARIO_PREFIX)]
        return (article_tables(article_runs) if article_runs else []) + lm_benchmark_tables(runs)


#: Pulsar's rating (the ``rating`` target of the ``pulsar`` system).
RATING = PulsarRating()
