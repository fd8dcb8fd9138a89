"""Reading user-supplied JSON for the extensible load manager, with errors that name the JSON path.

A user feeds recorded stores (``pulsar-admin`` dumps, emulator traces) to the extensible strategies;
when a value has the wrong type the :class:`clusteremu.base.errors.InputError` raised here names the exact
path (``brokerLoadDataStore["b1:8080"].cpu.usage``) and what was expected.

Numbers follow Jackson's conventions, as Pulsar writes them: JSON numbers, or the strings ``"NaN"``,
``"Infinity"`` and ``"-Infinity"``. Booleans are never accepted as numbers. :func:`json_number` is the
inverse used when writing.
"""
from __future__ import annotations

import json
import math
from typing import Any, Mapping

from clusteremu.base.errors import InputError

__all__ = [
    "as_integer",
    "field_path",
    "json_number",
    "key_path",
    "read_integer",
    "read_number",
    "read_object",
    "read_string",
    "read_string_list",
    "show",
]

_SPECIAL_NUMBERS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def show(value: Any) -> str:
    """A short JSON rendering of ``value`` for error messages."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def field_path(path: str, name: str) -> str:
    """The path of field ``name`` inside the object at ``path`` (``a.b``)."""
    return f"{path}.{name}" if path else name


def key_path(path: str, key: str) -> str:
    """The path of map entry ``key`` inside the object at ``path`` (``a["k"]``)."""
    return f"{path}[{json.dumps(key)}]"


def read_object(value: Any, path: str, what: str = "an object") -> Mapping[str, Any]:
    """``value`` if it is a JSON object, else :class:`InputError` at ``path``."""
    if not isinstance(value, dict):
        raise InputError(path, f"expected {what}, got {show(value)}")
    return value


def _as_number(value: Any, path: str) -> float:
    if isinstance(value, bool):
        raise InputError(path, f"expected a number, got {show(value)}")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value in _SPECIAL_NUMBERS:
        return _SPECIAL_NUMBERS[value]
    raise InputError(path, f"expected a number, got {show(value)}")


def read_number(obj: Mapping[str, Any], name: str, path: str, default: float) -> float:
    """Field ``name`` of ``obj`` as a float (``default`` when absent or null)."""
    value = obj.get(name)
    if value is None:
        return default
    return _as_number(value, field_path(path, name))


def read_integer(obj: Mapping[str, Any], name: str, path: str, default: int) -> int:
    """Field ``name`` of ``obj`` as an int (``default`` when absent or null); integral floats are accepted."""
    value = obj.get(name)
    if value is None:
        return default
    return as_integer(value, field_path(path, name))


def as_integer(value: Any, path: str) -> int:
    """``value`` as an int, else :class:`InputError` at ``path``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(path, f"expected an integer, got {show(value)}")
    if isinstance(value, float):
        if not (math.isfinite(value) and value.is_integer()):
            raise InputError(path, f"expected an integer, got {show(value)}")
        return int(value)
    return value


def read_string(value: Any, path: str) -> str:
    """``value`` if it is a string, else :class:`InputError` at ``path``."""
    if not isinstance(value, str):
        raise InputError(path, f"expected a string, got {show(value)}")
    return value


def read_string_list(value: Any, path: str) -> list[str]:
    """``value`` if it is a list of strings, else :class:`InputError` naming the bad element."""
    if not isinstance(value, list):
        raise InputError(path, f"expected a list of strings, got {show(value)}")
    return [read_string(item, f"{path}[{i}]") for i, item in enumerate(value)]


def json_number(value: float) -> Any:
    """A float as JSON: finite values as numbers, NaN/±inf as Jackson's strings."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value
