"""Java ``float`` (IEEE binary32) arithmetic, as the JVM does it, on Python floats.

Contents:

* :func:`to_float` — ``(float) d``: round a double to the nearest float32 (±inf beyond float32's range);
* :func:`float_divide`, :func:`float_multiply` — ``float`` ``/`` and ``*`` of two float32 values, with Java's
  division by zero (±inf, NaN);
* :func:`strict_max_float` — the hand-written ``max(float...)`` loop over ``numpy.float32`` values (NaN never wins).

Why: Java code that computes in ``float`` (Pulsar's ``ResourceUsage.percentUsage()``) rounds after every operation,
and the rounding shows in its decisions and its tests (30/100 → 30.000001907348633 once widened). The results are
kept as Python floats: a double holds more than twice float32's precision, so rounding the exact double result of
one ``+ - * /`` on float32 operands to float32 gives the float32 result to the bit, and plain floats cost far less
than numpy scalars on the hot paths.
"""
from __future__ import annotations

import math
import struct
from typing import Iterable

import numpy as np

from .lang import double_divide

__all__ = ["float_divide", "float_multiply", "strict_max_float", "to_float"]

_FLOAT32 = struct.Struct("f")


def to_float(x: float) -> float:
    """``(float) x``: ``x`` rounded to the nearest float32 (ties to even), returned as a Python float; beyond
    float32's range it is ±inf, as Java's narrowing conversion gives."""
    try:
        return _FLOAT32.unpack(_FLOAT32.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def float_divide(a: float, b: float) -> float:
    """Java ``a / b`` on ``float`` operands (``a`` and ``b`` already float32 values): the float32 quotient, ±inf or
    NaN when ``b`` is zero."""
    return to_float(double_divide(a, b))


def float_multiply(a: float, b: float) -> float:
    """Java ``a * b`` on ``float`` operands (``a`` and ``b`` already float32 values): the float32 product."""
    return to_float(a * b)


def strict_max_float(values: Iterable[np.float32]) -> np.float32:
    """The ``max(float...)`` loop (start at ``-Infinity``, keep strictly greater values): the float32 twin of
    :func:`~clusteremu.base.java.lang.strict_max`."""
    best = np.float32(-np.inf)
    for v in values:
        if v > best:
            best = np.float32(v)
    return best
