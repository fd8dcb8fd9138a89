"""The layers of docs/architecture.md, checked on every module's imports, including the imports that registries
make through ``"module:attribute"`` strings.

    base        clusteremu.base                     imports nothing of the project
    kernel      clusteremu.emulator, .scenarios     base, kernel
    strategies  clusteremu.strategies.<system>      base, the same system's strategies
    agents      clusteremu.agents.<system>          base, kernel, strategies, the same system's agents
    tools       clusteremu.tools (generic)          base, kernel, generic tools; systems only through the registry
    analyses    clusteremu.tools.*<system>*         base, kernel, generic tools, the same system's strategies/analyses
    systems     clusteremu.systems.<system>         anything (the plug-in declarations and decide adapters)
    cli         clusteremu.cli, clusteremu          anything but a system's own modules (the registry reaches those)

A module belongs to a system when a part of its dotted name starts with the system's name
(``clusteremu.tools.analysis.pulsar_rating`` is Pulsar's). The kernel must also not *name* a modelled system in
its code (identifiers and strings other than docstrings).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("base", "emulator", "strategies", "agents", "scenarios", "tools", "systems", "clusteremu")
#: Systems that the kernel must not name (the heartbeat model is the kernel's own demonstration model).
MODELLED = ("pulsar", "rocketmq", "storm")
SYSTEMS = MODELLED + ("heartbeat",)
#: The entry point group's name is spelled like a package but names none.
ENTRY_POINT_GROUP = "clusteremu.systems"
#: A stop-the-world storm of GC pauses is a JVM mechanism, not Apache Storm.
GC_STORM = re.compile(r"gc[ _-]?storm", re.IGNORECASE)
#: A string naming a module of the project (``"clusteremu.agents.pulsar.broker:Broker"``); logger names such as
#: ``"clusteremu.hub"`` are not modules.
STRING_TARGET = re.compile(r"^clusteremu\.(?:base|emulator|strategies|agents|scenarios|tools|systems|cli)"
                           r"(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?::[A-Za-z_][A-Za-z0-9_.]*)?$")


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if parts[0] == "clusteremu":
        return ".".join(parts)
    return ".".join(["clusteremu", *parts])


def modules() -> dict[str, Path]:
    out = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            out[module_name(path)] = path
    return out


def system_of(module: str) -> str | None:
    for part in module.split(".")[1:]:
        for name in SYSTEMS:
            if part.startswith(name):
                return name
    return None


def layer_of(module: str) -> str:
    top = module.split(".")[1] if "." in module else ""
    if top == "base":
        return "base"
    if top in ("emulator", "scenarios"):
        return "kernel"
    if top in ("strategies", "agents", "systems"):
        return top
    if top == "tools":
        return "analyses" if system_of(module) else "tools"
    return "cli"


@dataclass(frozen=True)
class Import:
    target: str
    line: int
    via_string: bool


def resolve_relative(module: str, is_package: bool, level: int, name: str | None) -> str:
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join(base + ([name] if name else []))


def imports_of(module: str, path: Path) -> list[Import]:
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    out: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [Import(a.name, node.lineno, False) for a in node.names if a.name.startswith("clusteremu")]
        elif isinstance(node, ast.ImportFrom):
            target = resolve_relative(module, is_package, node.level, node.module) if node.level else node.module
            if target and target.startswith("clusteremu"):
                if target in ("clusteremu", "clusteremu.strategies", "clusteremu.agents", "clusteremu.tools"):
                    out += [Import(f"{target}.{a.name}", node.lineno, False) for a in node.names]
                else:
                    out.append(Import(target, node.lineno, False))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and STRING_TARGET.match(node.value)
              and node.value != ENTRY_POINT_GROUP):
            out.append(Import(node.value.partition(":")[0], node.lineno, True))
    return out


def allowed(src: str, dst: str) -> bool:
    """May module ``src`` import module ``dst``?"""
    if dst in ("clusteremu", "clusteremu.base") or dst.startswith("clusteremu.base."):
        return dst != "clusteremu" or layer_of(src) in ("cli", "systems")
    s_layer, d_layer = layer_of(src), layer_of(dst)
    s_sys, d_sys = system_of(src), system_of(dst)
    if s_layer == "base":
        return False
    if s_layer == "kernel":
        return d_layer == "kernel"
    if s_layer == "strategies":
        return d_layer == "strategies" and (d_sys is None or d_sys == s_sys)
    if s_layer == "agents":
        if d_layer in ("kernel",):
            return True
        if d_layer in ("strategies", "agents"):
            return d_sys is None or d_sys == s_sys
        return False
    if s_layer == "tools":
        return d_layer in ("kernel", "tools")
    if s_layer == "analyses":
        if d_layer in ("kernel", "tools"):
            return True
        return d_layer in ("analyses", "strategies") and d_sys == s_sys
    if s_layer == "systems":
        return True
    # cli
    return d_layer in ("kernel", "tools", "cli")


def violations(mods: dict[str, Path]) -> list[str]:
    found = []
    for module, path in mods.items():
        for imp in imports_of(module, path):
            if not allowed(module, imp.target):
                how = "names in a string" if imp.via_string else "imports"
                found.append(f"{path.relative_to(ROOT)}:{imp.line}: {module} ({layer_of(module)}) {how} "
                             f"{imp.target} ({layer_of(imp.target)})")
    return found


def test_every_module_imports_only_from_the_layers_below_it():
    assert violations(modules()) == []


def code_names(path: Path) -> list[tuple[int, str]]:
    """Identifiers and non-docstring strings of a module, with their lines."""
    tree = ast.parse(path.read_text(), str(path))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            out.append((node.lineno, node.attr))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            out.append((node.lineno, node.value))
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.append((node.lineno, node.name))
    return out


def test_the_kernel_and_the_generic_tools_name_no_modelled_system():
    # (the CLI may: its help says what the product emulates)
    named = []
    for module, path in modules().items():
        if layer_of(module) not in ("kernel", "tools"):
            continue
        for line, text in code_names(path):
            if any(name in GC_STORM.sub("", text).lower() for name in MODELLED):
                named.append(f"{path.relative_to(ROOT)}:{line}: {text!r}")
    assert named == []


@pytest.mark.parametrize("src, dst, ok", [
    ("clusteremu.emulator.runner", "clusteremu.agents.pulsar.broker", False),
    ("clusteremu.emulator.runner", "clusteremu.tools.analysis", False),
    ("clusteremu.emulator.runner", "clusteremu.scenarios.loader", True),
    ("clusteremu.strategies.storm.scheduler", "clusteremu.strategies.pulsar.config", False),
    ("clusteremu.strategies.storm.scheduler", "clusteremu.base.java", True),
    ("clusteremu.strategies.storm.scheduler", "clusteremu.emulator.agent", False),
    ("clusteremu.agents.rocketmq.consumer", "clusteremu.strategies.rocketmq.registry", True),
    ("clusteremu.agents.rocketmq.consumer", "clusteremu.agents.pulsar.broker", False),
    ("clusteremu.agents.rocketmq.consumer", "clusteremu.tools.report", False),
    ("clusteremu.tools.compare", "clusteremu.tools.analysis.pulsar_rating", False),
    ("clusteremu.tools.analysis.pulsar_rating", "clusteremu.tools.compare", True),
    ("clusteremu.cli.decide", "clusteremu.systems.pulsar.decide", False),
    ("clusteremu.systems.pulsar.decide", "clusteremu.cli.decide", True),
    ("clusteremu.base.java.collections", "clusteremu.emulator.agent", False),
])
def test_the_rules_themselves(src, dst, ok):
    assert allowed(src, dst) is ok


def test_a_kernel_module_that_imports_a_system_is_caught(tmp_path):
    bad = tmp_path / "emulator" / "sneaky.py"
    bad.parent.mkdir()
    bad.write_text('from clusteremu.agents.pulsar import broker\nFACTORY = "clusteremu.tools.analysis.pulsar:X"\n')
    found = [f"{i.target} {i.via_string}" for i in imports_of("clusteremu.emulator.sneaky", bad)
             if not allowed("clusteremu.emulator.sneaky", i.target)]
    assert found == ["clusteremu.agents.pulsar False", "clusteremu.tools.analysis.pulsar True"]
