"""Split decisions of the extensible load manager: ``Split``, ``SplitDecision`` and their labels/reasons.

Follows ``EXT/models/Split.java`` and ``EXT/models/SplitDecision.java`` (newest). A :class:`Split` says: split
``service_unit`` (a bundle name), owned by ``source_broker``, into the child ranges of
``split_service_unit_to_dest_broker`` (child range → destination broker; the split scheduler names none, so every
child stays with the source). A :class:`SplitDecision` wraps one with its :class:`Label` and :class:`Reason`.

:class:`Label` and :class:`Reason` are string enums named as in Java (``Reason.MsgRate == "MsgRate"``), so they
serialise as those names. Unlike the shedder's decisions, the split strategy only ever returns ``Success``
decisions; ``Skip``/``Failure`` are counted (:mod:`.split_counter`), not returned.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping

__all__ = ["Split", "SplitDecision", "SplitLabel", "SplitReason"]


class SplitLabel(str, Enum):
    """Outcome of one split decision (``SplitDecision.Label``)."""

    Success = "Success"
    Skip = "Skip"
    Failure = "Failure"

    def __str__(self) -> str:
        return self.value


class SplitReason(str, Enum):
    """Why a bundle is split (Success), skipped (``Balanced``) or failed (``Unknown``)."""

    Topics = "Topics"
    Sessions = "Sessions"
    MsgRate = "MsgRate"
    Bandwidth = "Bandwidth"
    Admin = "Admin"
    Balanced = "Balanced"
    Unknown = "Unknown"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Split:
    """``Split(serviceUnit, sourceBroker, splitServiceUnitToDestBroker)``; a child's destination is None when the
    split names none (``Optional.empty()``)."""

    service_unit: str
    source_broker: str
    split_service_unit_to_dest_broker: Mapping[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.service_unit:
            raise ValueError("Split needs a service unit")
        # frozen and hashable: keep the children as a sorted tuple of pairs behind a read-only mapping
        object.__setattr__(self, "split_service_unit_to_dest_broker",
                           _FrozenMap(sorted(dict(self.split_service_unit_to_dest_broker).items())))

    @property
    def children(self) -> tuple[str, ...]:
        """The child ranges (``"0x..._0x..."``), in hash order."""
        return tuple(self.split_service_unit_to_dest_broker)

    def to_json(self) -> dict[str, Any]:
        return {"serviceUnit": self.service_unit, "sourceBroker": self.source_broker,
                "splitServiceUnitToDestBroker": dict(self.split_service_unit_to_dest_broker)}


@dataclass(frozen=True)
class SplitDecision:
    """``SplitDecision``: the split with its label and reason."""

    split: Split
    label: SplitLabel
    reason: SplitReason

    def to_json(self) -> dict[str, Any]:
        return {"split": self.split.to_json(), "label": self.label.value, "reason": self.reason.value}


class _FrozenMap(Mapping[str, "str | None"]):
    """A small immutable, hashable mapping (Java's ``Map.of`` compares by content)."""

    def __init__(self, items: list[tuple[str, str | None]]) -> None:
        self._items = tuple(items)
        self._dict = dict(items)

    def __getitem__(self, key: str) -> str | None:
        return self._dict[key]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._dict)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self._dict) == dict(other)

    def __repr__(self) -> str:
        return repr(self._dict)
