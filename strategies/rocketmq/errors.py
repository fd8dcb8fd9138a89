"""The error the allocation strategies raise where RocketMQ throws (``IllegalArgumentException`` or a
``NullPointerException`` on a null argument).

Holds :class:`AllocationArgumentError`.
"""
from __future__ import annotations

__all__ = ["AllocationArgumentError"]


class AllocationArgumentError(ValueError):
    """An argument RocketMQ refuses.

    ``message`` is RocketMQ's own exception message where it has one (``"mqAll is null or mqAll empty"``,
    ``"illegal virtualNodeCnt :-1"``, ...); ``argument`` is the Java name of the offending argument or setting
    (``"currentCID"``, ``"mqAll"``, ``"cidAll"``, ``"virtualNodeCnt"``, ``"brokerMachineRoom"``,
    ``"consumerMachineRoom"``). ``str(err)`` is the message alone, as Java's ``getMessage()``.
    """

    def __init__(self, message: str, argument: str) -> None:
        self.message = message
        self.argument = argument
        super().__init__(message, argument)

    def __str__(self) -> str:
        return self.message
