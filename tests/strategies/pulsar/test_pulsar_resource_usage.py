"""ResourceUsage.percentUsage in float32 and the three "max resource usage" helpers (reference §2)."""
import math

import pytest

from clusteremu.strategies.pulsar.resource_usage import (
    ResourceUsage,
    max_resource_usage,
    max_resource_usage_with_weight,
    max_resource_usage_with_weight_5,
)

ZERO = ResourceUsage()


def test_percent_usage_is_float32_widened_to_double():
    assert ResourceUsage(30, 100).percent_usage() == 30.000001907348633
    assert ResourceUsage(30, 100).percent_usage() != 30.0


@pytest.mark.parametrize("limit", [0, -1, -100])
def test_percent_usage_is_zero_without_a_positive_limit(limit):
    assert ResourceUsage(50, limit).percent_usage() == 0.0


def test_percent_usage_is_not_clamped_above_the_limit():
    assert ResourceUsage(140, 100).percent_usage() == pytest.approx(140.0, rel=1e-6)


def test_percent_usage_propagates_nan_and_infinity():
    assert math.isnan(ResourceUsage(math.nan, 100).percent_usage())
    assert ResourceUsage(math.inf, 100).percent_usage() == math.inf


def test_a_positive_limit_below_float32s_range_divides_by_zero():
    assert ResourceUsage(1.0, 1e-50).percent_usage() == math.inf
    assert math.isnan(ResourceUsage(0.0, 1e-50).percent_usage())


def test_weighted_max_4_ignores_memory_and_applies_weights():
    cpu, dm, bin_, bout = ResourceUsage(50, 100), ResourceUsage(90, 100), ResourceUsage(20, 100), ResourceUsage(10, 100)
    assert max_resource_usage_with_weight(cpu, dm, bin_, bout, 1.0, 0.0, 1.0, 1.0) == pytest.approx(0.5, rel=1e-6)
    assert max_resource_usage_with_weight(cpu, dm, bin_, bout, 1.0, 1.0, 1.0, 1.0) == pytest.approx(0.9, rel=1e-6)
    assert max_resource_usage_with_weight(cpu, dm, bin_, bout, 0.5, 0.0, 3.0, 1.0) == pytest.approx(0.6, rel=1e-6)


def test_weighted_max_5_includes_memory():
    memory = ResourceUsage(95, 100)
    assert max_resource_usage_with_weight_5(ZERO, memory, ZERO, ZERO, ZERO, 1, 1, 1, 1, 1) == pytest.approx(0.95, 1e-6)
    assert max_resource_usage_with_weight_5(ZERO, memory, ZERO, ZERO, ZERO, 1, 0, 1, 1, 1) == 0.0


def test_unweighted_max_is_computed_in_float32():
    # Java divides the float max by the int 100 in float: 85 % reads as 0.85f, not the double 0.85.
    assert max_resource_usage(ResourceUsage(85, 100), ZERO, ZERO, ZERO) == 0.8500000238418579
    # the newest version ignores memory, the 2.x one does not
    assert max_resource_usage(ZERO, ZERO, ZERO, ZERO) == 0.0
    assert max_resource_usage(ZERO, ZERO, ZERO, ZERO, memory=ResourceUsage(1, 2)) == 0.5


def test_weighted_max_ignores_a_nan_signal():
    assert max_resource_usage_with_weight(
        ResourceUsage(math.nan, 100), ZERO, ResourceUsage(40, 100), ZERO, 1, 1, 1, 1
    ) == pytest.approx(0.4, rel=1e-6)
