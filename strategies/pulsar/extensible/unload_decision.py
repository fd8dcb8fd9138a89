"""Unload decisions of the extensible load manager: ``Unload``, ``UnloadDecision`` and their labels/reasons.

Follows ``EXT/models/Unload.java`` and ``EXT/models/UnloadDecision.java`` (newest). A decision says: move
``bundle`` away from ``source_broker``, to ``destination_broker`` (a *transfer*) or to wherever placement
puts it (an *unload*, destination ``None``), for ``reason``.

:class:`UnloadDecision` is a named tuple ``(source_broker, bundle, destination_broker, reason)``, so it
compares equal to a plain tuple with the same values; :class:`Label` and :class:`Reason` are string enums
named as in Java (``Reason.Overloaded == "Overloaded"``), so they serialise as those names.

Decisions emitted by a shedder are always ``Success``; ``Skip`` and ``Failure`` label the cycles that
produced none (see :mod:`.unload_counter`).
"""
from __future__ import annotations

from enum import Enum
from typing import Any, NamedTuple

__all__ = ["Label", "Reason", "UnloadDecision"]


class Label(str, Enum):
    """Outcome of one shedding cycle or one decision (``UnloadDecision.Label``)."""

    Success = "Success"
    Skip = "Skip"
    Failure = "Failure"

    def __str__(self) -> str:
        return self.value


class Reason(str, Enum):
    """Why a bundle is moved (Success) or why a cycle moved nothing (Skip/Failure)."""

    Overloaded = "Overloaded"
    Underloaded = "Underloaded"
    Admin = "Admin"
    NoBundles = "NoBundles"
    CoolDown = "CoolDown"
    OutDatedData = "OutDatedData"
    NoLoadData = "NoLoadData"
    NoBrokers = "NoBrokers"
    HitCount = "HitCount"
    Unknown = "Unknown"

    def __str__(self) -> str:
        return self.value


class UnloadDecision(NamedTuple):
    """One successful decision: ``(source_broker, bundle, destination_broker or None, reason)``."""

    source_broker: str
    bundle: str
    destination_broker: str | None
    reason: Reason

    @property
    def label(self) -> Label:
        """Always :attr:`Label.Success` (only successful decisions are emitted)."""
        return Label.Success

    @property
    def is_transfer(self) -> bool:
        """Whether the bundle goes to a named broker (transfer) rather than through placement (unload)."""
        return self.destination_broker is not None

    def to_json(self) -> dict[str, Any]:
        """``{"sourceBroker", "serviceUnit", "destBroker" (null for an unload), "label", "reason"}``."""
        return {
            "sourceBroker": self.source_broker,
            "serviceUnit": self.bundle,
            "destBroker": self.destination_broker,
            "label": Label.Success.value,
            "reason": Reason(self.reason).value,
        }
