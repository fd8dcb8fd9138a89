"""An optional recorder of node sortings, so that each one can be explained (``decide --explain``).

* :class:`SortRecorder` — collects one record per sorting, in the order the sortings were made:

  ``{"executor": {"component", "index"} or None,
     "racks": [item, ...],
     "hosts": {"<rack>": [item, ...]},
     "nodes": {"<host>": [item, ...]}}``

  with ``item = {"id", "available": {"cpu", "memory_mb", "generic": {}}, "min_percent", "avg_percent"}``,
  percentages in 0..100, each list in the order the sorter used. Hosts and nodes appear only for the racks
  and hosts the scheduling actually reached (Storm sorts them lazily); a record is therefore complete once
  the strategy has returned. ``available`` is what the percentages were computed from: generic resources the
  executor does not request are shown negated (the rare-resource rule), as the sorter used them.
"""
from __future__ import annotations

from typing import Any

__all__ = ["SortRecorder"]


class SortRecorder:
    """Collects sort records; ``limit`` (optional) stops recording after that many sortings."""

    def __init__(self, limit: int | None = None) -> None:
        self.sorts: list[dict[str, Any]] = []
        self.limit = limit
        self.dropped = 0

    def start(self, executor: dict[str, Any] | None, racks: list[dict[str, Any]]) -> dict[str, Any] | None:
        """A new record for a sorting for ``executor`` with its sorted ``racks``; the sorter fills in hosts and
        nodes as it reaches them. ``None`` once ``limit`` records are kept."""
        if self.limit is not None and len(self.sorts) >= self.limit:
            self.dropped += 1
            return None
        record: dict[str, Any] = {"executor": executor, "racks": racks, "hosts": {}, "nodes": {}}
        self.sorts.append(record)
        return record
