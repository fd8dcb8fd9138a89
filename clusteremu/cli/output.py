"""Terminal output of the verbs: a rich console that never cuts a name when the output is not a terminal."""
from __future__ import annotations

import sys

from rich.console import Console

__all__ = ["console_for_output"]


#: Width of a console whose output is not a terminal: wider than any table, so that none folds or cuts a name
#: (tables take the width of their content, not this).
UNBOUNDED = 100_000


def console_for_output() -> Console:
    """A rich console; when the output is not a terminal (a pipe, a file), one that never folds or cuts a name."""
    return Console() if sys.stdout.isatty() else Console(width=UNBOUNDED)
