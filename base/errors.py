"""Errors that the CLI maps to exit statuses.

``InputError`` is bad input from the user (a scenario, a snapshot, a flag): exit status 2, and the message
names the file, the key or JSON path, and the reason. ``RunFailure`` is a failure of the run itself: exit 1.
"""
from __future__ import annotations


class InputError(Exception):
    """Bad input: the CLI prints ``str(err)`` and exits with status 2.

    ``where`` names the file (and, when known, the key path inside it); ``reason`` says what is wrong.
    """

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        # args stay (where, reason) so that copies made with type(err)(*err.args) (SimPy does) keep working
        super().__init__(where, reason)

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}" if self.where else self.reason


class RunFailure(Exception):
    """The run itself failed (a worker died, an agent raised): exit status 1."""
