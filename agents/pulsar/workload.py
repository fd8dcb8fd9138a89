"""The workload as a fluid model: message rates and throughputs per topic as functions of virtual time.

Every agent derives the same :class:`Workload` from the scenario (it is data, like the scenario itself), so a
broker knows the traffic of the topics its clients are connected to without sharing any object with them. The
arrays are read-only and cached per process and scenario: a thousand brokers in one worker share one copy.

A *task* (the article's "load task") is a group of topics in one namespace with a producer rate per topic, a
message size, a number of subscriptions (each consuming every message), and a pattern over time:

* ``constant``;
* ``on_off``: ``on_s`` seconds at the rate, ``off_s`` seconds at ``off_factor`` of it, repeating (the article's
  jitter topic: consumption stopping for a minute and resuming for a minute);
* ``steps``: factor ``factors[i]`` from ``at_s[i]`` on;
* ``ramp``: linear from ``from_factor`` at ``start_s`` to ``to_factor`` at ``end_s``;
* ``csv``: a recorded series (``path``, columns ``t_s,factor``), held between samples.
"""
from __future__ import annotations

import bisect
import csv
import hashlib
import io
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from clusteremu.strategies.pulsar.split.bundles import FULL_UPPER_BOUND, BundleRange, topic_hash
from clusteremu.strategies.pulsar.split.bundles import bundle_name as split_bundle_name

FULL_RANGE_END = 0x100000000  # Pulsar bundle ranges: [lower, upper), the last one includes 0xffffffff


def bundle_ranges(count: int) -> list[tuple[int, int]]:
    """The initial bundles of a namespace: ``count`` equal hash ranges (``defaultNumberOfNamespaceBundles``)."""
    step = FULL_RANGE_END // count
    bounds = [i * step for i in range(count)] + [FULL_RANGE_END]
    bounds[-1] = FULL_RANGE_END
    return [(bounds[i], bounds[i + 1]) for i in range(count)]


def bundle_name(namespace: str, lower: int, upper: int) -> str:
    """Pulsar's bundle name of the model's ``[lower, upper)`` range, e.g. ``public/default/0x00000000_0x40000000``
    (the model's exclusive end of the hash space is Pulsar's inclusive ``0xffffffff``)."""
    return split_bundle_name(namespace, BundleRange(lower, min(upper, FULL_UPPER_BOUND)))


@dataclass(frozen=True)
class Task:
    name: str
    namespace: str
    topics: int
    rate_msgs: float
    msg_bytes: float
    subscriptions: int
    start_s: float
    end_s: float
    pattern: dict[str, Any]


