"""Cross-run comparison: runs grouped by strategy (or any scenario key), their figures side by side, and the
rating table of BIGO's AvgShedder article computed from them.

The per-run figures come from each run's ``summary.json`` (``clusteremu analyze``); runs without one are analysed
first, together, in one Spark job. Grouping and rating then reduce a few numbers per run, which needs no Spark.

The rating (:func:`rate`) grades each group on the article's five criteria — adapting to heterogeneous brokers,
to load jitter, over-loading, over-unloading, and balancing speed — as ``good`` / ``fair`` / ``poor`` (the
article's 良 / 一般 / 差), each with the figure behind the grade. :class:`RatingRules` holds the thresholds and
which runs exercise each criterion; docs/rating.md gives the rules and how the defaults were calibrated.
"""
from __future__ import annotations

import csv
import fnmatch
import io
import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from clusteremu.base.errors import InputError
from clusteremu.tools.analysis.encoding import number
from clusteremu.tools.analysis.runs import scenario_value, strategy_label

#: ``--by`` values that are not scenario key paths.
SPECIAL_KEYS = ("strategy", "scenario", "seed", "model", "run")
GRADES = ("good", "fair", "poor")


@dataclass
class RunSummary:
    """One run's analysis summary and its manifest's scenario."""

    dir: Path
    summary: dict[str, Any]
    scenario: dict[str, Any]
    seed: int | None = None

    @property
    def model(self) -> str:
        return str(self.summary.get("run", {}).get("model", ""))

    @property
    def name(self) -> str:
        return str(self.summary.get("run", {}).get("scenario", self.dir.name))

    @property
    def figures(self) -> dict[str, Any]:
        return self.summary.get("figures", {})

    def figure(self, path: str) -> float | None:
        """The figure at a dotted path as a number (None when absent or not a number)."""
        node: Any = self.figures
        for part in path.split("."):
            if not isinstance(node, dict):
                return None
            node = node.get(part)
        return number(node)


@dataclass
class Group:
    """Runs that share a label."""

    label: str
    runs: list[RunSummary] = field(default_factory=list)

    @property
    def models(self) -> list[str]:
        return sorted({r.model for r in self.runs})

    def mean(self, path: str) -> float | None:
        """Mean of a figure over the group's runs that have it (an infinite value makes it infinite)."""
        values = [v for v in (r.figure(path) for r in self.runs) if v is not None and not math.isnan(v)]
        return sum(values) / len(values) if values else None


# -- loading -----------------------------------------------------------------------------------------------------
def load_summaries(
    run_dirs: Sequence[str | Path],
    *,
    master: str | None = None,
    options: Any = None,
    analyze_missing: bool = True,
) -> list[RunSummary]:
    """The summaries of ``run_dirs`` (``RUN/analysis/summary.json``), analysing first the runs that lack one."""
    from clusteremu.tools.analysis import ANALYSIS_DIR, AnalysisOptions, analyze_runs

    dirs = [Path(d) for d in run_dirs]
    for d in dirs:
        if not d.is_dir():
            raise InputError(str(d), "no such run directory")
    missing = [d for d in dirs if not (d / ANALYSIS_DIR / "summary.json").exists()]
    if missing:
        if not analyze_missing:
            raise InputError(str(missing[0]), "has no analysis (run `clusteremu analyze` on it first)")
        analyze_runs(missing, master=master, options=options or AnalysisOptions())
    out = []
    for d in dirs:
        path = d / ANALYSIS_DIR / "summary.json"
        try:
            summary = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            raise InputError(str(path), f"unreadable summary: {err}") from None
        manifest = _manifest(d)
        scenario = manifest.get("scenario") if isinstance(manifest.get("scenario"), dict) else {}
        seed = manifest.get("seed") if isinstance(manifest.get("seed"), int) else None
        out.append(RunSummary(d, summary, scenario, seed))
    return out


def _manifest(run_dir: Path) -> dict[str, Any]:
    try:
        m = json.loads((run_dir / "manifest.json").read_text())
        return m if isinstance(m, dict) else {}
    except (OSError, ValueError):
        return {}


# -- grouping ----------------------------------------------------------------------------------------------------
def label_of(run: RunSummary, by: str) -> str:
    """The group label of a run for ``by``: ``strategy`` (``<shedding>+<placement>``), ``scenario``, ``seed``,
    ``model``, ``run``, or a dotted scenario key path (``cluster.brokers``); several, comma-separated, join as
    ``key=value`` pairs."""
    keys = [k.strip() for k in by.split(",") if k.strip()]
    if not keys:
        raise InputError(f"--by {by}", "expected a key")
    if len(keys) > 1:
        return " ".join(f"{k}={label_of(run, k)}" for k in keys)
    key = keys[0]
    if key == "strategy":
        return strategy_label(run.scenario)
    if key == "scenario":
        return run.name
    if key == "seed":
        return str(run.seed)
    if key == "model":
        return run.model
    if key == "run":
        return str(run.dir)
    value = scenario_value(run.scenario, key)
    if value is None:
        return "(unset)"
    return json.dumps(value) if isinstance(value, (dict, list)) else str(value)


