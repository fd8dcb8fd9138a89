"""String.format("%.nf") and Jackson's doubles."""
from __future__ import annotations

import math

import pytest

from clusteremu.base.java import JACKSON_SPECIAL_DOUBLES, format_fixed, jackson_double_in, jackson_double_out


def test_format_fixed_rounds_half_up_on_the_printed_digits():
    assert format_fixed(0.125, 2) == "0.13"  # String.format("%.2f", 0.125); Python's "%.2f" gives 0.12
    assert format(0.125, ".2f") == "0.12"
    assert format_fixed(1.005, 2) == "1.01"  # Double.toString(1.005) is "1.005": half-up on those digits
    assert format_fixed(2.5, 0) == "3"
    assert format_fixed(1 / 3) == "0.333333"  # %f: six digits
    assert format_fixed(-0.0, 2) == "-0.00"
    assert format_fixed(1e20, 2) == "100000000000000000000.00"  # never exponent notation
    assert format_fixed(1e300, 2) == "1" + "0" * 300 + ".00"  # the digits of Double.toString, padded with zeros
    assert format_fixed(-1.7976931348623157e308, 0) == "-17976931348623157" + "0" * 292


def test_format_fixed_of_special_values():
    assert format_fixed(math.nan, 2) == "NaN"
    assert format_fixed(math.inf, 2) == "Infinity" and format_fixed(-math.inf) == "-Infinity"


def test_jackson_doubles_round_trip():
    for value in (1.5, 0.0, -2.0, math.inf, -math.inf):
        assert jackson_double_in(jackson_double_out(value)) == value
    assert math.isnan(jackson_double_in(jackson_double_out(math.nan)))
    assert [jackson_double_out(v) for v in (math.nan, math.inf, -math.inf)] == ["NaN", "Infinity", "-Infinity"]
    assert sorted(JACKSON_SPECIAL_DOUBLES) == ["-Infinity", "Infinity", "NaN"]
    assert jackson_double_in(3) == 3.0 and isinstance(jackson_double_in(3), float)


@pytest.mark.parametrize("bad", [True, "1.5", "nan", None, [1]])
def test_jackson_double_in_refuses_what_is_not_a_number(bad):
    with pytest.raises(ValueError):
        jackson_double_in(bad)
