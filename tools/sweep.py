"""Sweeps: the cross product of scenarios × grid overrides × seeds, run, analysed and compared.

A sweep *point* is one run: a scenario (a file or a built-in name), the overrides of one grid combination, and a
seed. Every combination is validated before anything runs, so a bad key or value is refused up front with the
combination named. Points run either locally — in a pool of worker processes, one per core, with a progress
display — or, with a Spark master, each as a Spark task: the emulator runs inside the executor and writes its
run into the sweep directory, which therefore must be a directory every executor sees at the same path (any
local master; a shared filesystem on a cluster). The finished runs are then analysed in one Spark job and
compared, seeds pooled.

Where the time goes (docs/performance.md, "The rating sweep"): with local runs the Spark session starts in a
background thread while the runs execute, and warms its Python workers there, so that the analysis finds them
ready. Each run's analysis (``summary.json`` and its tables) is written; its ``report.html`` only with
``reports=True`` — rendering the plots of every run cost several times the rest of a sweep — and then in the
worker pool.

Run directories: ``OUT/<scenario>/<key=value,...>/seed-<n>`` (without the grid level when there is no grid).

Suites are named lists of built-in scenarios that each system declares (``System.suites``); :func:`suites` gathers
them (a test checks that every scenario of every suite exists).
"""
from __future__ import annotations

import re
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from clusteremu.base.errors import InputError
from clusteremu.emulator import systems
from clusteremu.emulator.systems import Suite

if TYPE_CHECKING:
    from clusteremu.tools.analysis.options import AnalysisOptions


def suites() -> dict[str, Suite]:
    """Every registered system's sweep suites by name (``clusteremu sweep --suite NAME``)."""
    out: dict[str, Suite] = {}
    for sys_ in systems.systems().values():
        if sys_.suites is None:
            continue
        for name, suite in systems.load(sys_.suites).items():
            if name in out:
                raise ValueError(f"sweep suite {name!r} is declared by two systems")
            out[name] = suite
    return dict(sorted(out.items()))


@dataclass(frozen=True)
class Point:
    """One run of a sweep."""

    scenario: str
    name: str
    grid: tuple[tuple[str, str], ...]
    seed: int
    run_dir: str
    overrides: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The scenario and grid combination, without the seed: the runs that are compared together."""
        combo = ",".join(f"{k}={v}" for k, v in self.grid)
        return f"{self.name} {combo}" if combo else self.name


@dataclass
class RunRecord:
    """What happened to a point: its run directory, digest, event count and wall time, or its error."""

    point: Point
    ok: bool
    digest: str | None = None
    events: int = 0
    wall_s: float = 0.0
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["point"] = {**asdict(self.point), "label": self.point.label}
        return d


# -- parsing ---------------------------------------------------------------------------------------------------
def split_values(text: str) -> list[str]:
    """Split ``v1,v2,...`` at the commas outside brackets, braces and quotes (so TOML arrays stay whole)."""
    out, depth, quote, cur = [], 0, "", []
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    out.append("".join(cur).strip())
    return out


def parse_grid(items: Iterable[str]) -> list[tuple[str, list[str]]]:
    """``key.path=v1,v2`` flags → [(key, [values])], in flag order; InputError on a malformed one."""
    grid: list[tuple[str, list[str]]] = []
    seen = set()
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        values = split_values(text) if sep else []
        if not sep or not key or not all(values):
            raise InputError(f"--grid {item}", "expected key.path=value1,value2,...")
        if key in seen:
            raise InputError(f"--grid {item}", f"{key} is already a grid key")
        seen.add(key)
        grid.append((key, values))
    return grid


#: The most seeds one sweep may run (each seed is a run of every scenario and grid point): beyond it a range is a
#: typing mistake (``1..100000000``), and refusing at once beats hanging while the plan is built.
MAX_SEEDS = 10_000


def parse_seeds(text: str) -> list[int]:
    """``1..5``, ``7``, ``1,4,9`` or a mix (``1..3,10``) → the seeds, in order, without repeats; at most
    :data:`MAX_SEEDS` of them."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)\.\.(\d+)", part)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if hi < lo:
                raise InputError(f"--seeds {text}", f"{part}: the range is empty")
            if hi - lo + 1 + len(seeds) > MAX_SEEDS:
                raise InputError(f"--seeds {text}", f"{part}: more than {MAX_SEEDS:,} seeds in one sweep")
            seeds += range(lo, hi + 1)
        elif part.isdigit():
            seeds.append(int(part))
        else:
            raise InputError(f"--seeds {text}", "expected N, A..B, or a comma-separated list of those")
    if len(seeds) > MAX_SEEDS:
        raise InputError(f"--seeds {text}", f"more than {MAX_SEEDS:,} seeds in one sweep")
    return list(dict.fromkeys(seeds))


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=,+-]+", "_", text).strip("_") or "_"


