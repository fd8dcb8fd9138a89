"""float (binary32) arithmetic as Java does it."""
from __future__ import annotations

import math

import numpy as np

from clusteremu.base.java import float_divide, float_multiply, strict_max_float, to_float


def test_float_cast_rounds_to_binary32():
    assert to_float(0.1) == 0.10000000149011612  # (double) (float) 0.1
    assert to_float(1e39) == math.inf and to_float(-1e39) == -math.inf  # (float) 1e39 == Infinity
    assert to_float(1e-50) == 0.0
    assert math.isnan(to_float(math.nan))
    assert to_float(16777217.0) == 16777216.0  # 2^24 + 1 is not a float; ties go to even


def test_float_arithmetic_rounds_after_each_operation():
    # 30f / 100f * 100f, widened to double: Pulsar's percentUsage() of 30 out of 100
    assert float_multiply(float_divide(to_float(30.0), to_float(100.0)), 100.0) == 30.000001907348633
    assert float_divide(1.0, 3.0) == float(np.float32(1.0) / np.float32(3.0))


def test_float_division_by_zero():
    assert float_divide(1.0, 0.0) == math.inf and float_divide(1.0, -0.0) == -math.inf
    assert math.isnan(float_divide(0.0, 0.0))


def test_strict_max_float_ignores_nan():
    values = [np.float32(math.nan), np.float32(2.5), np.float32(1.0)]
    best = strict_max_float(values)
    assert best == np.float32(2.5) and isinstance(best, np.float32)
    assert strict_max_float([]) == np.float32(-np.inf)
