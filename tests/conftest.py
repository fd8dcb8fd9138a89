"""Fixtures shared by every suite: the one Spark session of a test run, and hand-made traces.

``spark`` starts a ``local[2]`` session once per test run (about ten seconds) and stops it at the end; mark the
tests that use it ``spark``. Under pytest-xdist (``make test`` runs two workers) every test that asks for the
fixture is put in one ``xdist_group``, so the run still starts one session, on one worker. ``trace`` builds run directories event by event with the kernel's own writer and
manifest, so analyses can be checked on traces whose answers are known.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from clusteremu.emulator.manifest import new_manifest, write_manifest
from clusteremu.emulator.trace.writer import DEFAULT_SEGMENT_BYTES, SegmentWriter


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # With --dist loadgroup the tests of a group share a worker: one Spark session for the whole run.
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("spark"))


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from clusteremu.tools.spark.session import spark_session

    session = spark_session("local[2]", app_name="clusteremu-tests")
    yield session
    session.stop()


class TraceBuilder:
    """A run directory written event by event: ``event(t, agent, kind, **fields)`` then ``write()``.

    Sequence numbers are given per agent in call order; agents are spread over ``writers`` writers by name.
    """

    def __init__(self, run_dir: Path, *, name: str = "hand", model: str = "pulsar", until: float = 1800.0,
                 seed: int = 1, scenario: dict[str, Any] | None = None) -> None:
        self.dir = run_dir
        self.until = until
        self.seed = seed
        self.scenario = {"scenario": {"name": name, "model": model, "duration_s": until}, **(scenario or {})}
        self.events: list[tuple] = []
        self._seq: dict[str, int] = {}

    def event(self, t: float, agent: str, kind: str, **fields: Any) -> "TraceBuilder":
        self._seq[agent] = self._seq.get(agent, 0) + 1
        self.events.append((float(t), agent, self._seq[agent], kind, fields))
        return self

    def load_report(self, t: float, broker: str, score: float, *, cpu: float | None = None, msg_rate: float = 1000.0,
                    throughput: float = 1.0e6, **extra: Any) -> "TraceBuilder":
        """A load report whose rates are split evenly between in and out."""
        fields = dict(cpu=score if cpu is None else cpu, memory=30.0, direct_memory=10.0, bandwidth_in=1.0,
                      bandwidth_out=1.0, msg_rate_in=msg_rate / 2, msg_rate_out=msg_rate / 2,
                      msg_throughput_in=throughput / 2, msg_throughput_out=throughput / 2, num_bundles=8,
                      num_topics=40, score=score, reason="periodic")
        fields.update(extra)
        return self.event(t, broker, "load_report", **fields)

    def write(self, *, writers: int = 1, segment_bytes: int = DEFAULT_SEGMENT_BYTES, complete: bool = True) -> Path:
        agents = sorted({e[1] for e in self.events})
        writer_of = {a: i % writers for i, a in enumerate(agents)}
        summaries = []
        for w in range(writers):
            sw = SegmentWriter(self.dir / "events", f"w{w:03d}", segment_bytes=segment_bytes)
            sw.write([e for e in self.events if writer_of[e[1]] == w])
            summaries.append(sw.close())
        manifest = new_manifest(self.scenario, "tests", self.seed, self.until, {"mode": "inproc", "workers": writers})
        manifest["complete"] = complete
        manifest["events"] = {"count": len(self.events), "rows": sum(s.rows for s in summaries), "digest": None,
                              "writers": {s.writer: {"count": s.count, "segments": s.segments} for s in summaries}}
        write_manifest(self.dir, manifest)
        return self.dir


@pytest.fixture
def trace(tmp_path: Path) -> Callable[..., TraceBuilder]:
    """``trace(name="run", **kwargs)`` → a :class:`TraceBuilder` for ``tmp_path/name``."""

    def make(dirname: str = "run", **kwargs: Any) -> TraceBuilder:
        return TraceBuilder(tmp_path / dirname, **kwargs)

    return make


@pytest.fixture(scope="session")
def trace_builder() -> type[TraceBuilder]:
    """The :class:`TraceBuilder` class, for fixtures wider than one test (``trace_builder(path, ...)``)."""
    return TraceBuilder