# -- planning --------------------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def scenario_file(scenario: str) -> str:
    """The file of a scenario (a file or a built-in name), found once per process: finding a built-in name parses
    every file of the library, which each of a sweep's runs would otherwise pay again. InputError as
    :func:`clusteremu.scenarios.loader.resolve` raises it."""
    from clusteremu.scenarios.loader import resolve

    return str(resolve(scenario))


def plan(
    scenarios: Sequence[str],
    grid: Sequence[tuple[str, Sequence[str]]],
    seeds: Sequence[int],
    out: str | Path,
    overrides: Sequence[str] = (),
) -> list[Point]:
    """Every point of the sweep, each combination validated first (InputError names the combination)."""
    from clusteremu.scenarios.loader import load_scenario

    if not scenarios:
        raise InputError("sweep", "no scenario to sweep")
    if not seeds:
        raise InputError("--seeds", "no seed")
    base = Path(out)
    points = []
    keys = [k for k, _v in grid]
    for scenario in scenarios:
        for combo in product(*[values for _k, values in grid]) if grid else [()]:
            pairs = tuple(zip(keys, combo))
            sets = [*overrides, *(f"{k}={v}" for k, v in pairs)]
            try:
                loaded = load_scenario(scenario_file(scenario), sets)
            except InputError as err:
                where = ", ".join(f"{k}={v}" for k, v in pairs) or "no grid override"
                raise InputError(f"{scenario} ({where})", err.reason) from None
            level = base / _safe(loaded.name)
            if pairs:
                level = level / _safe(",".join(f"{k}={v}" for k, v in pairs))
            for seed in seeds:
                points.append(Point(scenario, loaded.name, pairs, seed, str(level / f"seed-{seed}"), tuple(sets)))
    dirs = [p.run_dir for p in points]
    if len(set(dirs)) != len(dirs):
        raise InputError("sweep", "two points would share a run directory (the same scenario listed twice?)")
    for d in dirs:
        if Path(d).exists() and any(Path(d).iterdir()):
            raise InputError(d, "exists and is not empty; choose another --out (nothing is overwritten)")
    return points


def default_out(name: str, base: Path = Path("runs")) -> Path:
    """``runs/sweep-<name>``, or the first ``-<n>`` variant that does not exist yet."""
    candidate, n = base / f"sweep-{_safe(name)}", 1
    while candidate.exists():
        n += 1
        candidate = base / f"sweep-{_safe(name)}-{n}"
    return candidate


# -- running ---------------------------------------------------------------------------------------------------
def run_point(point: Point, until: float | None = None, agents: str = "inproc") -> RunRecord:
    """Run one point (in this process); a failure is recorded, not raised."""
    from clusteremu.emulator.runner import execute
    from clusteremu.scenarios.loader import load_scenario

    start = time.perf_counter()
    try:
        scenario = load_scenario(scenario_file(point.scenario), point.overrides)
        result = execute(scenario, point.run_dir, seed=point.seed, until=until, agents=agents)
        return RunRecord(point, True, result.digest, result.manifest["events"]["count"], time.perf_counter() - start)
    except Exception as err:  # a sweep reports every failed point and carries on with the others
        return RunRecord(point, False, wall_s=time.perf_counter() - start, error=f"{type(err).__name__}: {err}")


def run_local(
    points: Sequence[Point],
    *,
    jobs: int | None = None,
    until: float | None = None,
    agents: str = "inproc",
    progress: bool = True,
) -> list[RunRecord]:
    """Run the points in a pool of ``jobs`` worker processes (default: one per core; 1 runs them in this
    process), showing progress with rich when ``progress``; records in point order, the same whatever ``jobs``
    (a run depends on its point only). A worker process that dies during a run fails that point only."""
    from clusteremu.tools.pool import pool_map

    with _progress(len(points), progress) as advance:
        return pool_map(_run_task, [(p, until, agents) for p in points], jobs=jobs, done=advance, died=_died_run)


def _run_task(task: tuple[Point, float | None, str]) -> RunRecord:
    return run_point(*task)


def _died_run(task: tuple[Point, float | None, str], reason: str) -> RunRecord:
    return RunRecord(task[0], False, error=reason)