class Workload:
    """Topics, their bundles, and their rates at any virtual time."""

    def __init__(self, namespaces: list[dict[str, Any]], tasks: list[dict[str, Any]]) -> None:
        # end_s = 0 is the scenario's "never ends"
        self.tasks = [Task(**{k: (t[k] if k != "end_s" or t[k] > 0 else math.inf) for k in Task.__dataclass_fields__})
                      for t in tasks]
        self.bundles: list[str] = []
        self.bundle_namespace: list[str] = []
        ranges: dict[str, list[tuple[int, int, int]]] = {}
        for ns in namespaces:
            for lo, hi in bundle_ranges(ns["bundles"]):
                ranges.setdefault(ns["name"], []).append((lo, hi, len(self.bundles)))
                self.bundles.append(bundle_name(ns["name"], lo, hi))
                self.bundle_namespace.append(ns["name"])
        self.bundle_index = {b: i for i, b in enumerate(self.bundles)}
        names: list[str] = []
        task_of: list[np.ndarray] = []
        bundle_of: list[np.ndarray] = []
        for ti, task in enumerate(self.tasks):
            uppers = np.array([hi for _lo, hi, _i in ranges[task.namespace]], dtype=np.int64)
            idx = np.array([i for _lo, _hi, i in ranges[task.namespace]], dtype=np.int32)
            topics = [f"persistent://{task.namespace}/{task.name}-{k}" for k in range(task.topics)]
            hashes = np.fromiter(map(topic_hash, topics), dtype=np.int64, count=len(topics))
            names += topics
            task_of.append(np.full(len(topics), ti, dtype=np.int32))
            bundle_of.append(idx[np.searchsorted(uppers, hashes, side="right")])
        self.topics = names
        self.topic_index = {t: i for i, t in enumerate(names)}
        self.topic_task = _frozen(np.concatenate(task_of) if task_of else np.zeros(0, dtype=np.int32))
        self.topic_bundle = _frozen(np.concatenate(bundle_of) if bundle_of else np.zeros(0, dtype=np.int32))
        order = np.argsort(self.topic_bundle, kind="stable")
        splits = np.searchsorted(self.topic_bundle[order], np.arange(len(self.bundles) + 1))
        self.bundle_topics = [_frozen(order[splits[i] : splits[i + 1]]) for i in range(len(self.bundles))]
        self._series = {i: _load_series(t.pattern) for i, t in enumerate(self.tasks) if t.pattern["kind"] == "csv"}
        self._msg_bytes = np.array([t.msg_bytes for t in self.tasks])
        self._subs = np.array([t.subscriptions for t in self.tasks], dtype=float)
        self._subs_list, self._bytes_list = self._subs.tolist(), self._msg_bytes.tolist()
        # With constant patterns only, the rates change only where a task starts or ends: one factors array per
        # stretch between those times (index: bisect_right of the time in _breaks).
        constant = all(t.pattern["kind"] == "constant" for t in self.tasks)
        self._breaks = sorted({x for t in self.tasks for x in (t.start_s, t.end_s) if math.isfinite(x)}) \
            if constant else None
        self._stretch_factors: dict[int, np.ndarray] = {}

    # -- rates --------------------------------------------------------------------------------------------
    def is_steady(self, t0: float, t1: float) -> bool:
        """Whether every task's rate is the same all through [t0, t1]: constant patterns, none starting or
        ending inside. Integrators take one rate for such a stretch instead of sampling it."""
        for task in self.tasks:
            if task.pattern["kind"] != "constant" or t0 < task.start_s <= t1 or t0 < task.end_s <= t1:
                return False
        return True

    def constant_until(self, t: float) -> float:
        """The first time after ``t`` at which a task's rate may change (a task starting or ending); ``t`` itself
        when some pattern changes its rate all the time; inf when no rate changes again."""
        if self._breaks is None:
            return t
        i = bisect.bisect_right(self._breaks, t)
        return self._breaks[i] if i < len(self._breaks) else math.inf

    def task_factors(self, t: float) -> np.ndarray:
        """Each task's producer rate per topic at time ``t`` (msg/s), read-only. With constant patterns only,
        the same array for every ``t`` between two task starts or ends (callers may compare identities)."""
        if self._breaks is None:
            return self._task_factors(t)
        i = bisect.bisect_right(self._breaks, t)
        f = self._stretch_factors.get(i)
        if f is None:
            f = self._stretch_factors[i] = _frozen(self._task_factors(t))
        return f

    def _task_factors(self, t: float) -> np.ndarray:
        return np.array([task.rate_msgs * self._factor(i, task, t) for i, task in enumerate(self.tasks)])

    def _factor(self, i: int, task: Task, t: float) -> float:
        if t < task.start_s or t >= task.end_s:
            return 0.0
        p = task.pattern
        kind = p["kind"]
        if kind == "constant":
            return 1.0
        if kind == "on_off":
            phase = (t - task.start_s) % (p["on_s"] + p["off_s"])
            return 1.0 if phase < p["on_s"] else p["off_factor"]
        if kind == "steps":
            f = 1.0
            for at, factor in zip(p["at_s"], p["factors"]):
                if t >= at:
                    f = factor
            return f
        if kind == "ramp":
            if t <= p["start_s"]:
                return p["from_factor"]
            if t >= p["end_s"]:
                return p["to_factor"]
            x = (t - p["start_s"]) / (p["end_s"] - p["start_s"])
            return p["from_factor"] + x * (p["to_factor"] - p["from_factor"])
        times, factors = self._series[i]
        j = int(np.searchsorted(times, t, side="right")) - 1
        return float(factors[j]) if j >= 0 else 0.0

    def rates(self, topics: np.ndarray, t: float) -> tuple[float, float, float, float]:
        """(msgRateIn, msgRateOut, msgThroughputIn, msgThroughputOut) summed over ``topics`` at ``t``."""
        if len(topics) == 0:
            return 0.0, 0.0, 0.0, 0.0
        return self.task_rates(np.bincount(self.topic_task[topics], minlength=len(self.tasks)), t)

    def task_rates(self, per_task: np.ndarray, t: float) -> tuple[float, float, float, float]:
        """(msgRateIn, msgRateOut, msgThroughputIn, msgThroughputOut) of ``per_task[i]`` topics of each task at
        ``t``."""
        f = self.task_factors(t)
        if len(f) < 8:
            # numpy adds fewer than 8 numbers left to right, so the same products and sums on Python floats are
            # the same to the bit, without numpy's cost per call (a broker taking 100 bundles asks 100 times)
            rin = [c * x for c, x in zip(per_task.tolist(), f.tolist())]
            rout = [r * s for r, s in zip(rin, self._subs_list)]
            return (_sum(rin), _sum(rout), _sum([r * b for r, b in zip(rin, self._bytes_list)]),
                    _sum([r * b for r, b in zip(rout, self._bytes_list)]))
        rin = per_task * f
        rout = rin * self._subs
        return (float(rin.sum()), float(rout.sum()), float((rin * self._msg_bytes).sum()),
                float((rout * self._msg_bytes).sum()))

    def topic_rates(self, topics: np.ndarray, t: float) -> np.ndarray:
        """Per topic: columns msgRateIn, msgRateOut, msgThroughputIn, msgThroughputOut at ``t``."""
        rate = self.task_factors(t)[self.topic_task[topics]]
        task = self.topic_task[topics]
        out = rate * self._subs[task]
        return np.stack([rate, out, rate * self._msg_bytes[task], out * self._msg_bytes[task]], axis=1)

    def change_times(self) -> list[float]:
        """Virtual times at which some task's rate changes in steps (for reporting on workload events)."""
        times: set[float] = set()
        for task in self.tasks:
            times.update(x for x in (task.start_s, task.end_s) if math.isfinite(x))
            if task.pattern["kind"] == "steps":
                times.update(task.pattern["at_s"])
        return sorted(times)


