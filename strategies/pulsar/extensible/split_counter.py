"""``SplitCounter``: the bundle-split outcome counters of the extensible load manager.

Follows ``EXT/models/SplitCounter.java`` (newest). The breakdown table has a fixed set of cells —
Success × {Topics, Sessions, MsgRate, Bandwidth, Admin}, Skip × {Balanced}, Failure × {Unknown} — and counting
any other combination is an error (a ``NullPointerException`` in Java). ``split_count`` counts the Success
outcomes (``brk_lb_bundles_split_total``). Java's ``updatedAt`` wall-clock stamp is left out.

Who counts what (as in Pulsar): the split strategy counts its ``Failure``/``Unknown`` outcomes as it meets them;
a ``Success`` is counted by the split manager once the split has completed (the parent's record left the
channel's in-flight states), with the decision's reason.
"""
from __future__ import annotations

from typing import Any, Mapping

from .breakdown import breakdown_json, read_breakdown
from .split_decision import SplitDecision, SplitLabel, SplitReason

__all__ = ["SplitCounter"]

_CELLS: dict[SplitLabel, tuple[SplitReason, ...]] = {
    SplitLabel.Success: (SplitReason.Topics, SplitReason.Sessions, SplitReason.MsgRate, SplitReason.Bandwidth,
                         SplitReason.Admin),
    SplitLabel.Skip: (SplitReason.Balanced,),
    SplitLabel.Failure: (SplitReason.Unknown,),
}


class SplitCounter:
    """Counts of split outcomes by (label, reason), and the number of bundles split."""

    def __init__(self) -> None:
        self.breakdown_counters: dict[SplitLabel, dict[SplitReason, int]] = {
            label: {reason: 0 for reason in reasons} for label, reasons in _CELLS.items()
        }
        self.split_count = 0

    def update(self, label: SplitLabel | str, reason: SplitReason | str) -> None:
        """Count one outcome; a Success also counts one split bundle. ``KeyError`` for a cell the table lacks."""
        label, reason = SplitLabel(label), SplitReason(reason)
        cells = self.breakdown_counters[label]
        if reason not in cells:
            raise KeyError(f"SplitCounter has no cell {label.value}/{reason.value}")
        if label is SplitLabel.Success:
            self.split_count += 1
        cells[reason] += 1

    def update_decision(self, decision: SplitDecision) -> None:
        """``update(SplitDecision)``: count a decision by its own label and reason."""
        self.update(decision.label, decision.reason)

    def get(self, label: SplitLabel | str, reason: SplitReason | str) -> int:
        """The count in one cell."""
        return self.breakdown_counters[SplitLabel(label)][SplitReason(reason)]

    def to_json(self) -> dict[str, Any]:
        """``{"breakdownCounters": {label: {reason: n}}, "splitCount": n}``."""
        return {
            "breakdownCounters": breakdown_json(self.breakdown_counters),
            "splitCount": self.split_count,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "SplitCounter":
        """Inverse of :meth:`to_json` (missing entries read as 0)."""
        out = cls()
        read_breakdown(obj, out.breakdown_counters, SplitLabel, SplitReason, "SplitCounter")
        out.split_count = int(obj.get("splitCount", 0))
        return out
