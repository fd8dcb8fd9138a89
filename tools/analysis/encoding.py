"""Figures as strict JSON: ``summary.json`` must load anywhere (jq, browsers), and figures can be infinite.

A non-finite float is written as the string ``"inf"``, ``"-inf"`` or ``"nan"`` (``float()`` reads each back);
numpy scalars and arrays become plain numbers and lists. :func:`number` is the reading side.
"""
from __future__ import annotations

import json
import math
from typing import Any

import numpy as np


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
        return v
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
