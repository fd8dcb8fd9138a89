"""What a scheduling strategy returns (``SchedulingResult`` and ``SchedulingStatus``).

* :class:`SchedulingStatus` — ``SUCCESS``, ``FAIL_NOT_ENOUGH_RESOURCES``, ``FAIL_INVALID_TOPOLOGY``,
  ``FAIL_OTHER``.
* :class:`SchedulingResult` — status, ``message`` (set on success) and ``error_message`` (set on failure), as
  Storm builds them with ``SchedulingResult.success(msg)`` / ``failure(status, msg)``.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["SchedulingResult", "SchedulingStatus"]


class SchedulingStatus(enum.Enum):
    SUCCESS = "SUCCESS"
    FAIL_NOT_ENOUGH_RESOURCES = "FAIL_NOT_ENOUGH_RESOURCES"
    FAIL_INVALID_TOPOLOGY = "FAIL_INVALID_TOPOLOGY"
    FAIL_OTHER = "FAIL_OTHER"

    def is_success(self) -> bool:
        return self is SchedulingStatus.SUCCESS


@dataclass(frozen=True)
class SchedulingResult:
    """The outcome of ``IStrategy.schedule``."""

    status: SchedulingStatus
    message: str | None = None
    error_message: str | None = None

    @classmethod
    def success(cls, message: str | None = None) -> "SchedulingResult":
        return cls(SchedulingStatus.SUCCESS, message, None)

    @classmethod
    def failure(cls, status: SchedulingStatus, error_message: str) -> "SchedulingResult":
        if status is SchedulingStatus.SUCCESS:
            raise ValueError("a failure needs a failure status")
        return cls(status, None, error_message)

    def is_success(self) -> bool:
        return self.status is SchedulingStatus.SUCCESS

    def is_failure(self) -> bool:
        return self.status is not SchedulingStatus.SUCCESS

    def __str__(self) -> str:
        if self.is_success():
            return f"Status: {self.status.value} message: {self.message}"
        return f"Status: {self.status.value} error message: {self.error_message}"
