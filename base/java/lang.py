"""``java.lang`` semantics where Python's built-ins answer differently: strings, ``int``/``long`` arithmetic and
casts, and ``double`` arithmetic at its corners (NaN, ±0.0, ±inf, division by zero).

Contents:

* ints: :data:`INT_MIN`, :data:`INT_MAX`, :data:`LONG_MIN`, :data:`LONG_MAX`; :func:`to_int` (wrap a Python int to
  32 bits, as ``(int)`` of a ``long`` does), :func:`int_add` (``int`` ``+``, wrapping on overflow),
  :func:`long_divide` (``long`` ``/``: truncation toward zero, ``ArithmeticException`` as ``ZeroDivisionError``);
* casts: :func:`double_to_int` and :func:`double_to_long` (``(int) d`` / ``(long) d``: NaN → 0, truncation toward
  zero, saturation at the type's range);
* doubles: :func:`double_divide` (``a / b``: ±inf or NaN instead of raising), :func:`math_max`/:func:`math_min`
  (``Math.max``/``Math.min``: NaN wins, 0.0 > -0.0), :func:`math_sqrt` (NaN for negative arguments),
  :func:`strict_max` (the hand-written ``max(double...)`` loop: NaN never wins);
* ints: :func:`int_sub` (``int`` ``-``, wrapping);
* strings: :func:`string_hash_code` (``String.hashCode``), :func:`string_compare_key` (``String.compareTo``
  order) and :func:`string_compare_to` (its value), :func:`equals_ignore_case` (``String.equalsIgnoreCase``),
  :func:`utf8_bytes` (``getBytes(UTF_8)``), :func:`string_split` (``split`` on one literal character),
  :func:`is_whitespace` (``Character.isWhitespace``);
* orderings: :func:`double_compare_key` (``Double.compare``).

Why: the modelled systems break ties, round amounts and compare strings with these rules; Python's ``max``,
``int()``, ``/``, ``//`` and ``<`` on ``str`` differ exactly in the corners where a faithful decision needs Java's.
"""
from __future__ import annotations

import math
import unicodedata
from functools import lru_cache
from typing import Iterable

__all__ = [
    "INT_MAX",
    "INT_MIN",
    "LONG_MAX",
    "LONG_MIN",
    "double_compare_key",
    "double_divide",
    "double_to_int",
    "double_to_long",
    "equals_ignore_case",
    "int_add",
    "int_sub",
    "is_whitespace",
    "long_divide",
    "math_max",
    "math_min",
    "math_sqrt",
    "strict_max",
    "string_compare_key",
    "string_compare_to",
    "string_hash_code",
    "string_split",
    "to_int",
    "utf8_bytes",
]

#: ``Integer.MIN_VALUE``
INT_MIN = -(2**31)
#: ``Integer.MAX_VALUE``
INT_MAX = 2**31 - 1
#: ``Long.MIN_VALUE``
LONG_MIN = -(2**63)
#: ``Long.MAX_VALUE``
LONG_MAX = 2**63 - 1


# --- int and long ------------------------------------------------------------------------------------


def to_int(value: int) -> int:
    """``(int) value`` of an integer: the low 32 bits as a signed int (Java's wrap-around)."""
    return ((value - INT_MIN) & 0xFFFFFFFF) + INT_MIN


def int_add(a: int, b: int) -> int:
    """Java ``int`` addition: ``a + b`` wrapped to 32 bits (``INT_MAX + 1 == INT_MIN``)."""
    return to_int(a + b)


def long_divide(a: int, b: int) -> int:
    """Java ``long`` (or ``int``) division: truncates toward zero (Python's ``//`` floors: ``-7 // 2 == -4``, Java
    ``-7 / 2 == -3``). Raises ``ZeroDivisionError`` where Java throws ``ArithmeticException``."""
    if b == 0:
        raise ZeroDivisionError("/ by zero")
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _saturating_cast(value: float, low: int, high: int) -> int:
    if value != value:
        return 0
    if value >= high:
        return high
    if value <= low:
        return low
    return int(value)


def double_to_int(value: float) -> int:
    """Java's ``(int) value`` of a double: NaN → 0, truncation toward zero, saturation at the ``int`` range
    (``(int) 1e10 == Integer.MAX_VALUE``)."""
    return _saturating_cast(value, INT_MIN, INT_MAX)


def double_to_long(value: float) -> int:
    """Java's ``(long) value`` of a double: NaN → 0, truncation toward zero, saturation at the ``long`` range."""
    return _saturating_cast(value, LONG_MIN, LONG_MAX)


# --- double ------------------------------------------------------------------------------------------


def double_divide(a: float, b: float) -> float:
    """Java ``a / b`` on doubles (an int or long divisor is widened): division by zero gives ±inf, or NaN for
    ``0/0`` and ``NaN/0``, instead of raising. The infinity's sign is the XOR of the operands' signs (-0.0
    counts as negative)."""
    if b != 0:
        return a / b
    if a != a or a == 0:
        return math.nan
    negative = (a < 0) != (math.copysign(1.0, b) < 0)
    return -math.inf if negative else math.inf


