"""Numbers as Java writes and reads them in text: ``String.format``, ``Double.toString`` and Jackson's JSON doubles.

Contents:

* :func:`double_to_string` — ``Double.toString``: plain notation for 1e-3 <= |v| < 1e7, else ``d.dddE[-]n``;
* :func:`format_fixed` — ``String.format(Locale.ENGLISH, "%.<n>f", d)`` (``%f`` is ``n = 6``): HALF_UP rounding of the
  shortest decimal form of the double, ``NaN``/``Infinity``/``-Infinity`` for the special values;
* :data:`JACKSON_SPECIAL_DOUBLES`, :func:`jackson_double_out`, :func:`jackson_double_in` — doubles in JSON as
  Jackson writes and reads them: finite values as numbers, NaN and ±inf as the strings ``"NaN"``, ``"Infinity"``,
  ``"-Infinity"`` (its default ``WRITE_NAN_AS_STRINGS``).

Why: Python's ``format(x, ".2f")`` rounds the binary value half-to-even (``0.125`` → ``0.12``), Java rounds the
decimal digits ``Double.toString`` would print half-up (``0.125`` → ``0.13``, ``1.005`` → ``1.01``); and ``json``
writes a bare ``NaN`` that Jackson does not read back.

Departure: the decimal digits are Python's shortest round-trip ``repr``, which is what ``Double.toString`` gives
since JDK 19; older JDKs print more digits for a few doubles (``2.0E23`` as ``2.0000000000000002E23``), and for
those the formatted text can differ in the last places.
"""
from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Context, Decimal
from types import MappingProxyType
from typing import Any, Mapping

__all__ = ["JACKSON_SPECIAL_DOUBLES", "double_to_string", "format_fixed", "jackson_double_in", "jackson_double_out"]

#: Jackson's spellings of the doubles JSON has no number for (read-only).
JACKSON_SPECIAL_DOUBLES: Mapping[str, float] = MappingProxyType(
    {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
)


def _special(value: float) -> str | None:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return None


def format_fixed(value: float, digits: int = 6) -> str:
    """``String.format("%.<digits>f", value)``: ``format_fixed(0.125, 2) == "0.13"``, ``-0.0`` gives ``"-0.00"``."""
    special = _special(value)
    if special is not None:
        return special
    # Java pads the shortest digits with zeros: a double has at most 309 integer digits, so give the context room
    # for all of them (the default 28 digits would refuse 1e300)
    context = Context(prec=320 + digits)
    return format(Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-digits), ROUND_HALF_UP, context), "f")


def jackson_double_out(value: float) -> float | str:
    """A double as Jackson writes it to JSON: the number itself, or ``"NaN"``/``"Infinity"``/``"-Infinity"``."""
    special = _special(value)
    return value if special is None else special


def jackson_double_in(value: Any) -> float:
    """A JSON value read as a Java ``double`` field, as Jackson accepts it: a number (not a boolean) or one of
    :data:`JACKSON_SPECIAL_DOUBLES`. Raises ``ValueError`` for anything else."""
    if isinstance(value, bool):
        raise ValueError(f"not a number: {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value in JACKSON_SPECIAL_DOUBLES:
        return JACKSON_SPECIAL_DOUBLES[value]
    raise ValueError(f"not a number: {value!r}")


def double_to_string(value: float) -> str:
    """``Double.toString(value)``: plain notation for 1e-3 <= |v| < 1e7, else ``d.dddE[-]n``; shortest digits
    that round-trip (the JDK 19+ algorithm; older JDKs sometimes printed one more digit)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    digits_tuple = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(str(d) for d in digits_tuple.digits)
    exponent = digits_tuple.exponent + len(digits) - 1  # scientific exponent of the first digit
    assert isinstance(digits_tuple.exponent, int)
    if 1e-3 <= abs(value) < 1e7:
        if exponent >= 0:
            whole = digits[: exponent + 1].ljust(exponent + 1, "0")
            frac = digits[exponent + 1:] or "0"
        else:
            whole = "0"
            frac = "0" * (-exponent - 1) + digits
        return f"{sign}{whole}.{frac}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"
