"""The ``clusteremu`` pytest plugin (entry point ``pytest11``): emulate a cluster in a test, assert its timing.

Fixtures:

* ``emulate(scenario, seed=None, until=None, *, agents="inproc", fresh=False, **overrides)`` runs a scenario
  (a built-in's name, a TOML path, a dict, a ``Scenario`` or a ``ScenarioBuilder``) into pytest's temporary
  directories and returns the finished :class:`~clusteremu.emulator.trace.reader.Run`. Keyword overrides set key paths
  (``workload__timer_mode="fixed_delay"`` or ``**{"workload.timer_mode": "fixed_delay"}``). A run is a pure
  function of its inputs, so identical calls in one session share one run unless ``fresh=True``.
* ``scenario``: the :class:`~clusteremu.emulator.testing.builder.ScenarioBuilder` class, to write a scenario in Python:
  ``scenario("kernel-heartbeat").set(...).pause(...)`` or ``scenario(model="heartbeat")``.
* ``clusteremu_seed``: the seed ``emulate`` uses when none is passed: the marker's seed for this test, else
  ``--clusteremu-seed``, else None (the scenario's own seed).

Marker ``@pytest.mark.clusteremu_seeds(1, 2, 3)`` (ints, ranges or iterables of ints) runs the test once per
seed. The runs a failed test emulated are listed in its report (section "clusteremu runs").

Everything heavy is imported inside the fixtures, so that loading the plugin costs other projects nothing.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

import pytest

if TYPE_CHECKING:
    from clusteremu.emulator.testing.emulate import ScenarioLike
    from clusteremu.emulator.trace.reader import Run

SEEDS_MARK = "clusteremu_seeds"
SEED_FIXTURE = "clusteremu_seed"

#: Runs emulated by a test: (scenario name, seed, until, run directory), for its failure report.
RUNS_KEY = pytest.StashKey[list[tuple[str, int, float, Path]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("clusteremu", "clusteremu emulated clusters")
    group.addoption(
        "--clusteremu-seed",
        action="store",
        type=int,
        default=None,
        dest="clusteremu_seed",
        metavar="N",
        help="seed of every emulate() call that passes none, in tests without a clusteremu_seeds marker "
        "(default: each scenario's own seed)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{SEEDS_MARK}(*seeds): run the test once per seed (ints, ranges or iterables of ints); the emulate "
        "fixture uses that seed",
    )


def marker_seeds(args: Iterable[Any]) -> list[int]:
    """The seeds of a ``clusteremu_seeds`` marker's arguments, flattened, in order, without repeats."""
    out: list[int] = []
    for arg in args:
        items = [arg] if isinstance(arg, int) else arg
        try:
            items = list(items)
        except TypeError:
            raise TypeError(f"{SEEDS_MARK}: expected ints, ranges or iterables of ints, got {arg!r}") from None
        for s in items:
            if isinstance(s, bool) or not isinstance(s, int) or s < 0:
                raise TypeError(f"{SEEDS_MARK}: a seed is an int >= 0, got {s!r}")
            if s not in out:
                out.append(s)
    if not out:
        raise TypeError(f"{SEEDS_MARK}: needs at least one seed")
    return out


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    mark = metafunc.definition.get_closest_marker(SEEDS_MARK)
    if mark is None:
        return
    seeds = marker_seeds(mark.args)
    if SEED_FIXTURE not in metafunc.fixturenames:
        raise TypeError(
            f"{metafunc.definition.nodeid}: @pytest.mark.{SEEDS_MARK} needs the test to use the emulate fixture "
            f"(or {SEED_FIXTURE})"
        )
    metafunc.parametrize(SEED_FIXTURE, seeds, indirect=True, ids=[f"seed{s}" for s in seeds])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    report = yield
    if report.when == "call" and report.failed:
        runs = item.stash.get(RUNS_KEY, None)
        if runs:
            lines = [f"{name} seed={seed} until={until:g}: {path}" for name, seed, until, path in runs]
            report.sections.append(("clusteremu runs", "\n".join(lines)))
    return report


class RunCache:
    """The session's runs by identity (scenario data, seed, until, placement), in pytest's temporary dirs."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.factory = factory
        self.runs: dict[str, "Run"] = {}

    def get(self, sc: Any, seed: int | None, until: float | None, agents: str, fresh: bool) -> "Run":
        from clusteremu.emulator.runner import execute
        from clusteremu.emulator.testing.emulate import run_key
        from clusteremu.emulator.trace.reader import open_run

        seed = sc.seed if seed is None else seed
        until = sc.duration_s if until is None else until
        key = run_key(sc, seed, until, agents)
        run = None if fresh else self.runs.get(key)
        if run is None:
            run_dir = self.factory.mktemp(f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', sc.name)}-seed{seed}")
            result = execute(sc, run_dir, seed=seed, until=until, agents=agents)
            run = open_run(result.run_dir)
            if not fresh:
                self.runs[key] = run
        return run


@pytest.fixture(scope="session")
def clusteremu_runs(tmp_path_factory: pytest.TempPathFactory) -> RunCache:
    """The session's cache of emulated runs (shared by every ``emulate`` call)."""
    return RunCache(tmp_path_factory)


@pytest.fixture
def clusteremu_seed(request: pytest.FixtureRequest) -> int | None:
    """The seed ``emulate`` uses when none is passed (marker's, else ``--clusteremu-seed``, else None)."""
    param = getattr(request, "param", None)
    if param is not None:
        return int(param)
    return request.config.getoption("clusteremu_seed")


@pytest.fixture
def emulate(
    request: pytest.FixtureRequest, clusteremu_seed: int | None, clusteremu_runs: RunCache
) -> Callable[..., "Run"]:
    """``emulate(scenario, seed=None, until=None, *, agents="inproc", fresh=False, **overrides) -> Run``."""
    from clusteremu.emulator.testing.emulate import prepare

    def emulate(
        scenario: "ScenarioLike",
        seed: int | None = None,
        until: float | None = None,
        *,
        agents: str = "inproc",
        fresh: bool = False,
        **overrides: Any,
    ) -> "Run":
        sc = prepare(scenario, overrides)
        chosen = seed if seed is not None else clusteremu_seed
        run = clusteremu_runs.get(sc, chosen, until, agents, fresh)
        runs = request.node.stash.setdefault(RUNS_KEY, [])
        runs.append((sc.name, run.manifest["seed"], run.manifest["until"], run.dir))
        return run

    return emulate


@pytest.fixture
def scenario() -> type:
    """The ``ScenarioBuilder`` class: ``scenario("kernel-heartbeat").set(...)`` or ``scenario(model="heartbeat")``."""
    from clusteremu.emulator.testing.builder import ScenarioBuilder

    return ScenarioBuilder
