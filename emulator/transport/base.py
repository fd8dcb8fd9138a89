"""The interface of in-process workers to the coordinator (worker processes run their windows in a mesh)."""
from __future__ import annotations

from typing import Protocol

from ..messages import Message
from ..trace.writer import WriterSummary


class WorkerLink(Protocol):
    """The coordinator's handle on one worker."""

    #: names of the agents this worker hosts
    agents: list[str]

    def next_time(self) -> float:
        """The worker's earliest pending event time before the first window."""

    def advance(self, until: float, inbound: list[Message], since: float) -> None:
        """Start the window up to ``until`` with the messages due in it (canonical delivery order); ``since`` is
        the end of the previous window (the worker may have been idle, and skipped, since then)."""

    def result(self) -> tuple[list[Message], float, int]:
        """Wait for the window: (messages sent, next event time, events written)."""

    def finish(self, until: float | None = None) -> WriterSummary:
        """Close the worker's trace and return its summary; ``until``: the run reached its end there, and its
        agents have their last word first (``Worker.finish``)."""