def group_runs(runs: Sequence[RunSummary], by: str | Callable[[RunSummary], str] = "strategy") -> list[Group]:
    """Runs grouped by label, groups in order of first appearance."""
    label = (lambda r: label_of(r, by)) if isinstance(by, str) else by
    groups: dict[str, Group] = {}
    for r in runs:
        lab = label(r)
        groups.setdefault(lab, Group(lab)).runs.append(r)
    return list(groups.values())


# -- the rating table --------------------------------------------------------------------------------------------
#: Scenario globs of the article's experiments that start from, or step into, an unbalanced cluster of equal
#: machines, run for every strategy pair: where over-loading, over-unloading and balancing speed are judged.
STEP_CHANGES = ("*-homogeneous", "*-scale-in")


@dataclass(frozen=True)
class Criterion:
    """One column of the rating table. With ``higher_is_better`` false a figure is ``good`` up to ``good``,
    ``fair`` up to ``fair``, else ``poor``; with it true, ``good`` from ``good`` up, ``fair`` from ``fair`` up.
    ``scenarios`` are globs on scenario names selecting the runs that exercise the criterion; a group without
    such runs has no grade for it (empty ``scenarios``: every run counts)."""

    unit: str
    good: float
    fair: float
    scenarios: tuple[str, ...] = ()
    higher_is_better: bool = False

    def grade(self, figure: float) -> str:
        if math.isnan(figure):
            raise ValueError("a NaN figure has no grade")
        if self.higher_is_better:
            return "good" if figure >= self.good else "fair" if figure >= self.fair else "poor"
        return "good" if figure <= self.good else "fair" if figure <= self.fair else "poor"

    def selects(self, scenario: str) -> bool:
        return not self.scenarios or any(fnmatch.fnmatchcase(scenario, g) for g in self.scenarios)


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
    import pandas as pd

    from clusteremu.tools.analysis import ANALYSIS_DIR

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
    load = pd.read_parquet(path, columns=["t", "broker", "msg_rate"]).sort_values("t", kind="stable")
    latest = load.groupby("broker")["msg_rate"].last()
    others = latest.drop(strongest, errors="ignore")
    if strongest not in latest or others.empty or others.mean() <= 0:
        return None
    return float(latest[strongest] / others.mean())


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
        pulsar = [r for r in g.runs if r.model == "pulsar"]
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


# -- the comparison table ----------------------------------------------------------------------------------------
def headline_columns(groups: Sequence[Group]) -> list[Any]:
    """The headline figures of the models present, in model order then declaration order."""
    from clusteremu.tools.analysis import figures_for

    seen: dict[str, Any] = {}
    for model in sorted({m for g in groups for m in g.models}):
        for h in figures_for(model).headline:
            seen.setdefault(h.path, h)
    return list(seen.values())


def comparison(groups: Sequence[Group], by: str, rules: RatingRules = RatingRules()) -> dict[str, Any]:
    """Everything ``clusteremu compare`` shows, as a JSON-ready dict: ``by``, ``groups`` (label, runs, mean of
    each headline figure) and the rating table's ``rows``."""
    cols = headline_columns(groups)
    out_groups = []
    for g in groups:
        out_groups.append(
            {
                "label": g.label,
                "runs": len(g.runs),
                "run_dirs": [str(r.dir) for r in g.runs],
                "partial_runs": sum(1 for r in g.runs if r.summary.get("partial")),
                "figures": {h.path: g.mean(h.path) for h in cols},
            }
        )
    # The rating table is per strategy pair whatever the grouping of the figures (a sweep groups by point).
    every_run = [r for g in groups for r in g.runs]
    return {"by": by, "groups": out_groups, **rate(group_runs(every_run, "strategy"), rules)}


def to_csv(result: Mapping[str, Any]) -> str:
    """One line per group: label, runs, each headline figure, then each criterion's grade and figure."""
    groups = result["groups"]
    paths = list(groups[0]["figures"]) if groups else []
    crit = list(RatingRules().criteria())
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["group", "runs", *paths, *[f"{c}.{k}" for c in crit for k in ("grade", "figure")]])
    rating = {r["strategy"]: r["criteria"] for r in result["rows"]}
    for g in groups:
        crits = rating.get(g["label"], {})
        w.writerow(
            [g["label"], g["runs"], *[_csv(g["figures"][p]) for p in paths],
             *[_csv(crits.get(c, {}).get(k)) for c in crit for k in ("grade", "figure")]]
        )
    return buf.getvalue()


def _csv(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("inf" if v > 0 else "-inf" if v < 0 else "nan")
    return str(v)
