"""JSON reading helpers: Jackson's special numbers and errors that name the path."""
from __future__ import annotations

import math

import pytest

from clusteremu.base.errors import InputError
from clusteremu.strategies.pulsar.extensible.json_input import (
    as_integer,
    json_number,
    key_path,
    read_number,
    read_object,
    read_string_list,
)


def test_numbers_accept_jacksons_strings_and_reject_booleans():
    assert math.isnan(read_number({"x": "NaN"}, "x", "p", 0.0))
    assert read_number({"x": "-Infinity"}, "x", "p", 0.0) == -math.inf
    assert read_number({}, "x", "p", 7.0) == 7.0
    with pytest.raises(InputError) as err:
        read_number({"x": True}, "x", "p", 0.0)
    assert err.value.where == "p.x"


def test_integers_and_paths():
    assert as_integer(3.0, "p") == 3
    with pytest.raises(InputError):
        as_integer(3.5, "p")
    assert key_path("store", 'a"b') == 'store["a\\"b"]'
    with pytest.raises(InputError) as err:
        read_string_list(["a", 1], "brokers")
    assert err.value.where == "brokers[1]"
    with pytest.raises(InputError):
        read_object([], "x")


def test_json_number_writes_special_values_as_strings():
    assert [json_number(v) for v in (1.5, math.nan, math.inf, -math.inf)] == [1.5, "NaN", "Infinity", "-Infinity"]
