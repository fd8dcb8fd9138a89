"""The built-in scenario library: every ``*.toml`` under ``scenarios/library/``."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

LIBRARY = Path(__file__).parent / "library"


@dataclass(frozen=True)
class BuiltinScenario:
    name: str
    path: str
    description: str
    duration_s: float
    model: str


def builtins() -> list[BuiltinScenario]:
    out = []
    for p in sorted(LIBRARY.glob("*.toml")):
        head = tomllib.loads(p.read_text()).get("scenario", {})
        out.append(
            BuiltinScenario(
                name=head.get("name", p.stem),
                path=str(p),
                description=head.get("description", ""),
                duration_s=float(head.get("duration_s", 0)),
                model=head.get("model", ""),
            )
        )
    return out


def builtin_path(name: str) -> Path | None:
    for b in builtins():
        if b.name == name:
            return Path(b.path)
    return None
