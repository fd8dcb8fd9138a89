"""The breakdown table the extensible load manager's outcome counters share (``UnloadCounter``, ``SplitCounter``):
label → reason → count, over a fixed set of cells, and its JSON form ``{"breakdownCounters": {label: {reason: n}}}``.
"""
from __future__ import annotations

from enum import Enum
from typing import Any, Mapping, TypeVar

__all__ = ["breakdown_json", "read_breakdown"]

L = TypeVar("L", bound=Enum)
R = TypeVar("R", bound=Enum)


def breakdown_json(counters: Mapping[L, Mapping[R, int]]) -> dict[str, dict[str, int]]:
    """The table as Pulsar's JSON names it: label and reason names as keys."""
    return {label.value: {reason.value: n for reason, n in cells.items()} for label, cells in counters.items()}


def read_breakdown(obj: Mapping[str, Any], counters: dict[L, dict[R, int]], label_type: type[L],
                   reason_type: type[R], owner: str) -> None:
    """Set the cells ``obj["breakdownCounters"]`` names (missing ones stay as they are); a cell the table does not
    have is a ``KeyError`` naming ``owner``."""
    for label_name, cells in dict(obj.get("breakdownCounters", {})).items():
        for reason_name, n in dict(cells).items():
            label, reason = label_type(label_name), reason_type(reason_name)
            if reason not in counters[label]:
                raise KeyError(f"{owner} has no cell {label.value}/{reason.value}")
            counters[label][reason] = int(n)
