"""``Double.toString`` for the numbers in Storm's status texts."""
from __future__ import annotations

import pytest

from clusteremu.base.java import double_to_string as java_double_to_string


@pytest.mark.parametrize("value, text", [
    (0.0, "0.0"), (-0.0, "-0.0"), (1.0, "1.0"), (100.0, "100.0"), (2980.0, "2980.0"), (0.1, "0.1"),
    (0.001, "0.001"), (1.0e-4, "1.0E-4"), (9999999.0, "9999999.0"), (1.0e7, "1.0E7"), (123456789.0, "1.23456789E8"),
    (1.7976931348623157e308, "1.7976931348623157E308"), (-2.5, "-2.5"), (33.333333333333336, "33.333333333333336"),
    (float("nan"), "NaN"), (float("inf"), "Infinity"), (float("-inf"), "-Infinity"),
])
def test_java_formatting(value: float, text: str) -> None:
    assert java_double_to_string(value) == text
