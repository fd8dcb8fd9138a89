"""Apache commons-lang3 helpers that the real systems call (RocketMQ's argument checks): ``StringUtils``."""
from __future__ import annotations

from .lang import is_whitespace

__all__ = ["is_blank", "is_empty"]


def is_empty(s: str | None) -> bool:
    """``StringUtils.isEmpty``: null or zero length."""
    return s is None or s == ""


def is_blank(s: str | None) -> bool:
    """``StringUtils.isBlank``: null, empty, or only characters for which ``Character.isWhitespace`` holds."""
    return s is None or all(is_whitespace(ch) for ch in s)
