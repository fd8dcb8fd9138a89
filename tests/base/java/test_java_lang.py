"""java.lang facts: casts, int/long arithmetic, double corners, String and Double orderings."""
from __future__ import annotations

import math

import pytest

from clusteremu.base.java import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    double_compare_key,
    double_divide,
    double_to_int,
    double_to_long,
    equals_ignore_case,
    int_add,
    long_divide,
    math_max,
    math_min,
    math_sqrt,
    strict_max,
    string_compare_key,
    string_hash_code,
    to_int,
)


def _is_negative_zero(x: float) -> bool:
    return x == 0 and math.copysign(1.0, x) < 0


def test_int_cast_of_a_double():
    assert double_to_int(math.nan) == 0  # (int) NaN == 0
    assert double_to_int(1e10) == INT_MAX == 2147483647  # (int) 1e10 == Integer.MAX_VALUE
    assert double_to_int(-1e10) == INT_MIN == -2147483648
    assert double_to_int(math.inf) == INT_MAX and double_to_int(-math.inf) == INT_MIN
    assert double_to_int(-2.7) == -2 and double_to_int(2.7) == 2  # toward zero
    assert double_to_long(1e19) == LONG_MAX and double_to_long(-1e19) == LONG_MIN
    assert double_to_long(math.nan) == 0 and double_to_long(-3.9) == -3


def test_int_arithmetic_wraps():
    assert int_add(INT_MAX, 1) == INT_MIN  # Integer.MAX_VALUE + 1 == Integer.MIN_VALUE
    assert int_add(INT_MIN, -1) == INT_MAX
    assert int_add(2, 3) == 5
    assert to_int(4294967297) == 1  # (int) 4294967297L
    assert to_int(2147483648) == -2147483648  # (int) 2147483648L
    assert to_int(-1) == -1


def test_integer_division_truncates_toward_zero():
    assert long_divide(-7, 2) == -3 and -7 // 2 == -4  # Java -7 / 2 == -3; Python floors
    assert long_divide(7, -2) == -3 and long_divide(-7, -2) == 3 and long_divide(7, 2) == 3
    with pytest.raises(ZeroDivisionError):  # ArithmeticException: / by zero
        long_divide(1, 0)


def test_double_division_by_zero():
    assert double_divide(1.0, 0) == math.inf  # 1.0 / 0 == Infinity
    assert double_divide(-1.0, 0) == -math.inf
    assert double_divide(1.0, -0.0) == -math.inf  # the sign of the zero counts
    assert double_divide(-1.0, -0.0) == math.inf
    assert math.isnan(double_divide(0.0, 0)) and math.isnan(double_divide(math.nan, 0))
    assert double_divide(1.0, 4) == 0.25


def test_math_max_and_min_at_nan_and_signed_zero():
    assert math_max(-0.0, 0.0) == 0.0 and not _is_negative_zero(math_max(-0.0, 0.0))  # Math.max(-0.0, 0.0) == 0.0
    assert not _is_negative_zero(math_max(0.0, -0.0))
    assert _is_negative_zero(math_max(-0.0, -0.0))
    assert _is_negative_zero(math_min(0.0, -0.0)) and _is_negative_zero(math_min(-0.0, 0.0))
    assert math.isnan(math_max(math.nan, 1.0)) and math.isnan(math_max(1.0, math.nan))  # NaN wins
    assert math.isnan(math_min(1.0, math.nan))
    assert math_max(1.0, 2.0) == 2.0 and math_min(1.0, 2.0) == 1.0
    assert _is_negative_zero(max(-0.0, 0.0))  # why this exists: Python keeps the first


def test_math_sqrt_of_a_negative_is_nan():
    assert math.isnan(math_sqrt(-1.0)) and math.isnan(math_sqrt(math.nan))
    assert math_sqrt(4.0) == 2.0 and math_sqrt(math.inf) == math.inf


def test_strict_max_ignores_nan_unlike_math_max():
    assert strict_max([math.nan, 3.0, math.nan, 2.0]) == 3.0
    assert strict_max([math.nan, math.nan]) == -math.inf
    assert strict_max([]) == -math.inf
    assert _is_negative_zero(strict_max([-0.0, 0.0]))  # 0.0 > -0.0 is false: the first zero stays


def test_string_hash_code_matches_java():
    assert string_hash_code("") == 0
    assert string_hash_code("hello") == 99162322
    assert string_hash_code("Aa") == string_hash_code("BB") == 2112
    assert string_hash_code("broker1") == 150569848
    assert string_hash_code("polygenelubricants") == -2147483648  # int overflow wraps
    assert string_hash_code("\U0001f600") == 0xD83D * 31 + 0xDE00  # over UTF-16 units: the surrogate pair
    assert string_hash_code("\ud83d") == 0xD83D  # a lone surrogate is one char, as in Java


def test_string_compare_key_is_compare_to():
    assert string_compare_key("CID_10") < string_compare_key("CID_2")  # "CID_10".compareTo("CID_2") < 0
    assert string_compare_key("a") < string_compare_key("ab") < string_compare_key("b")
    assert string_compare_key("B") < string_compare_key("a")  # no case folding
    # by code point U+FF5E < U+1F600, but U+1F600 is the surrogate pair D83D DE00 in UTF-16, below FF5E
    a, b = "\uff5e", "\U0001f600"
    assert sorted([a, b]) == [a, b]
    assert sorted([a, b], key=string_compare_key) == [b, a]


def test_double_compare_key_orders_like_java():
    values = [1.0, float("nan"), -0.0, 0.0, float("inf"), -float("inf")]
    ordered = sorted(values, key=double_compare_key)
    assert ordered[:2] == [-float("inf"), -0.0] and str(ordered[1]) == "-0.0"  # Double.compare(-0.0, 0.0) < 0
    assert ordered[2] == 0.0 and str(ordered[2]) == "0.0"
    assert ordered[4] == float("inf") and ordered[5] != ordered[5]  # Double.compare(NaN, +inf) > 0


def test_equals_ignore_case():
    assert equals_ignore_case("Group-A", "gROUP-a")
    assert equals_ignore_case("\u212a", "k")  # KELVIN SIGN: toUpperCase differs, toLowerCase of both is 'k'
    assert not equals_ignore_case("stra\u00dfe", "STRASSE")  # lengths differ: no full case folding
    assert not equals_ignore_case("\u00df", "s")
    assert not equals_ignore_case("a", "b") and equals_ignore_case("", "")
