"""Pulsar's derived time series of a run's load reports (spread, max/min ratio, score spread), defined once for
the tests and the Spark analyses (:mod:`.load_balance`, :mod:`.pulsar`).

Every function here is pure: it takes a pandas DataFrame of ``load_report`` events (one row per event, with at
least the columns ``t`` and ``agent`` and the value columns it reads — the shape of ``Run.to_pandas(["load_report"])``
and of a Spark group handed to ``applyInPandas``) and returns a new DataFrame. Only pandas and numpy are used, so
the Spark workers can call the same code. The signatures are a contract: extend with keyword arguments only.

Latest-value-per-broker semantics (the definition every figure below shares):

* The series is evaluated at every distinct report time τ of the input (after all reports at τ are applied).
* At τ, a broker's value is the one in its most recent report with ``t <= τ``; when a broker wrote several
  reports at the same time, the last in canonical order (``seq``, else row order) counts. This is what a
  Prometheus/Grafana panel over the brokers' gauges shows: each series holds its last scraped value.
* A broker that has not reported yet takes no part (it is not a zero). With ``stale_after=s``, a broker whose
  latest report is more than ``s`` seconds older than τ takes no part either (a crashed broker's last value
  otherwise stays forever, as a gauge does until Prometheus marks it stale); by default values never go stale.
* A value that is NaN takes no part while it is that broker's latest (its earlier value does not come back);
  ``+inf`` takes part and propagates by IEEE arithmetic (an infinite CPU gives an infinite spread).
* The ``brokers`` column counts the brokers that took part at τ; when it is 0 the value is NaN.

Rows come out in time order with columns ``t``, the value (named after the function) and ``brokers``.

Components: :func:`latest_values` (the wide table behind every series), :func:`spread` and :func:`max_min_ratio`
(over any value), the article's panels :func:`score_spread`, :func:`msg_rate_ratio` and :func:`throughput_ratio`,
and ``SCHEMAS`` (their Spark output schemas).
"""
from __future__ import annotations

from typing import Callable, Union

import numpy as np
import pandas as pd

#: A value of a report: a column name, or a function of the reports frame returning one value per row.
Value = Union[str, Callable[[pd.DataFrame], "pd.Series"]]

#: Relative difference under which two values count as equal (floating-point noise, not imbalance).
RELATIVE_NOISE = 1e-9

#: Spark DDL schema of each named series' output, for ``applyInPandas(fn, schema=...)``.
SCHEMAS: dict[str, str] = {
    "score_spread": "t double, score_spread double, brokers long",
    "msg_rate_ratio": "t double, msg_rate_ratio double, brokers long",
    "throughput_ratio": "t double, throughput_ratio double, brokers long",
}


def latest_values(reports: pd.DataFrame, value: Value, *, stale_after: float | None = None) -> pd.DataFrame:
    """The wide table behind every series: one row per distinct report time (index ``t``), one column per broker
    (sorted by name), holding that broker's latest value at that time, NaN where it takes no part (see the
    module documentation for the exact rules)."""
    df = _reports(reports)
    if df.empty:
        return pd.DataFrame(index=pd.Index([], name="t", dtype=float))
    values = (value(df) if callable(value) else df[value]).to_numpy(dtype=float)
    # Pivot row positions rather than values: forward-filling positions tells "no report at τ" (fill from the
    # past) apart from "reported NaN at τ" (keep NaN), which forward-filling values cannot.
    pos = pd.DataFrame({"t": df["t"].to_numpy(), "agent": df["agent"].to_numpy(), "pos": np.arange(len(df), dtype=float)})
    pos = pos.drop_duplicates(["t", "agent"], keep="last")
    wide = pos.pivot(index="t", columns="agent", values="pos").sort_index().ffill()
    wide = wide.reindex(sorted(wide.columns), axis=1)
    idx = wide.to_numpy()
    have = ~np.isnan(idx)
    take = np.where(have, idx, 0).astype(np.int64)
    out = np.where(have, values[take], np.nan)
    if stale_after is not None:
        taus = wide.index.to_numpy(dtype=float)[:, None]
        reported_at = np.where(have, df["t"].to_numpy(dtype=float)[take], np.nan)
        out = np.where(taus - reported_at > stale_after, np.nan, out)
    result = pd.DataFrame(out, index=wide.index, columns=list(wide.columns))
    result.index.name = "t"
    result.columns.name = None
    return result