def _sum(xs: list[float]) -> float:
    """Left to right, as numpy sums fewer than 8 numbers."""
    if not xs:
        return 0.0
    total = xs[0]
    for x in xs[1:]:
        total += x
    return float(total)


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def parse_series(text: str) -> tuple[list[float], list[float]]:
    """The ``t_s,factor`` rows of a recorded series (CSV with a header); ``ValueError`` naming the row and column
    of the first bad value, or a missing column."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in ("t_s", "factor") if c not in (reader.fieldnames or ())]
    if missing:
        raise ValueError(f"the header has no {' and no '.join(missing)} column (expected t_s,factor)")
    times: list[float] = []
    factors: list[float] = []
    for row_number, row in enumerate(reader, start=2):
        for column, out in (("t_s", times), ("factor", factors)):
            try:
                value = float(row[column])
            except (TypeError, ValueError):
                raise ValueError(f"line {row_number}: {column}: not a number: {row[column]!r}") from None
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"line {row_number}: {column}: must be a finite number >= 0, got {row[column]!r}")
            out.append(value)
    if not times:
        raise ValueError("no rows")
    if any(b < a for a, b in zip(times, times[1:])):
        raise ValueError("t_s must not decrease")
    return times, factors


def _load_series(pattern: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    times, factors = parse_series(pattern["path"]["text"])  # the scenario carries the file's text
    return _frozen(np.array(times)), _frozen(np.array(factors))


@lru_cache(maxsize=8)
def _cached(key: str, spec: str) -> Workload:
    data = json.loads(spec)
    return Workload(data["namespaces"], data["tasks"])


def workload_for(namespaces: list[dict[str, Any]], tasks: list[dict[str, Any]]) -> Workload:
    """The (shared, read-only) workload of a scenario's ``workload`` section."""
    spec = json.dumps({"namespaces": namespaces, "tasks": tasks}, sort_keys=True, default=str)
    return _cached(hashlib.sha256(spec.encode()).hexdigest(), spec)


def client_of(topic_index: int, clients: list[str]) -> str:
    """The client agent that produces and consumes topic ``topic_index``: topics are dealt out round robin."""
    return clients[topic_index % len(clients)]


def clients_of(topic_indices: list[int], clients: list[str]) -> dict[int, str]:
    """{topic index: :func:`client_of` it} for many topics at once, in their order (a broker booting with a
    hundred preassigned bundles connects ten thousand topics)."""
    n = len(clients)
    return {ti: clients[ti % n] for ti in topic_indices}
