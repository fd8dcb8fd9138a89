"""Percentiles, distributions and step-series statistics: one definition for Spark and pandas."""
from __future__ import annotations

import math

import numpy as np
import pytest

from clusteremu.tools.analysis.encoding import dumps, jsonable, number
from clusteremu.tools.analysis.stats import distribution, percentile, step_stats


def test_percentiles_interpolate_linearly_between_ranks():
    assert percentile([2.0, 4.0], 0.5) == 3.0
    assert percentile([2.0, 4.0], 0.99) == pytest.approx(3.98)
    assert percentile(range(1, 101), 0.99) == pytest.approx(99.01)
    assert percentile([], 0.5) is None
    assert percentile([1.0, float("nan"), 3.0], 0.5) == 2.0
    assert percentile([1.0, float("inf")], 0.99) == float("inf")
    assert percentile([1.0, 2.0, float("inf")], 0.5) == 2.0


def test_distribution_of_nothing_and_of_something():
    assert distribution([]) == {"count": 0, "total": 0.0, "mean": None, "p50": None, "p99": None, "max": None}
    d = distribution([1.0, 3.0])
    assert d == {"count": 2, "total": 4.0, "mean": 2.0, "p50": 2.0, "p99": pytest.approx(2.98), "max": 3.0}


def test_step_stats_weigh_each_value_by_how_long_it_held():
    t = np.array([10.0, 20.0, 40.0])
    v = np.array([1.0, 3.0, 2.0])
    s = step_stats(t, v, 0.0, 50.0)
    # undefined before 10; 1 for 10 s, 3 for 20 s, 2 for 10 s
    assert s == {"mean": pytest.approx((10 + 60 + 20) / 40), "max": 3.0, "final": 2.0}
    w = step_stats(t, v, 30.0, 50.0)
    assert w == {"mean": pytest.approx((3 * 10 + 2 * 10) / 20), "max": 3.0, "final": 2.0}
    assert step_stats(t, v, 0.0, 5.0) == {"mean": None, "max": None, "final": None}
    assert step_stats(t, np.array([1.0, np.nan, 2.0]), 0.0, 50.0)["mean"] == pytest.approx((10 + 20) / 20)
    assert math.isinf(step_stats(t, np.array([1.0, np.inf, 2.0]), 0.0, 50.0)["mean"])


def test_figures_are_strict_json_with_non_finite_numbers_spelled_out():
    text = dumps({"a": float("inf"), "b": [np.float64("nan"), np.int64(3)], "c": np.bool_(True)})
    assert '"inf"' in text and '"nan"' in text and "Infinity" not in text
    assert jsonable({"x": -np.inf}) == {"x": "-inf"}
    assert number("inf") == float("inf") and number(2) == 2.0 and number(None) is None and number(True) is None
