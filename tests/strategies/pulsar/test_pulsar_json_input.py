"""The one reader of Pulsar JSON: Jackson's special numbers, typed fields and errors that name the JSON path."""
from __future__ import annotations

import math

import pytest

from clusteremu.base.errors import InputError
from clusteremu.strategies.pulsar.json_input import (
    JsonObject,
    as_integer,
    key_path,
    read_number,
    read_object,
    read_string_list,
    show,
)


def test_numbers_accept_jacksons_strings_and_reject_booleans():
    assert math.isnan(read_number({"x": "NaN"}, "x", "p", 0.0))
    assert read_number({"x": "-Infinity"}, "x", "p", 0.0) == -math.inf
    assert read_number({}, "x", "p", 7.0) == 7.0
    assert read_number({"x": None}, "x", "p", 7.0) == 7.0
    with pytest.raises(InputError) as err:
        read_number({"x": True}, "x", "p", 0.0)
    assert err.value.where == "p.x" and err.value.reason == "expected a number, got true"


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


def test_show_shortens_long_values():
    assert show("x" * 200).endswith("...") and len(show("x" * 200)) == 80
    assert show({1, 2}).startswith("{")  # not JSON: repr


def test_json_object_reads_typed_fields_and_keeps_the_rest():
    obj = JsonObject({"a": 1, "b": "NaN", "c": True, "d": ["x"], "e": {"f": 2}, "g": {"k": 3}, "z": 9}, "root")
    assert obj.integer("a") == 1 and math.isnan(obj.number("b")) and obj.boolean("c", False)
    assert obj.strings("d") == ["x"] and obj.strings("missing") is None
    child = obj.child("e")
    assert child is not None and child.path == "root.e" and child.integer("f") == 2
    assert obj.mapping("g", lambda value, path: (value, path)) == {"k": (3, 'root.g["k"]')}
    assert obj.string("s", "default") == "default" and obj.number("n", 1.5) == 1.5
    assert obj.extra() == {"z": 9}


@pytest.mark.parametrize(
    "field, read, where",
    [
        ("a", lambda o: o.number("a"), "r.a"),
        ("a", lambda o: o.integer("a"), "r.a"),
        ("a", lambda o: o.boolean("a", True), "r.a"),
        ("a", lambda o: o.child("a"), "r.a"),
        ("a", lambda o: o.mapping("a", lambda v, p: v), "r.a"),
    ],
)
def test_json_object_errors_name_the_field(field, read, where):
    with pytest.raises(InputError) as err:
        read(JsonObject({field: "x"}, "r"))
    assert err.value.where == where


def test_json_object_refuses_what_is_not_an_object():
    with pytest.raises(InputError) as err:
        JsonObject([1], "top", "a LoadData object")
    assert err.value.where == "top" and err.value.reason == "expected a LoadData object, got [1]"
