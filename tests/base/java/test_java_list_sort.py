"""``Collections.sort`` with a comparator, call for call, as the FIFO priority strategy needs it."""
from __future__ import annotations

import random

from clusteremu.base.java import java_list_sort


def test_stable_like_sorted_for_consistent_comparators() -> None:
    rng = random.Random(7)
    for n in (0, 1, 2, 5, 31, 32, 60):
        items = [(rng.randint(0, 5), i) for i in range(n)]
        got = list(items)
        java_list_sort(got, lambda a, b: (a[0] > b[0]) - (a[0] < b[0]))
        assert got == sorted(items, key=lambda x: x[0])


def test_comparison_sequence_of_timsort_below_32_elements() -> None:
    # [3, 1, 2]: the initial run is [3, 1] (descending, reversed), then 2 is binary-inserted against 3 and 1
    calls: list[tuple[int, int]] = []
    items = [3, 1, 2]

    def compare(a: int, b: int) -> int:
        calls.append((a, b))
        return (a > b) - (a < b)

    java_list_sort(items, compare)
    assert items == [1, 2, 3]
    assert calls == [(1, 3), (2, 1), (2, 3), (2, 1)]


def test_a_descending_run_with_equal_elements_is_not_reversed_past_them() -> None:
    # strictly descending only: [2, 1, 1] takes [2, 1] as the run, so the two 1s keep their order
    items = [(2, "a"), (1, "b"), (1, "c")]
    java_list_sort(items, lambda a, b: (a[0] > b[0]) - (a[0] < b[0]))
    assert items == [(1, "b"), (1, "c"), (2, "a")]
