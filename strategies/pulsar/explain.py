"""Why a shedder decided what it decided: the figures it computed and the rule that fired, in the words of
Pulsar's own log lines for that strategy.

A shedder has an ``explain`` attribute, ``None`` by default (the emulated leader never sets it, and then no record
is made). A caller that wants the reasons sets it to an :class:`Explain` before calling
``find_bundles_for_unloading``; the shedder appends one :class:`ExplainRecord` per step of its reasoning:
a cluster-wide figure (``broker is None``: the average, the thresholds) or one broker's figures and the rule that
fired for it (``rule``: a short stable name such as ``"overloaded"``, ``"below-threshold"``), each with ``log``,
the line Pulsar's class logs at that point (``{}`` placeholders filled as Java's SLF4J does, ``%``-formats as
``String.format`` does). Where Pulsar logs nothing (a silent skip) the line says so in the same style and
``pulsar_log`` is ``False``.

Contents: :class:`ExplainRecord`, :class:`Explain`, :func:`java_str` (``String.valueOf`` of a value), :func:`slf4j`
(SLF4J's ``{}`` substitution), :func:`percent` (ThresholdShedder's ``toPercentage``: ``(int) (usage * 100)``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from clusteremu.base.java import double_to_int

__all__ = ["Explain", "ExplainRecord", "explain_few_bundles", "java_str", "percent", "slf4j"]


@dataclass
class ExplainRecord:
    """One step of a shedder's reasoning (see the module docstring)."""

    broker: str | None
    rule: str
    log: str
    figures: dict[str, Any] = field(default_factory=dict)
    pulsar_log: bool = True

    def to_json(self) -> dict[str, Any]:
        """``{"broker", "rule", "log", "figures", "pulsarLog"}`` (non-finite figures as Jackson writes them)."""
        return {
            "broker": self.broker,
            "rule": self.rule,
            "log": self.log,
            "figures": {k: _json_value(v) for k, v in self.figures.items()},
            "pulsarLog": self.pulsar_log,
        }


class Explain(list[ExplainRecord]):
    """The records of one ``find_bundles_for_unloading`` call, in the order the shedder made them."""

    def add(self, broker: str | None, rule: str, log: str, pulsar_log: bool = True, **figures: Any) -> None:
        """Append a record; ``figures`` are keyword arguments named as Pulsar's variables."""
        self.append(ExplainRecord(broker, rule, log, dict(figures), pulsar_log))


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return value


def java_str(value: Any) -> str:
    """``String.valueOf(value)`` as SLF4J prints an argument: ``Double.toString`` for floats (``90.0``, ``1.0E7``,
    ``NaN``), ``true``/``false``, ``[a, b]`` for lists, ``{k=v}`` for maps, ``null`` for ``None``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value == 0 or 1e-3 <= abs(value) < 1e7:
            return repr(value)
        # computerized scientific notation, with the shortest digits (Double.toString since JDK 19)
        digits, exponent = _shortest_digits(abs(value))
        mantissa = digits[0] + "." + (digits[1:] or "0")
        return f"{'-' if value < 0 else ''}{mantissa}E{exponent}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{java_str(k)}={java_str(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    return str(value)


def _shortest_digits(value: float) -> tuple[str, int]:
    """The shortest round-trip decimal digits of a positive ``value`` and the exponent of the first one."""
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits))
    return text, exponent + len(text) - 1


def slf4j(pattern: str, *args: Any) -> str:
    """SLF4J's ``MessageFormatter``: each ``{}`` takes the next argument (:func:`java_str`)."""
    parts = pattern.split("{}")
    out = [parts[0]]
    for i, part in enumerate(parts[1:]):
        out.append(java_str(args[i]) if i < len(args) else "{}")
        out.append(part)
    return "".join(out)


def percent(usage: float) -> int:
    """ThresholdShedder's ``toPercentage``: ``(int) (usage * 100)`` (truncation, NaN → 0)."""
    return double_to_int(usage * 100)


def explain_few_bundles(explain: Explain, broker: str, bundles: list[str]) -> None:
    """The warnings ThresholdShedder and OverloadShedder log for an overloaded broker that cannot shed (one bundle,
    or none)."""
    distinct = list(dict.fromkeys(bundles))
    if len(distinct) == 1:
        explain.add(broker, "sole-bundle", slf4j(
            "HIGH USAGE WARNING : Sole namespace bundle {} is overloading broker {}. "
            "No Load Shedding will be done on this broker", distinct[0], broker))
    elif not distinct:
        explain.add(broker, "no-bundles", slf4j("Broker {} is overloaded despite having no bundles", broker))
