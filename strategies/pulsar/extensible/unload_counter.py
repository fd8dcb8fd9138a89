"""``UnloadCounter``: the shedding outcome counters of the extensible load manager.

Follows ``EXT/models/UnloadCounter.java`` (newest). The breakdown table has a fixed set of cells —
Success × {Overloaded, Underloaded, Admin}, Skip × {HitCount, NoBundles, CoolDown, OutDatedData, NoLoadData,
NoBrokers, Unknown}, Failure × {Unknown} — and counting any other combination is an error, as the
``NullPointerException`` it is in Java. ``loadAvg``/``loadStd`` are the last cycle's mean and population
standard deviation of the brokers' ``weightedMaxEMA`` (fractions), 0 until a cycle gets that far.

Who counts what (as in Pulsar): ``TransferShedder`` counts its Skip and Failure outcomes and sets
``loadAvg``/``loadStd``; Success cells and ``unloadBrokerCount`` are counted by the unload scheduler once
a decision has been carried out (:meth:`UnloadCounter.update` with ``Label.Success`` and
:meth:`UnloadCounter.update_unload_broker_count`). Java's ``updatedAt`` wall-clock stamp is left out.
"""
from __future__ import annotations

from typing import Any, Mapping

from .breakdown import breakdown_json, read_breakdown
from .unload_decision import Label, Reason

__all__ = ["UnloadCounter"]

_CELLS: dict[Label, tuple[Reason, ...]] = {
    Label.Success: (Reason.Overloaded, Reason.Underloaded, Reason.Admin),
    Label.Skip: (
        Reason.HitCount,
        Reason.NoBundles,
        Reason.CoolDown,
        Reason.OutDatedData,
        Reason.NoLoadData,
        Reason.NoBrokers,
        Reason.Unknown,
    ),
    Label.Failure: (Reason.Unknown,),
}


class UnloadCounter:
    """Counts of shedding outcomes by (label, reason), plus the last load average and deviation."""

    def __init__(self) -> None:
        self.breakdown_counters: dict[Label, dict[Reason, int]] = {
            label: {reason: 0 for reason in reasons} for label, reasons in _CELLS.items()
        }
        self.load_avg = 0.0
        self.load_std = 0.0
        self.unload_broker_count = 0
        self.unload_bundle_count = 0

    def update(self, label: Label | str, reason: Reason | str) -> None:
        """Count one outcome; a Success also counts one unloaded bundle. ``KeyError`` for a cell the
        table does not have."""
        label, reason = Label(label), Reason(reason)
        cells = self.breakdown_counters[label]
        if reason not in cells:
            raise KeyError(f"UnloadCounter has no cell {label.value}/{reason.value}")
        if label is Label.Success:
            self.unload_bundle_count += 1
        cells[reason] += 1

    def update_load_data(self, load_avg: float, load_std: float) -> None:
        """Record the cycle's average and population standard deviation of ``weightedMaxEMA``."""
        self.load_avg = load_avg
        self.load_std = load_std

    def update_unload_broker_count(self, count: int) -> None:
        """Add the number of distinct source brokers of a completed unload round."""
        self.unload_broker_count += count

    def get(self, label: Label | str, reason: Reason | str) -> int:
        """The count in one cell (``getBreakdownCounters().get(label).get(reason)``)."""
        return self.breakdown_counters[Label(label)][Reason(reason)]

    # --- JSON state
    def to_json(self) -> dict[str, Any]:
        """``{"breakdownCounters": {label: {reason: n}}, "loadAvg", "loadStd", "unloadBrokerCount",
        "unloadBundleCount"}``."""
        return {
            "breakdownCounters": breakdown_json(self.breakdown_counters),
            "loadAvg": self.load_avg,
            "loadStd": self.load_std,
            "unloadBrokerCount": self.unload_broker_count,
            "unloadBundleCount": self.unload_bundle_count,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "UnloadCounter":
        """Inverse of :meth:`to_json` (missing entries read as 0)."""
        out = cls()
        read_breakdown(obj, out.breakdown_counters, Label, Reason, "UnloadCounter")
        out.load_avg = float(obj.get("loadAvg", 0.0))
        out.load_std = float(obj.get("loadStd", 0.0))
        out.unload_broker_count = int(obj.get("unloadBrokerCount", 0))
        out.unload_bundle_count = int(obj.get("unloadBundleCount", 0))
        return out
