"""A small declarative schema for scenario TOML files.

A schema is built from :class:`Field` (a scalar or list value), :class:`Table` (a TOML table with known keys),
:class:`ArrayOf` (an array of tables or values) and :class:`MapOf` (a table whose keys are free, e.g. per-broker
overrides). ``validate`` returns the value with defaults filled in, or raises :class:`SchemaErrors` listing every
problem with its key path (``network.links[1].latency.min_ms``) and the reason.
"""
from __future__ import annotations

import math
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

REQUIRED = object()

Check = Callable[[Any], list[tuple[str, str]]]


class SchemaErrors(Exception):
    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{p}: {r}" for p, r in problems))


@dataclass
class Field:
    """A value: ``type`` is ``int``, ``float``, ``str``, ``bool``, ``list``, ``any`` or ``file``.

    A ``file`` is given as a path, relative to the scenario file's folder (or absolute); validation reads it and
    the value becomes ``{"path": <as given>, "text": <its content>}``, so that the scenario — and the manifest of
    every run of it — carries what it read: a run directory is self-contained, and ``replay`` and ``analyze`` work
    from anywhere after the file has changed. A value that is already such a table (a manifest's) is kept."""

    type: str
    default: Any = REQUIRED
    doc: str = ""
    gt: float | None = None
    ge: float | None = None
    le: float | None = None
    lt: float | None = None
    choices: tuple | Callable[[], tuple] | None = None
    item: "Field | None" = None


@dataclass
class Table:
    fields: dict[str, "Spec"]
    doc: str = ""
    default: Any = field(default_factory=dict)
    check: Check | None = None
    #: accept keys not listed (their values are returned as given); for sections a model validates itself
    open: bool = False


@dataclass
class ArrayOf:
    item: "Spec"
    doc: str = ""
    default: Any = field(default_factory=list)


@dataclass
class MapOf:
    value: "Spec"
    doc: str = ""
    default: Any = field(default_factory=dict)


Spec = Field | Table | ArrayOf | MapOf

_TYPE_NAMES = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false",
               "list": "an array", "any": "a value", "file": "a file path"}

#: The folder relative paths of ``file`` fields are resolved against, during one :func:`validate`.
_FILE_BASE: ContextVar[Path | None] = ContextVar("clusteremu_scenario_file_base", default=None)


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def validate(value: Any, spec: Spec, path: str = "", *, base_dir: Path | None = None) -> Any:
    """``value`` checked against ``spec`` with defaults filled in; :class:`SchemaErrors` lists every problem.
    ``base_dir`` is the folder relative ``file`` paths are read from (the current directory when None)."""
    problems: list[tuple[str, str]] = []
    token = _FILE_BASE.set(base_dir)
    try:
        out = _validate(value, spec, path, problems)
    finally:
        _FILE_BASE.reset(token)
    if problems:
        raise SchemaErrors(problems)
    return out


def _validate(value: Any, spec: Spec, path: str, problems: list[tuple[str, str]]) -> Any:
    if isinstance(spec, Table):
        if not isinstance(value, dict):
            problems.append((path, f"expected a table, got {_describe(value)}"))
            return value
        out: dict[str, Any] = {}
        for key in value:
            if key not in spec.fields and not spec.open:
                known = ", ".join(sorted(spec.fields)) or "none"
                problems.append((_join(path, key), f"unknown key (known keys here: {known})"))
        for key, sub in spec.fields.items():
            p = _join(path, key)
            if key in value and value[key] is None and getattr(sub, "default", REQUIRED) is None:
                out[key] = None  # an optional key that a normalized scenario (e.g. a manifest's) holds as null
            elif key in value:
                out[key] = _validate(value[key], sub, p, problems)
            else:
                default = getattr(sub, "default", REQUIRED)
                if default is REQUIRED:
                    problems.append((p, "required key is missing"))
                elif isinstance(sub, Table):
                    out[key] = _validate(dict(default), sub, p, problems)
                else:
                    out[key] = _copy(default)
        if spec.open:
            for key in value:
                if key not in spec.fields:
                    out[key] = value[key]
        if spec.check is not None and not problems:
            for sub, reason in spec.check(out):
                problems.append((_join(path, sub) if sub else path, reason))
        return out
    if isinstance(spec, ArrayOf):
        if not isinstance(value, list):
            problems.append((path, f"expected an array, got {_describe(value)}"))
            return value
        return [_validate(v, spec.item, _join(path, i), problems) for i, v in enumerate(value)]
    if isinstance(spec, MapOf):
        if not isinstance(value, dict):
            problems.append((path, f"expected a table, got {_describe(value)}"))
            return value
        return {k: _validate(v, spec.value, _join(path, k), problems) for k, v in value.items()}
    return _field(value, spec, path, problems)


def _file(value: Any, path: str, problems: list[tuple[str, str]]) -> Any:
    if isinstance(value, dict) and set(value) == {"path", "text"} and all(isinstance(v, str) for v in value.values()):
        return value
    if not isinstance(value, str) or not value:
        problems.append((path, f"expected {_TYPE_NAMES['file']}, got {_describe(value)}"))
        return value
    file = Path(value)
    base = _FILE_BASE.get()
    if not file.is_absolute() and base is not None:
        file = base / file
    try:
        return {"path": value, "text": file.read_text(encoding="utf-8")}
    except FileNotFoundError:
        problems.append((path, f"no such file: {file}"))
    except UnicodeDecodeError as err:
        problems.append((path, f"{file} is not UTF-8 text (byte {err.start})"))
    except OSError as err:
        problems.append((path, f"cannot read {file}: {err.strerror}"))
    return value


def _field(value: Any, spec: Field, path: str, problems: list[tuple[str, str]]) -> Any:
    ty = spec.type
    if ty == "file":
        return _file(value, path, problems)
    ok = (
        ty == "any"
        or (ty == "int" and isinstance(value, int) and not isinstance(value, bool))
        or (ty == "float" and isinstance(value, (int, float)) and not isinstance(value, bool))
        or (ty == "str" and isinstance(value, str))
        or (ty == "bool" and isinstance(value, bool))
        or (ty == "list" and isinstance(value, list))
    )
    if not ok:
        problems.append((path, f"expected {_TYPE_NAMES[ty]}, got {_describe(value)}"))
        return value
    if ty == "float":
        value = float(value)
        if not math.isfinite(value):
            problems.append((path, f"must be finite, got {value}"))
            return value
    if ty in ("int", "float"):
        for bound, test, word in (
            (spec.gt, lambda v, b: v > b, "greater than"),
            (spec.ge, lambda v, b: v >= b, "at least"),
            (spec.lt, lambda v, b: v < b, "less than"),
            (spec.le, lambda v, b: v <= b, "at most"),
        ):
            if bound is not None and not test(value, bound):
                problems.append((path, f"must be {word} {bound:g}, got {value:g}"))
    if spec.choices is not None:
        choices = spec.choices() if callable(spec.choices) else spec.choices
        if value not in choices:
            problems.append((path, f"unknown value {value!r} (expected one of: {', '.join(map(str, choices))})"))
    if ty == "list" and spec.item is not None:
        value = [_field(v, spec.item, _join(path, i), problems) for i, v in enumerate(value)]
    return value


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return f"{type(value).__name__} {value!r}"


def _copy(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v