def spread(reports: pd.DataFrame, value: Value, *, name: str = "spread", stale_after: float | None = None) -> pd.DataFrame:
    """max − min over brokers of each broker's latest ``value``, at every report time (0 with one broker, and
    when max and min differ by at most :data:`RELATIVE_NOISE` of their magnitude; ``inf − inf`` is NaN, as the
    Grafana panel would show)."""
    wide = latest_values(reports, value, stale_after=stale_after)
    arr = wide.to_numpy()
    n = _participants(arr)
    with np.errstate(invalid="ignore"):
        hi, lo = _nanmax(arr, n), _nanmin(arr, n)
        vals = hi - lo
        # Equal values computed along different paths differ in their last bits: a difference within
        # RELATIVE_NOISE of the values is no spread (1.9e-10 between two scores of 49 is 0).
        vals = np.where(np.isfinite(vals) & (np.abs(vals) <= RELATIVE_NOISE * np.maximum(np.abs(hi), np.abs(lo))), 0.0, vals)
    return _series(wide.index, name, vals, n)


def max_min_ratio(reports: pd.DataFrame, value: Value, *, name: str = "ratio", stale_after: float | None = None) -> pd.DataFrame:
    """max / min over brokers of each broker's latest ``value``, at every report time. A zero minimum gives
    ``inf`` when the maximum is positive and 1.0 when every broker is at zero (all equal: no imbalance) or the
    ratio is within :data:`RELATIVE_NOISE` of 1."""
    wide = latest_values(reports, value, stale_after=stale_after)
    arr = wide.to_numpy()
    n = _participants(arr)
    hi, lo = _nanmax(arr, n), _nanmin(arr, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        vals = np.where(lo == 0, np.where(hi == 0, 1.0, np.inf), hi / np.where(lo == 0, 1.0, lo))
        vals = np.where(np.abs(vals - 1.0) <= RELATIVE_NOISE, 1.0, vals)  # equal up to rounding: no imbalance
    vals = np.where(n == 0, np.nan, vals)
    return _series(wide.index, name, vals, n)


def score_spread(reports: pd.DataFrame, *, stale_after: float | None = None) -> pd.DataFrame:
    """The article's ``max(pulsar_lb_cpu_usage) - min(pulsar_lb_cpu_usage)`` panel over the brokers' ``score``:
    columns ``t``, ``score_spread``, ``brokers``."""
    return spread(reports, "score", name="score_spread", stale_after=stale_after)


def msg_rate_ratio(reports: pd.DataFrame, *, stale_after: float | None = None) -> pd.DataFrame:
    """max / min over brokers of ``msg_rate_in + msg_rate_out``: columns ``t``, ``msg_rate_ratio``, ``brokers``."""
    return max_min_ratio(reports, _sum("msg_rate_in", "msg_rate_out"), name="msg_rate_ratio", stale_after=stale_after)


def throughput_ratio(reports: pd.DataFrame, *, stale_after: float | None = None) -> pd.DataFrame:
    """max / min over brokers of ``msg_throughput_in + msg_throughput_out``: columns ``t``,
    ``throughput_ratio``, ``brokers``."""
    return max_min_ratio(
        reports, _sum("msg_throughput_in", "msg_throughput_out"), name="throughput_ratio", stale_after=stale_after
    )


# -- helpers --------------------------------------------------------------------------------------------------
def _reports(reports: pd.DataFrame) -> pd.DataFrame:
    """Only load reports (a whole-trace frame may be passed), in canonical order, with a fresh index."""
    df = reports
    if "kind" in df.columns:
        df = df[df["kind"] == "load_report"]
    keys = ["t", "agent"] + (["seq"] if "seq" in df.columns else [])
    return df.sort_values(keys, kind="stable").reset_index(drop=True)


def _sum(a: str, b: str) -> Callable[[pd.DataFrame], pd.Series]:
    def value(df: pd.DataFrame) -> pd.Series:
        return df[a].astype(float) + df[b].astype(float)

    value.__name__ = f"{a}+{b}"
    return value


def _participants(arr: np.ndarray) -> np.ndarray:
    return (~np.isnan(arr)).sum(axis=1) if arr.size else np.zeros(arr.shape[0], dtype=np.int64)


def _nanmax(arr: np.ndarray, n: np.ndarray) -> np.ndarray:
    # np.nanmax warns on all-NaN rows; those rows are NaN by definition, so fill them first.
    if arr.shape[1] == 0:
        return np.full(arr.shape[0], np.nan)
    return np.where(n > 0, np.nanmax(np.where(np.isnan(arr), -np.inf, arr), axis=1), np.nan)


def _nanmin(arr: np.ndarray, n: np.ndarray) -> np.ndarray:
    if arr.shape[1] == 0:
        return np.full(arr.shape[0], np.nan)
    return np.where(n > 0, np.nanmin(np.where(np.isnan(arr), np.inf, arr), axis=1), np.nan)


def _series(index: pd.Index, name: str, values: np.ndarray, n: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {"t": index.to_numpy(dtype=float), name: np.asarray(values, dtype=float), "brokers": np.asarray(n, dtype=np.int64)}
    )