def math_max(a: float, b: float) -> float:
    """``Math.max(double, double)``: NaN if either is NaN; ``0.0`` beats ``-0.0`` (Python's ``max`` keeps
    whichever comes first in both cases)."""
    if a != a or b != b:
        return math.nan
    if a == b == 0:
        return a + b  # -0.0 only when both are -0.0
    return a if a > b else b


def math_min(a: float, b: float) -> float:
    """``Math.min(double, double)``: NaN if either is NaN; ``-0.0`` beats ``0.0``."""
    if a != a or b != b:
        return math.nan
    if a == b == 0:
        return -0.0 if math.copysign(1.0, a) < 0 or math.copysign(1.0, b) < 0 else 0.0
    return a if a < b else b


def math_sqrt(x: float) -> float:
    """``Math.sqrt``: NaN for negative (and NaN) arguments instead of raising."""
    return math.sqrt(x) if x >= 0 else math.nan


def strict_max(values: Iterable[float]) -> float:
    """The ``max(double...)`` loop Java code writes by hand (Pulsar's ``LocalBrokerData.max``): start at −∞ and
    keep a value only when it is strictly greater. So NaN never wins (unlike :func:`math_max`), an empty or
    all-NaN call gives −∞, and of ``0.0`` and ``-0.0`` the first one stays."""
    best = -math.inf
    for v in values:
        if v > best:
            best = v
    return best


def double_compare_key(value: float) -> tuple[int, float, int]:
    """Sort key ordering floats as Java's ``Double.compare``: NaN is the largest value and -0.0 < 0.0.

    Use with Python's stable ``sorted`` (``reverse=True`` for a descending ``Double.compare(b, a)``
    comparator, which keeps equal elements in their original order, as Java's stable sort does).
    """
    if math.isnan(value):
        return (1, 0.0, 0)
    return (0, value, 0 if math.copysign(1.0, value) < 0 else 1)


# --- String ------------------------------------------------------------------------------------------


@lru_cache(maxsize=1 << 18)  # pure; broker and bundle names recur on every call (a large cluster has 100,000)
def string_hash_code(s: str) -> int:
    """Java ``String.hashCode()`` as a signed 32-bit int (over UTF-16 code units; a lone surrogate, which JSON
    can carry, counts as the one unit it is in Java)."""
    h = 0
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def string_compare_key(s: str) -> bytes:
    """Sort key ordering strings as Java's ``String.compareTo`` (lexicographic over UTF-16 code units, so a
    character above U+FFFF sorts by its surrogates; ``"CID_10" < "CID_2"``). Lone surrogates are accepted."""
    return s.encode("utf-16-be", "surrogatepass")


def equals_ignore_case(a: str, b: str) -> bool:
    """``String.equalsIgnoreCase``: same length, and each pair of chars equal as is, after upper-casing, or after
    upper- then lower-casing (Python's ``casefold`` differs: ``"ß".casefold() == "ss"``). Compared per code point,
    which is Java's per-``char`` rule for every character of the Basic Multilingual Plane."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x == y:
            continue
        ux, uy = x.upper(), y.upper()
        if len(ux) == 1 and len(uy) == 1 and (ux == uy or ux.lower() == uy.lower()):
            continue
        return False
    return True


def string_compare_to(a: str, b: str) -> int:
    """``a.compareTo(b)``: the difference of the first differing UTF-16 code units, else of the lengths."""
    ka, kb = string_compare_key(a), string_compare_key(b)
    for i in range(0, min(len(ka), len(kb)), 2):
        ca, cb = (ka[i] << 8) | ka[i + 1], (kb[i] << 8) | kb[i + 1]
        if ca != cb:
            return ca - cb
    return (len(ka) - len(kb)) // 2


def utf8_bytes(s: str) -> bytes:
    """``s.getBytes(StandardCharsets.UTF_8)``: a surrogate pair is one 4-byte character, a lone surrogate is ``?``."""
    # Round-trip through UTF-16 so that two surrogate code points forming a pair become one code point, as in Java.
    joined = s.encode("utf-16-be", "surrogatepass").decode("utf-16-be", "surrogatepass")
    return joined.encode("utf-8", "replace")


def string_split(s: str, sep: str) -> list[str]:
    """``s.split(sep)`` for a one-character, non-metacharacter ``sep`` (limit 0: trailing empty strings dropped).

    ``"a@"`` → ``["a"]``, ``"@a"`` → ``["", "a"]``, ``"@"`` → ``[]``, ``""`` → ``[""]``.
    """
    if len(sep) != 1:
        raise ValueError("string_split takes a single character")
    if s == "":
        return [""]  # no match: the array holds the input itself
    parts = s.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


# Character.isWhitespace: the ASCII controls below plus Unicode space/line/paragraph separators, except the
# non-breaking spaces.
_WHITESPACE_CONTROLS = frozenset("\t\n\u000b\f\r\u001c\u001d\u001e\u001f")
_NON_BREAKING = frozenset("\u00a0\u2007\u202f")


def is_whitespace(ch: str) -> bool:
    """``Character.isWhitespace`` of one character."""
    if ch in _WHITESPACE_CONTROLS:
        return True
    if ch in _NON_BREAKING:
        return False
    return unicodedata.category(ch) in ("Zs", "Zl", "Zp")


def int_sub(a: int, b: int) -> int:
    """``a - b`` on Java ``int`` operands (wraps around at 32 bits)."""
    return to_int(a - b)
