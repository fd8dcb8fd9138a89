"""Loading and validating scenarios (DESIGN.md principle 7).

A scenario is a TOML file (or a built-in scenario's name). Everything is validated before anything runs:
unknown keys, wrong types, out-of-range values and unknown strategy names are refused with an
:class:`clusteremu.base.errors.InputError` naming the file, the key path and the reason (exit status 2).
``--set key.path=value`` overrides apply before validation, so they are checked the same way.
"""
from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from clusteremu.base.errors import InputError
from clusteremu.emulator.faults import fault_schema
from clusteremu.emulator.models import load_model, model_names
from clusteremu.emulator.network import DISTRIBUTIONS

from .catalog import builtin_path
from .paths import set_path
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

#: The longest virtual time a run may cover: a year. Beyond it a run is a mistake (``1e300``), not an experiment.
MAX_DURATION_S = 365 * 24 * 3600.0

COMMON = {
    "scenario": Table(
        {
            "name": Field("str"),
            "description": Field("str", default=""),
            "model": Field("str", choices=model_names),
            "duration_s": Field("float", gt=0, le=MAX_DURATION_S,
                                doc=f"virtual seconds to run (at most {MAX_DURATION_S:g}: a year)"),
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


def read_raw(path: Path) -> dict[str, Any]:
    """The parsed TOML of a scenario file; ``InputError`` naming the file for what cannot be read or parsed."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise InputError(str(path), f"not valid TOML: {err}") from None
    except UnicodeDecodeError as err:
        raise InputError(str(path), f"not UTF-8 text (byte {err.start}: {err.reason}); TOML files are UTF-8") from None
    except OSError as err:
        raise InputError(str(path), f"cannot read: {err.strerror}") from None


def load_scenario(path_or_name: str, overrides: Iterable[str] = ()) -> Scenario:
    """The validated scenario of a file or a built-in name, with ``--set`` style overrides applied."""
    path = resolve(path_or_name)
    raw = read_raw(path)
    apply_overrides(raw, overrides)
    return validate_scenario(raw, str(path))


def validate_scenario(raw: dict[str, Any], source: str) -> Scenario:
    """Validate a scenario given as a dict (a parsed file, or one built in Python)."""
    schema = dict(COMMON)
    model_name = raw.get("scenario", {}).get("model") if isinstance(raw.get("scenario"), dict) else None
    model = None
    if model_name in model_names():
        model = load_model(model_name)
        schema.update(model.sections)
    elif isinstance(model_name, str):
        # An unknown model: its sections cannot be judged, so only the header is (one precise message, not a
        # list of "unknown key" errors for sections the right model would have accepted).
        header = {"scenario": raw.get("scenario")}
        try:
            validate(header, Table({"scenario": COMMON["scenario"]}))
        except SchemaErrors as err:
            lines = [f"{source}: {p}: {r}" for p, r in err.problems]
            raise InputError(source, "invalid scenario\n  " + "\n  ".join(lines)) from None
    else:
        # No model named: still validate the rest, so the user sees every problem at once.
        schema["faults"] = fault_schema()
    spec = Table(schema)
    source_path = Path(source)
    base_dir = source_path.parent if source_path.is_file() else None
    try:
        data = validate(raw, spec, base_dir=base_dir)
    except SchemaErrors as err:
        lines = [f"{source}: {p}: {r}" for p, r in err.problems]
        raise InputError(source, "invalid scenario\n  " + "\n  ".join(lines)) from None
    if model is not None:
        problems = model.check(data) if hasattr(model, "check") else []
        if not problems and "faults" in data:
            problems = fault_target_problems(data, [spec.name for spec in model.agents(data)])
        if problems:
            lines = [f"{source}: {p}: {r}" for p, r in problems]
            raise InputError(source, "invalid scenario\n  " + "\n  ".join(lines))
    return Scenario(data, source)


def fault_target_problems(data: dict[str, Any], agents: list[str]) -> list[tuple[str, str]]:
    """Faults that cannot happen as written: an agent glob that matches no agent of the run (a crash of
    ``broker-9`` in a 6-broker cluster), or a start after the scenario's end."""
    problems = []
    end = data["scenario"]["duration_s"]
    shown = ", ".join(agents[:8]) + (f", ... ({len(agents)} agents)" if len(agents) > 8 else "")
    for i, f in enumerate(data["faults"]):
        if f["at"] >= end:
            problems.append((f"faults[{i}].at", f"{f['at']:g} s is not before the scenario's end "
                                                f"(scenario.duration_s = {end:g} s)"))
        globs = [("agents", g) for g in f.get("agents") or ()]
        for side, group in enumerate(f.get("between") or ()):
            globs += [(f"between[{side}]", g) for g in group]
        for key, glob in globs:
            if not any(fnmatch.fnmatchcase(a, glob) for a in agents):
                problems.append((f"faults[{i}].{key}", f"{glob!r} matches no agent of this scenario ({shown})"))
    return problems


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
        set_path(raw, key.strip(), value, where=f"--set {item}")
