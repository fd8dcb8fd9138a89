"""Key paths into a raw scenario: ``cluster.brokers``, ``faults.0.at`` (a number indexes an array), and keys that
hold dots themselves in double quotes, as TOML writes them (``workload.topologies.0."topology.priority"``, Storm's
config keys). :func:`split_path` parses one; :func:`set_path` sets the value at one, used by ``--set`` overrides
(:func:`clusteremu.scenarios.loader.apply_overrides`) and by the scenario builder of
:mod:`clusteremu.emulator.testing`."""
from __future__ import annotations

import copy
from typing import Any

from clusteremu.base.errors import InputError

__all__ = ["set_path", "split_path"]


def split_path(key: str, where: str | None = None) -> list[str]:
    """The parts of a key path: split at the dots outside double quotes, quotes removed; ``InputError`` under
    ``where`` (default: the key) for an empty part or an unclosed quote."""
    where = key if where is None else where
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    was_quoted = False
    for ch in key:
        if ch == '"':
            quoted = not quoted
            was_quoted = True
        elif ch == "." and not quoted:
            parts.append("".join(current) if current or was_quoted else "")
            current, was_quoted = [], False
        else:
            current.append(ch)
    if quoted:
        raise InputError(where, "unclosed double quote in the key path")
    parts.append("".join(current) if current or was_quoted else "")
    if not key or any(p == "" for p in parts):
        raise InputError(where, "expected a dotted key path such as workload.timer_mode")
    return parts


def set_path(raw: dict[str, Any], key: str, value: Any, where: str | None = None) -> None:
    """Set ``key`` (a dotted path) in ``raw`` to a copy of ``value``, creating missing tables; ``InputError``
    under ``where`` (default: the key) for an empty part, a path through a value, or an index out of range."""
    where = key if where is None else where
    parts = split_path(key, where)
    node: Any = raw
    for i, part in enumerate(parts[:-1]):
        if isinstance(node, list):
            node = node[_index(node, part, where)]
            continue
        nxt = node.get(part)
        if nxt is None:
            nxt = node[part] = {}
        if not isinstance(nxt, (dict, list)):
            raise InputError(where, f"{'.'.join(parts[: i + 1])} is a value, not a table")
        node = nxt
    if isinstance(node, list):
        node[_index(node, parts[-1], where)] = copy.deepcopy(value)
    else:
        node[parts[-1]] = copy.deepcopy(value)


def _index(node: list, part: str, where: str) -> int:
    if not part.isdigit() or int(part) >= len(node):
        raise InputError(where, f"{part!r} is not an index of an array of {len(node)}")
    return int(part)
