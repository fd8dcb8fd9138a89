"""Statistics with one definition for the Spark jobs and the pandas code.

* Percentiles are exact with linear interpolation between the closest ranks (position ``q × (n − 1)`` in the
  sorted values): numpy's default method and Spark SQL's ``percentile`` aggregate, so a p99 computed by either
  is the same number.
* A *step series* (the gauges of a Grafana panel) is a value per report time that holds until the next report
  time; :func:`step_stats` gives its time-weighted mean, maximum and final value over an interval.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np

#: The percentiles every distribution reports (as fractions, Spark's convention).
QUANTILES = (0.5, 0.99)


def percentile(values: Iterable[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) of the non-NaN values, linear interpolation; None when there are none."""
    arr = np.asarray([v for v in values if v is not None], dtype=float)
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return None
    if np.isinf(arr).any():
        # np.percentile interpolates inf - inf into NaN; the rank definition says: the value at that rank.
        arr.sort()
        pos = q * (arr.size - 1)
        lo, hi = math.floor(pos), math.ceil(pos)
        if arr[lo] == arr[hi]:
            return float(arr[lo])
        return float(arr[lo] + (arr[hi] - arr[lo]) * (pos - lo))
    return float(np.percentile(arr, q * 100.0))


def distribution(values: Iterable[float]) -> dict[str, float | int | None]:
    """count, total, mean, p50, p99 and max of the non-NaN values (None where there are none)."""
    arr = np.asarray([v for v in values if v is not None], dtype=float)
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return {"count": 0, "total": 0.0, "mean": None, "p50": None, "p99": None, "max": None}
    return {
        "count": int(arr.size),
        "total": float(arr.sum()),
        "mean": float(arr.mean()),
        "p50": percentile(arr, 0.5),
        "p99": percentile(arr, 0.99),
        "max": float(arr.max()),
    }


def step_stats(t: np.ndarray, v: np.ndarray, start: float, end: float) -> dict[str, float | None]:
    """Time-weighted ``mean``, ``max`` and ``final`` value of a step series over ``[start, end]``.

    ``t`` holds increasing report times and ``v`` the value from each until the next (the last one until
    ``end``). Before the first report time the series is undefined and takes no part; a NaN value takes no
    part either. ``mean`` weighs each value by how long it held inside the interval (the value in force at
    ``start`` when the interval is empty); ``max`` is the largest value in force at any instant of it; ``final``
    is the value in force at ``end``. Any of them is None when no value is defined in the interval; an infinite
    value makes ``mean`` and ``max`` infinite.
    """
    t = np.asarray(t, dtype=float)
    v = np.asarray(v, dtype=float)
    out: dict[str, float | None] = {"mean": None, "max": None, "final": None}
    if t.size == 0 or end < start:
        return out
    first = int(np.searchsorted(t, start, side="right")) - 1  # the value in force at start (may be -1)
    last = int(np.searchsorted(t, end, side="right")) - 1  # the value in force at end
    if last < 0:
        return out
    idx = np.arange(max(first, 0), last + 1)
    seg_start = np.maximum(t[idx], start)
    seg_end = np.append(t[idx[1:]], end) if idx.size else np.array([])
    seg_end = np.minimum(seg_end, end)
    vals = v[idx]
    defined = ~np.isnan(vals)
    if not defined.any():
        return out
    final = v[last]
    out["final"] = None if math.isnan(final) else float(final)
    out["max"] = float(vals[defined].max())
    weights = np.clip(seg_end - seg_start, 0.0, None)
    w = weights[defined]
    x = vals[defined]
    if w.sum() > 0:
        with np.errstate(invalid="ignore"):
            held = w > 0
            out["mean"] = float((x[held] * w[held]).sum() / w[held].sum())
    else:
        out["mean"] = float(x[-1])
    return out
