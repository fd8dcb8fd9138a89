"""Loading and validating scenarios (DESIGN.md principle 7).

A scenario is a TOML file (or a built-in scenario's name). Everything is validated before anything runs:
unknown keys, wrong types, out-of-range values and unknown strategy names are refused with an
:class:`clusteremu.base.errors.InputError` naming the file, the key path and the reason (exit status 2).
``--set key.path=value`` overrides apply before validation, so they are checked the same way.
"""
from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from clusteremu.base.errors import InputError
from clusteremu.emulator.faults import fault_schema
from clusteremu.emulator.models import MODELS, load_model
from clusteremu.emulator.network import DISTRIBUTIONS

from .catalog import builtin_path
from .schema import REQUIRED, ArrayOf, Field, SchemaErrors, Table, validate


def _check_latency(lat: dict[str, Any]) -> list[tuple[str, str]]:
    dist, lo = lat["dist"], lat["min_ms"]
    need = {"uniform": "max_ms", "exponential": "mean_ms", "lognormal": "median_ms"}.get(dist)
    if need is None:
        return []
    v = lat.get(need)
    if v is None:
        return [(need, f"required for a {dist} latency")]
    if dist == "uniform" and v < lo:
        return [(need, f"must be at least min_ms ({lo:g}), got {v:g}")]
    if dist != "uniform" and v <= lo:
        return [(need, f"must be greater than min_ms ({lo:g}), got {v:g}")]
    return []


LATENCY = Table(
    {
        "dist": Field("str", choices=DISTRIBUTIONS),
        "min_ms": Field("float", gt=0, doc="hard minimum; the smallest over all links is the lookahead"),
        "max_ms": Field("float", default=None, gt=0),
        "mean_ms": Field("float", default=None, gt=0),
        "median_ms": Field("float", default=None, gt=0),
        "sigma": Field("float", default=0.5, ge=0),
    },
    default={"dist": "uniform", "min_ms": 1.0, "max_ms": 3.0},
    check=_check_latency,
)

COMMON = {
    "scenario": Table(
        {
            "name": Field("str"),
            "description": Field("str", default=""),
            "model": Field("str", choices=lambda: tuple(sorted(MODELS))),
            "duration_s": Field("float", gt=0),
            "seed": Field("int", default=1, ge=0),
            "source": Field("str", default="", doc="where the experiment comes from"),
            "expect": Field("str", default="", doc="what the run should show"),
        },
        default=REQUIRED,
    ),
    "network": Table(
        {
            "latency": LATENCY,
            "links": ArrayOf(Table({"from": Field("str"), "to": Field("str"), "latency": LATENCY})),
        }
    ),
    "run": Table(
        {
            "segment_bytes": Field("int", default=16 * 1024 * 1024, ge=4096),
            "placement": Field("str", default="round_robin", choices=("round_robin", "hash")),
        }
    ),
}


@dataclass
class Scenario:
    """A validated scenario: ``data`` holds every section with defaults filled in."""

    data: dict[str, Any]
    source: str

    @property
    def name(self) -> str:
        return self.data["scenario"]["name"]

    @property
    def model(self) -> str:
        return self.data["scenario"]["model"]

    @property
    def duration_s(self) -> float:
        return self.data["scenario"]["duration_s"]

    @property
    def seed(self) -> int:
        return self.data["scenario"]["seed"]


def resolve(path_or_name: str) -> Path:
    """A scenario file path, or the path of the built-in scenario of that name."""
    p = Path(path_or_name)
    if p.suffix == ".toml" or p.exists():
        if not p.is_file():
            raise InputError(str(p), "no such scenario file")
        return p
    builtin = builtin_path(path_or_name)
    if builtin is None:
        raise InputError(path_or_name, "neither a scenario file nor the name of a built-in scenario (see `clusteremu scenarios`)")
    return builtin


def load_scenario(path_or_name: str, overrides: Iterable[str] = ()) -> Scenario:
    path = resolve(path_or_name)
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as err:
        raise InputError(str(path), f"not valid TOML: {err}") from None
    except OSError as err:
        raise InputError(str(path), f"cannot read: {err.strerror}") from None
    apply_overrides(raw, overrides)
    return validate_scenario(raw, str(path))


def validate_scenario(raw: dict[str, Any], source: str) -> Scenario:
    """Validate a scenario given as a dict (a parsed file, or one built in Python)."""
    schema = dict(COMMON)
    model_name = raw.get("scenario", {}).get("model") if isinstance(raw.get("scenario"), dict) else None
    model = None
    if model_name in MODELS:
        model = load_model(model_name)
        schema.update(model.sections)
    else:
        # Still validate the rest, so the user sees every problem at once.
        schema["faults"] = fault_schema()
    spec = Table(schema)
    try:
        data = validate(raw, spec)
    except SchemaErrors as err:
        lines = [f"{source}: {p}: {r}" for p, r in err.problems]
        raise InputError(source, "invalid scenario\n  " + "\n  ".join(lines)) from None
    if model is not None and hasattr(model, "check"):
        problems = model.check(data)
        if problems:
            lines = [f"{source}: {p}: {r}" for p, r in problems]
            raise InputError(source, "invalid scenario\n  " + "\n  ".join(lines))
    return Scenario(data, source)


def apply_overrides(raw: dict[str, Any], overrides: Iterable[str]) -> None:
    """Apply ``key.path=value`` overrides in place; the value is read as TOML (a bare word is a string)."""
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--set {item}", "expected key.path=value")
        try:
            value = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            value = text
        parts = key.strip().split(".")
        node: Any = raw
        for i, part in enumerate(parts[:-1]):
            if isinstance(node, list):
                node = _index(node, part, item)
                continue
            nxt = node.get(part)
            if nxt is None:
                nxt = node[part] = {}
            if not isinstance(nxt, (dict, list)):
                raise InputError(f"--set {item}", f"{'.'.join(parts[: i + 1])} is a value, not a table")
            node = nxt
        last = parts[-1]
        if isinstance(node, list):
            idx = _index_pos(node, last, item)
            node[idx] = value
        else:
            node[last] = copy.deepcopy(value)


def _index_pos(node: list, part: str, item: str) -> int:
    if not part.isdigit() or int(part) >= len(node):
        raise InputError(f"--set {item}", f"{part!r} is not an index of an array of {len(node)}")
    return int(part)


def _index(node: list, part: str, item: str) -> Any:
    return node[_index_pos(node, part, item)]
