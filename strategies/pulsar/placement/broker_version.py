"""Broker version strings as ``BrokerVersionFilter`` reads them (``com.github.zafarkhaja.semver.Version``).

API::

    v = BrokerVersion.parse("3.0.1-SNAPSHOT")      # ValueError if not a semantic version
    v == BrokerVersion.parse("3.0.1-SNAPSHOT+b7")  # True: equality ignores build metadata (jsemver's equals)
    BrokerVersion.parse("3.1.0") > v               # precedence of semantic versioning 2.0
    v.build_aware_key()                            # sort key of Version.BUILD_AWARE_ORDER

Parsing is strict semantic versioning 2.0 (``MAJOR.MINOR.PATCH``, optional ``-pre.release`` and ``+build``;
no leading zeros in numeric identifiers), as ``Version.valueOf`` is: ``"3.0"`` or ``"v3.0.0"`` are invalid,
which makes the filter give up and the pipeline restore the candidates.

Ordering: ``compareTo`` compares the normal version, then pre-release (a pre-release is lower than none;
identifiers pairwise, numeric ones numerically and below alphanumeric ones, alphanumeric ones by ASCII; a
shorter list of equal identifiers is lower). ``BUILD_AWARE_ORDER`` additionally breaks ties by build
metadata, a version *with* build metadata above one without.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["BrokerVersion"]

_NUM = r"0|[1-9]\d*"
_ALNUM = r"\d*[A-Za-z-][0-9A-Za-z-]*"
_SEMVER = re.compile(
    rf"(?P<major>{_NUM})\.(?P<minor>{_NUM})\.(?P<patch>{_NUM})"
    rf"(?:-(?P<pre>(?:{_NUM}|{_ALNUM})(?:\.(?:{_NUM}|{_ALNUM}))*))?"
    r"(?:\+(?P<build>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
)


def _identifier_key(identifier: str) -> tuple[int, int, str]:
    if identifier.isdigit():
        return (0, int(identifier), "")
    return (1, 0, identifier)


def _identifiers_key(identifiers: tuple[str, ...]) -> tuple[tuple[int, int, str], ...]:
    return tuple(_identifier_key(i) for i in identifiers)


@dataclass(frozen=True)
class BrokerVersion:
    """A parsed semantic version; ``==``/``<`` follow jsemver's ``equals``/``compareTo`` (build ignored)."""

    major: int
    minor: int
    patch: int
    pre_release: tuple[str, ...] = ()
    build: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> "BrokerVersion":
        """``Version.valueOf``; ``ValueError`` for anything that is not a semantic version."""
        m = _SEMVER.fullmatch(text)
        if m is None:
            raise ValueError(f"invalid semantic version {text!r}")
        pre = tuple(m["pre"].split(".")) if m["pre"] else ()
        build = tuple(m["build"].split(".")) if m["build"] else ()
        return cls(int(m["major"]), int(m["minor"]), int(m["patch"]), pre, build)

    def _precedence(self) -> tuple:
        # No pre-release ranks above any pre-release of the same normal version.
        pre = (1,) if not self.pre_release else (0, _identifiers_key(self.pre_release))
        return (self.major, self.minor, self.patch, pre)

    def build_aware_key(self) -> tuple:
        """Sort key of ``Version.BUILD_AWARE_ORDER`` (build metadata ranks a version higher)."""
        build = (0,) if not self.build else (1, _identifiers_key(self.build))
        return (self._precedence(), build)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BrokerVersion):
            return NotImplemented
        return self._precedence() == other._precedence()

    def __hash__(self) -> int:
        return hash(self._precedence())

    def __lt__(self, other: "BrokerVersion") -> bool:
        return self._precedence() < other._precedence()

    def __le__(self, other: "BrokerVersion") -> bool:
        return self._precedence() <= other._precedence()

    def __gt__(self, other: "BrokerVersion") -> bool:
        return self._precedence() > other._precedence()

    def __ge__(self, other: "BrokerVersion") -> bool:
        return self._precedence() >= other._precedence()

    def __str__(self) -> str:
        out = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre_release:
            out += "-" + ".".join(self.pre_release)
        if self.build:
            out += "+" + ".".join(self.build)
        return out
