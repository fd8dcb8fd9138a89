"""Figures as strict JSON: ``summary.json`` must load anywhere (jq, browsers), and figures can be infinite.

A non-finite float is written as the string ``"inf"``, ``"-inf"`` or ``"nan"`` (``float()`` reads each back);
numpy scalars and arrays become plain numbers and lists; a finite float is written as :func:`meaningful` makes
it (floating-point noise is not a figure: a spread of 1.9e-10 between equal scores is 0). :func:`number` is the
reading side.
"""
from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

#: Magnitudes below this are floating-point noise, not figures: nothing the analyses measure (seconds, score
#: points, percentages, ratios, bytes) is meaningful at a billionth of its unit.
NOISE = 1e-9
#: Significant digits a figure keeps (float arithmetic leaves noise in the last of its ~16).
SIGNIFICANT = 12


def meaningful(value: float) -> float:
    """``value`` without floating-point noise: 0 below :data:`NOISE` in magnitude, else rounded to
    :data:`SIGNIFICANT` significant digits (0.1 + 0.2 is 0.3); non-finite values as they are."""
    if not math.isfinite(value):
        return value
    if abs(value) < NOISE:
        return 0.0
    return float(f"{value:.{SIGNIFICANT}g}")


def jsonable(value: Any) -> Any:
    """``value`` with numpy types converted and non-finite floats spelled as strings."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return meaningful(v)
    return value


def dumps(value: Any, *, indent: int | None = 2) -> str:
    """Strict JSON text of ``value`` (see :func:`jsonable`)."""
    return json.dumps(jsonable(value), indent=indent, allow_nan=False, sort_keys=False)


def number(value: Any) -> float | None:
    """A figure read back from JSON as a float (``"inf"`` → inf); None for null or anything not a number."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    return None
