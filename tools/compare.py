"""Cross-run comparison: runs grouped by strategy (or any scenario key), their figures side by side, and each
system's rating table computed from them.

The per-run figures come from each run's ``summary.json`` (``clusteremu analyze``); runs without one are analysed
first, together, in one Spark job. Grouping and rating then reduce a few numbers per run, which needs no Spark.

Components:

* :class:`RunSummary`, :func:`load_summaries`: the runs as ``compare`` reads them;
* :func:`label_of`, :func:`group_runs`, :class:`Group`: grouping by strategy, scenario, seed, model, run or a
  scenario key;
* :class:`Rating` (a protocol) and :class:`Criterion`: what a system declares to grade strategies (its
  ``rating`` target in :mod:`clusteremu.emulator.systems`); :func:`rating_for`, :func:`ratings`,
  :func:`rating_rows` apply them, each to the runs of its own system;
* :func:`comparison`, :func:`headline_columns`, :func:`to_csv`: what ``clusteremu compare`` prints.

A strategy label is the system's own (:meth:`Rating.strategy_label`); a system without a rating gets a generic
one (:func:`clusteremu.tools.analysis.runs.strategy_label`). docs/rating.md gives the built-in ratings.
"""
from __future__ import annotations

import csv
import fnmatch
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Protocol, Sequence, runtime_checkable

from clusteremu.base.errors import InputError
from clusteremu.emulator import systems
from clusteremu.tools.analysis.encoding import number
from clusteremu.tools.analysis.runs import scenario_value, strategy_label

if TYPE_CHECKING:
    from clusteremu.tools.analysis.options import AnalysisOptions

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
    options: "AnalysisOptions | None" = None,
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
    """The group label of a run for ``by``: ``strategy`` (its system's label), ``scenario``, ``seed``,
    ``model``, ``run``, or a dotted scenario key path (``cluster.brokers``); several, comma-separated, join as
    ``key=value`` pairs."""
    keys = [k.strip() for k in by.split(",") if k.strip()]
    if not keys:
        raise InputError(f"--by {by}", "expected a key")
    if len(keys) > 1:
        return " ".join(f"{k}={label_of(run, k)}" for k in keys)
    key = keys[0]
    if key == "strategy":
        return strategy_label(run.scenario, run.model)
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


def check_by(runs: Sequence[RunSummary], by: str) -> None:
    """Refuse (``InputError``) a ``--by`` key that is neither one of :data:`SPECIAL_KEYS` nor a key path that any
    of the runs' scenarios has: it would lump every run into ``(unset)``."""
    for key in (k.strip() for k in by.split(",")):
        if not key or key in SPECIAL_KEYS:
            continue
        if not any(scenario_value(r.scenario, key) is not None for r in runs):
            sections = sorted({k for r in runs for k in r.scenario if isinstance(r.scenario.get(k), dict)})
            raise InputError(f"--by {key}", f"no run's scenario has this key; known: {', '.join(SPECIAL_KEYS)}, or a "
                                            f"key path under {', '.join(sections) or 'the scenario'} (e.g. cluster.brokers)")


def group_runs(runs: Sequence[RunSummary], by: str | Callable[[RunSummary], str] = "strategy") -> list[Group]:
    """Runs grouped by label, groups in order of first appearance; a ``by`` key that no run has is refused."""
    if isinstance(by, str):
        check_by(runs, by)
    label = (lambda r: label_of(r, by)) if isinstance(by, str) else by
    groups: dict[str, Group] = {}
    for r in runs:
        lab = label(r)
        groups.setdefault(lab, Group(lab)).runs.append(r)
    return list(groups.values())


