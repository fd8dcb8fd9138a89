"""The built-in scenario library: every ``*.toml`` in the ``library`` folder of each registered system
(:attr:`clusteremu.emulator.systems.System.library`), listed by system."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from clusteremu.emulator import systems


@dataclass(frozen=True)
class BuiltinScenario:
    name: str
    path: str
    description: str
    duration_s: float
    model: str


def builtins() -> list[BuiltinScenario]:
    """Every built-in scenario, by system name and then file name."""
    out = []
    for sys_ in systems.systems().values():
        folder = sys_.library_dir()
        if folder is None:
            continue
        for p in sorted(folder.glob("*.toml")):
            head = tomllib.loads(p.read_text()).get("scenario", {})
            out.append(
                BuiltinScenario(
                    name=head.get("name", p.stem),
                    path=str(p),
                    description=head.get("description", ""),
                    duration_s=float(head.get("duration_s", 0)),
                    model=head.get("model", sys_.name),
                )
            )
    return out


def builtin_path(name: str) -> Path | None:
    for b in builtins():
        if b.name == name:
            return Path(b.path)
    return None