class _progress:
    """A rich progress bar over the runs (a no-op when not wanted)."""

    def __init__(self, total: int, show: bool) -> None:
        self.total, self.show = total, show
        self._bar: Any = None

    def __enter__(self) -> Callable[[RunRecord], None]:
        if not self.show:
            return lambda record: None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(TextColumn("[bold]sweep"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
        self._bar.__enter__()
        task = self._bar.add_task("", total=self.total)

        def advance(record: RunRecord) -> None:
            state = "ok" if record.ok else "[red]failed[/]"
            self._bar.update(task, advance=1, description=f"{record.point.label} seed {record.point.seed}: {state}")

        return advance

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)


def _spark_task(item: tuple[dict[str, Any], float | None, str]) -> dict[str, Any]:
    """A Spark task: run one point in the executor, return its record as a dict."""
    data, until, agents = item
    point = Point(data["scenario"], data["name"], tuple(tuple(g) for g in data["grid"]), data["seed"], data["run_dir"], tuple(data["overrides"]))
    return asdict(run_point(point, until, agents))


def run_spark(spark: Any, points: Sequence[Point], *, until: float | None = None, agents: str = "inproc") -> list[RunRecord]:
    """Run each point as a Spark task (one partition per point); records in point order."""
    items = [(asdict(p), until, agents) for p in points]
    results = spark.sparkContext.parallelize(items, max(1, len(items))).map(_spark_task).collect()
    out = []
    for p, r in zip(points, results):
        out.append(RunRecord(p, r["ok"], r["digest"], r["events"], r["wall_s"], r["error"]))
    return out


# -- the whole sweep -------------------------------------------------------------------------------------------
@dataclass
class SweepResult:
    """The records of a sweep's runs, the comparison of those that finished, the wall time of each stage
    (seconds, in the order they ran) and the reports that could not be rendered (run directory → error)."""

    out: Path
    records: list[RunRecord]
    comparison: dict[str, Any] = field(default_factory=dict)
    stages: dict[str, float] = field(default_factory=dict)
    report_errors: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> list[RunRecord]:
        return [r for r in self.records if not r.ok]


class _Stages:
    """Wall time per stage: ``with stages("runs"): ...``."""

    def __init__(self) -> None:
        self.times: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.times[name] = self.times.get(name, 0.0) + time.perf_counter() - start


def sweep(
    points: Sequence[Point],
    out: Path,
    *,
    spark_master: str | None = None,
    analysis_master: str | None = None,
    jobs: int | None = None,
    until: float | None = None,
    by: str = "point",
    options: "AnalysisOptions | None" = None,
    progress: bool = True,
    reports: bool = False,
) -> SweepResult:
    """Run ``points`` (locally, or as Spark tasks on ``spark_master``), analyse the runs that finished in one
    Spark job (on ``spark_master``, else ``analysis_master``), write each one's analysis (and, with
    ``reports``, its ``report.html``) and compare them grouped ``by`` (``point``: the scenario and grid
    combination, seeds pooled; or any ``clusteremu compare --by`` key)."""
    from clusteremu.tools.analysis import AnalysisOptions, analyze, write_analysis
    from clusteremu.tools.analysis.pipeline import ANALYSIS_DIR
    from clusteremu.tools.analysis.runs import open_run_info
    from clusteremu.tools.compare import comparison, group_runs, load_summaries
    from clusteremu.tools.spark.session import BackgroundSession

    stages = _Stages()
    out.mkdir(parents=True, exist_ok=True)
    # Local runs leave the JVM free to start meanwhile; Spark tasks need it first.
    with BackgroundSession(spark_master or analysis_master, app_name="clusteremu-sweep", warm=_warm) as starting:
        if spark_master:
            with stages("spark start"):
                spark = starting.get()
            with stages("runs"):
                records = run_spark(spark, points, until=until)
        else:
            with stages("runs"):
                records = run_local(points, jobs=jobs, until=until, progress=progress)
            with stages("spark start (not hidden by the runs)"):
                spark = starting.get()
        done = [r for r in records if r.ok]
        infos = [open_run_info(i, r.point.run_dir) for i, r in enumerate(done)]
        with stages("analysis (one Spark job)"):
            analyses = analyze(spark, infos, options or AnalysisOptions()) if infos else []
    with stages("writing the analyses"):
        dirs = [write_analysis(a, Path(a.info.dir) / ANALYSIS_DIR, report=False) for a in analyses]
    report_errors: dict[str, str] = {}
    if reports and dirs:
        from clusteremu.tools.pool import pool_map

        with stages("reports"):
            errors = pool_map(_render_report, [str(d) for d in dirs], jobs=jobs, died=_died_report)
        report_errors = {str(Path(d).parent): e for d, e in zip(dirs, errors) if e}
    with stages("comparison and rating"):
        summaries = load_summaries([r.point.run_dir for r in done], analyze_missing=False) if done else []
        labels = {str(Path(r.point.run_dir)): r.point.label for r in done}
        key: Any = (lambda s: labels[str(s.dir)]) if by == "point" else by
        result = comparison(group_runs(summaries, key), by) if summaries else {"by": by, "groups": [], "rows": []}
    return SweepResult(out, records, result, stages.times, report_errors)


def _warm(spark: Any) -> None:
    """Start the session's Python workers with the analysis modules imported, while the runs execute."""
    from clusteremu.tools.spark.session import warm_python_workers

    warm_python_workers(spark, ["clusteremu.tools.analysis.common"])


def _render_report(analysis_dir: str) -> str:
    """Render one run's report (in a pool worker): "" when done, else the error."""
    from clusteremu.tools.report import render_report

    try:
        render_report(analysis_dir)
    except Exception as err:  # one run's plot failing must not lose the others'
        return f"{type(err).__name__}: {err}"
    return ""


def _died_report(analysis_dir: str, reason: str) -> str:
    return f"rendering the report: {reason}"