# -- ratings ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Criterion:
    """One column of a rating table. With ``higher_is_better`` false a figure is ``good`` up to ``good``,
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


@runtime_checkable
class Rating(Protocol):
    """A system's comparison rules: the ``rating`` target of its :class:`clusteremu.emulator.systems.System`.

    * ``title``: the heading of its rating table;
    * ``criteria()``: criterion name → :class:`Criterion` (the table's columns, in order, with their units);
    * ``rate(groups)``: one row per group — ``{"strategy": group label, "criteria": {name: {"grade", "figure",
      "unit"}}}`` — grading the group's runs of the system (a criterion without a figure is left out);
    * ``strategy_label(scenario)``: the label a run of the system is grouped under by ``--by strategy`` (and
      that ``summary.json`` records), from its scenario.
    """

    title: str

    def criteria(self) -> Mapping[str, Criterion]: ...

    def rate(self, groups: Sequence[Group]) -> list[dict[str, Any]]: ...

    def strategy_label(self, scenario: Mapping[str, Any]) -> str: ...


class CriteriaRules(Protocol):
    """What :class:`RuleRating` reads of a system's rules: its criteria."""

    def criteria(self) -> Mapping[str, Criterion]: ...


@dataclass(frozen=True)
class RuleRating:
    """A :class:`Rating` made of a system's rules, the function that grades groups with them and the function that
    labels a run's strategy: what a system declares instead of writing the protocol's methods itself."""

    title: str
    rules: CriteriaRules
    grade_groups: Callable[[Sequence[Group], Any], list[dict[str, Any]]]
    label: Callable[[Mapping[str, Any]], str]

    def criteria(self) -> Mapping[str, Criterion]:
        return self.rules.criteria()

    def rate(self, groups: Sequence[Group]) -> list[dict[str, Any]]:
        return self.grade_groups(groups, self.rules)

    def strategy_label(self, scenario: Mapping[str, Any]) -> str:
        return self.label(scenario)


def pooled_weighted(runs: Iterable[RunSummary], value: str, weight: str) -> float | None:
    """Σ value × weight / Σ weight over the runs that have both figures (a per-run mean pooled over its items)."""
    num = den = 0.0
    for r in runs:
        v, w = r.figure(value), r.figure(weight)
        if v is None or w is None or w <= 0 or math.isnan(v):
            continue
        num, den = num + v * w, den + w
    return num / den if den else None


def pooled_ratio(runs: Iterable[RunSummary], num: str, den: str, scale: float = 100.0) -> float | None:
    """scale × Σ num / Σ den over the runs that have both figures (0 when every denominator is 0)."""
    pairs = [(r.figure(num), r.figure(den)) for r in runs]
    pairs = [(n, d) for n, d in pairs if n is not None and d is not None]
    if not pairs:
        return None
    total = sum(d for _n, d in pairs)
    return scale * sum(n for n, _d in pairs) / total if total else 0.0


def mean_figure(runs: Iterable[RunSummary], path: str) -> float | None:
    """The mean of a figure over the runs that have it (None when none has)."""
    values = [v for v in (r.figure(path) for r in runs) if v is not None and not math.isnan(v)]
    return sum(values) / len(values) if values else None


def grade_groups(groups: Sequence[Group], model: str, rules: CriteriaRules,
                 figures: Mapping[str, Callable[[Sequence[RunSummary]], float | None]]) -> list[dict[str, Any]]:
    """One rating row per group, ``{"strategy", "criteria": {name: {"grade", "figure", "unit"}}}``: each criterion
    graded on the figure ``figures[name]`` computes from the group's runs of ``model`` that the criterion selects;
    a criterion without a figure is left out of the row."""
    rows = []
    for g in groups:
        mine = [r for r in g.runs if r.model == model]
        criteria: dict[str, Any] = {}
        for name, crit in rules.criteria().items():
            runs = [r for r in mine if crit.selects(r.name)]
            figure = figures[name](runs) if runs else None
            if figure is None or math.isnan(figure):
                continue
            criteria[name] = {"grade": crit.grade(figure), "figure": figure, "unit": crit.unit}
        rows.append({"strategy": g.label, "criteria": criteria})
    return rows


def rating_for(model: str) -> Rating | None:
    """The rating of system ``model`` (None for a system without one, or a model no system has)."""
    try:
        target = systems.system(model).rating
    except KeyError:
        return None
    return None if target is None else systems.load(target)


def ratings() -> dict[str, Rating]:
    """Every registered system's rating, by system name (in name order)."""
    out = {}
    for name in systems.systems():
        rating = rating_for(name)
        if rating is not None:
            out[name] = rating
    return out


def rating_rows(runs: Sequence[RunSummary]) -> list[dict[str, Any]]:
    """The rating table of ``runs``: one row per strategy label (in order of first appearance), each graded by
    the rating of the system of its runs (a group without a rated system's runs has no criteria)."""
    rows = []
    for g in group_runs(runs, "strategy"):
        criteria: dict[str, Any] = {}
        for model in g.models:
            rating = rating_for(model)
            if rating is not None:
                (row,) = rating.rate([Group(g.label, [r for r in g.runs if r.model == model])])
                criteria.update(row["criteria"])
        rows.append({"strategy": g.label, "criteria": criteria})
    return rows


# -- the comparison table ----------------------------------------------------------------------------------------
def headline_columns(groups: Sequence[Group]) -> list[Any]:
    """The headline figures of the models present, in model order then declaration order."""
    from clusteremu.tools.analysis import figures_for

    seen: dict[str, Any] = {}
    for model in sorted({m for g in groups for m in g.models}):
        for h in figures_for(model).headline:
            seen.setdefault(h.path, h)
    return list(seen.values())


def comparison(groups: Sequence[Group], by: str) -> dict[str, Any]:
    """Everything ``clusteremu compare`` shows, as a JSON-ready dict: ``by``, ``groups`` (label, runs, mean of
    each headline figure) and the rating tables' ``rows`` (:func:`rating_rows`)."""
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
    # The rating table is per strategy whatever the grouping of the figures (a sweep groups by point).
    every_run = [r for g in groups for r in g.runs]
    return {"by": by, "groups": out_groups, "rows": rating_rows(every_run)}


def rating_columns() -> list[str]:
    """The criteria of every registered rating, in system name order: the rating columns of the CSV (the same
    for every comparison, so that CSV files of one installation line up)."""
    return list(dict.fromkeys(name for rating in ratings().values() for name in rating.criteria()))


def to_csv(result: Mapping[str, Any]) -> str:
    """One line per group: label, runs, each headline figure, then each criterion's grade and figure."""
    groups = result["groups"]
    paths = list(groups[0]["figures"]) if groups else []
    crit = rating_columns()
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


# -- the source article's figures beside the runs' --------------------------------------------------------------
@runtime_checkable
class ArticleTables(Protocol):
    """Optional part of a system's :class:`Rating`: the measured figures of the article its rating follows,
    beside the same figures computed from runs. ``article(runs)`` gets the system's runs (all seeds of a sweep)
    and returns tables, each ``{"title", "columns", "rows", "notes"}`` (rows of strings, one per column; any
    other key, such as ``data``, travels to ``--format json`` untouched)."""

    def article(self, runs: Sequence[RunSummary]) -> list[dict[str, Any]]: ...


def article_tables(runs: Sequence[RunSummary]) -> list[dict[str, Any]]:
    """The article tables of every system among ``runs`` whose rating has them (:class:`ArticleTables`), each
    computed from that system's runs only, systems in name order."""
    out: list[dict[str, Any]] = []
    for model in sorted({r.model for r in runs}):
        rating = rating_for(model)
        if isinstance(rating, ArticleTables):
            out += rating.article([r for r in runs if r.model == model])
    return out


def find_run_dirs(paths: Sequence[str | Path]) -> list[Path]:
    """Run directories: each path that holds a ``manifest.json``, or every run below it (a sweep's output)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if (p / "manifest.json").exists():
            out.append(p)
        elif p.is_dir():
            out += sorted(m.parent for m in p.rglob("manifest.json"))
        else:
            raise InputError(str(p), "no such run or sweep directory")
    if not out:
        raise InputError(" ".join(map(str, paths)), "no run directory (with a manifest.json) found")
    return list(dict.fromkeys(out))


def tables_markdown(tables: Sequence[Mapping[str, Any]]) -> str:
    """Tables as GitHub markdown: a heading, the table, its notes."""
    def cell(v: Any) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    parts = []
    for t in tables:
        lines = [f"### {t['title']}", "", "| " + " | ".join(cell(c) for c in t["columns"]) + " |",
                 "|" + "---|" * len(t["columns"])]
        lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in t["rows"]]
        lines += [""] + [f"*{cell(n)}*" for n in t.get("notes", [])]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"
