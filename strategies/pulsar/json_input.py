"""Reading user-supplied Pulsar JSON (load reports, ``LoadData`` snapshots, extensible load-data stores) with
errors that name the JSON path.

A user feeds recorded data (``pulsar-admin`` dumps, emulator traces) to the strategies; when a value has the wrong
type the :class:`clusteremu.base.errors.InputError` raised here names the exact path
(``brokerData["b1"].localData.cpu.usage``, ``brokerLoadDataStore["b1:8080"].cpu.usage``) and what was expected.

Contents:

* paths and messages: :func:`field_path` (``a.b``), :func:`key_path` (``a["k"]``), :func:`show` (a value, shortened);
* one value at a path: :func:`read_object`, :func:`as_number`, :func:`as_integer`, :func:`read_string`,
  :func:`read_string_list`;
* one field of an object: :func:`read_number`, :func:`read_integer`;
* :class:`JsonObject` — typed field access to one object that remembers which fields were read, so the rest can
  be kept verbatim (:meth:`JsonObject.extra`);
* :func:`read_document` — a whole document read, its errors prefixed with where it came from (a file name).

Numbers follow Jackson's conventions, as Pulsar writes them (:func:`clusteremu.base.java.jackson_double_in`): JSON
numbers, or the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``; booleans are never numbers. A field that is
absent or ``null`` reads as its default. Writing goes through :func:`clusteremu.base.java.jackson_double_out`.
"""
from __future__ import annotations

import json
import math
from typing import Any, Callable, Mapping, TypeVar

from clusteremu.base.errors import InputError
from clusteremu.base.java import jackson_double_in

__all__ = [
    "JsonObject",
    "as_integer",
    "as_number",
    "field_path",
    "key_path",
    "read_integer",
    "read_number",
    "read_document",
    "read_object",
    "read_string",
    "read_string_list",
    "show",
]

T = TypeVar("T")


def show(value: Any) -> str:
    """A short JSON rendering of ``value`` for error messages (at most 80 characters)."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def read_document(read: Callable[[Any], T], obj: Any, where: str = "") -> T:
    """``read(obj)``; an :class:`InputError` it raises gets ``where`` put in front of its JSON path
    (``snapshot.json: brokerData["b1"].localData.cpu.usage``)."""
    try:
        return read(obj)
    except InputError as err:
        if where:
            raise InputError(f"{where}: {err.where}" if err.where else where, err.reason) from None
        raise


def field_path(path: str, name: str) -> str:
    """The path of field ``name`` inside the object at ``path`` (``a.b``; just ``b`` at the top)."""
    return f"{path}.{name}" if path else name


def key_path(path: str, key: str) -> str:
    """The path of map entry ``key`` inside the object at ``path`` (``a["k"]``)."""
    return f"{path}[{json.dumps(key)}]"


def read_object(value: Any, path: str, what: str = "an object") -> dict[str, Any]:
    """``value`` if it is a JSON object, else :class:`InputError` at ``path`` saying ``what`` was expected."""
    if not isinstance(value, dict):
        raise InputError(path, f"expected {what}, got {show(value)}")
    return value


def as_number(value: Any, path: str) -> float:
    """``value`` as a double (a JSON number or Jackson's ``"NaN"``/``"Infinity"``/``"-Infinity"``), else
    :class:`InputError` at ``path``."""
    try:
        return jackson_double_in(value)
    except ValueError:
        raise InputError(path, f"expected a number, got {show(value)}") from None


def as_integer(value: Any, path: str) -> int:
    """``value`` as an int (integral floats are accepted), else :class:`InputError` at ``path``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(path, f"expected an integer, got {show(value)}")
    if isinstance(value, float):
        if not (math.isfinite(value) and value.is_integer()):
            raise InputError(path, f"expected an integer, got {show(value)}")
        return int(value)
    return value


def read_number(obj: Mapping[str, Any], name: str, path: str, default: float) -> float:
    """Field ``name`` of the object ``obj`` at ``path`` as a float (``default`` when absent or null)."""
    value = obj.get(name)
    if value is None:
        return default
    return as_number(value, field_path(path, name))


def read_integer(obj: Mapping[str, Any], name: str, path: str, default: int) -> int:
    """Field ``name`` of the object ``obj`` at ``path`` as an int (``default`` when absent or null)."""
    value = obj.get(name)
    if value is None:
        return default
    return as_integer(value, field_path(path, name))


def read_string(value: Any, path: str) -> str:
    """``value`` if it is a string, else :class:`InputError` at ``path``."""
    if not isinstance(value, str):
        raise InputError(path, f"expected a string, got {show(value)}")
    return value


def read_string_list(value: Any, path: str) -> list[str]:
    """``value`` if it is a list of strings (a copy), else :class:`InputError` naming the bad element."""
    if not isinstance(value, list):
        raise InputError(path, f"expected a list of strings, got {show(value)}")
    return [read_string(item, f"{path}[{i}]") for i, item in enumerate(value)]


class JsonObject:
    """One JSON object at ``path``, read field by field with typed accessors.

    Each accessor takes the field's name (and a default for an absent or null field) and raises
    :class:`InputError` at ``path.name`` when the value has the wrong type. The fields read are remembered, so
    :meth:`extra` gives back the ones nobody asked for (kept verbatim for a faithful ``to_json``).
    """

    def __init__(self, obj: Any, path: str, what: str = "an object") -> None:
        self.obj = read_object(obj, path, what)
        self.path = path
        self.used: set[str] = set()

    def _get(self, name: str) -> Any:
        self.used.add(name)
        return self.obj.get(name)

    def number(self, name: str, default: float = 0.0) -> float:
        """A double field."""
        value = self._get(name)
        return default if value is None else as_number(value, field_path(self.path, name))

    def integer(self, name: str, default: int = 0) -> int:
        """An int/long field."""
        value = self._get(name)
        return default if value is None else as_integer(value, field_path(self.path, name))

    def boolean(self, name: str, default: bool) -> bool:
        """A boolean field (only ``true``/``false``)."""
        value = self._get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise InputError(field_path(self.path, name), f"expected true or false, got {show(value)}")
        return value

    def string(self, name: str, default: str | None = None) -> str | None:
        """A string field."""
        value = self._get(name)
        return default if value is None else read_string(value, field_path(self.path, name))

    def strings(self, name: str) -> list[str] | None:
        """A list-of-strings field; ``None`` when absent or null."""
        value = self._get(name)
        return None if value is None else read_string_list(value, field_path(self.path, name))

    def build(self, name: str, build: Callable[[Any, str], T], default: Callable[[], T]) -> T:
        """A field built by ``build(value, path)``; ``default()`` when absent or null."""
        value = self._get(name)
        return default() if value is None else build(value, field_path(self.path, name))

    def child(self, name: str) -> "JsonObject | None":
        """An object field as a :class:`JsonObject` of its own; ``None`` when absent or null."""
        value = self._get(name)
        return None if value is None else JsonObject(value, field_path(self.path, name))

    def mapping(self, name: str, build: Callable[[Any, str], T]) -> dict[str, T]:
        """An object field whose entries are built by ``build(value, path)``; ``{}`` when absent or null."""
        value = self._get(name)
        if value is None:
            return {}
        path = field_path(self.path, name)
        return {key: build(item, key_path(path, key)) for key, item in read_object(value, path).items()}

    def extra(self) -> dict[str, Any]:
        """The fields no accessor has read, in the object's order."""
        return {k: v for k, v in self.obj.items() if k not in self.used}
