"""The knobs of an analysis: every figure that depends on one records it in ``summary.json`` (``options``).

Components:

* :class:`Option`: one knob — its name (the key in ``summary.json``), default, help, and CLI flag with the scale
  from the flag's unit to the option's;
* :data:`SETTLE_WINDOW`: the one knob every analysis has, the settle window (``--settle-window-min``);
* :class:`AnalysisOptions`: the values asked for — the settle window and any system's options by name — and
  :meth:`AnalysisOptions.resolved`, the values an analysis of one system uses (what ``summary.json`` records).

A system declares its own options on its figures (:attr:`clusteremu.tools.analysis.model.ModelFigures.options`);
the CLI builds a flag for each declared one (:func:`clusteremu.tools.analysis.declared_options`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping


@dataclass(frozen=True)
class Option:
    """A knob of the figure definitions, declared once with everything the CLI and ``summary.json`` need.

    ``name`` is the key in ``summary.json``'s ``options`` and in :class:`AnalysisOptions`; ``default`` its
    value when not asked for; ``help`` what it means (the flag's help adds the default); ``flag`` the CLI flag
    that sets it (None: the Python API only), whose value times ``scale`` is the option's value
    (``--settle-window-min 10`` × 60 = ``settle_window_s`` 600); ``metavar`` names the flag's value in the help.
    """

    name: str
    default: float
    help: str
    flag: str | None = None
    metavar: str = "N"
    scale: float = 1.0

    def check(self, value: Any) -> float:
        """``value`` as a float; ValueError unless it is a finite number greater than 0."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
            raise ValueError(f"{self.name} must be a number greater than 0, got {value!r}")
        return float(value)


#: The settle window: the last N minutes of the run, over which the "steady state" figures are taken, and the
#: quiet period settling needs. Every analysis has it (it bounds the settle window of every model).
SETTLE_WINDOW = Option(
    "settle_window_s",
    600.0,
    "settle window: the last N minutes of the run, and the quiet time settling needs",
    "--settle-window-min",
    "N",
    60.0,
)


class AnalysisOptions:
    """The options an analysis is asked for: ``settle_window_s`` and, by name, options that systems declare
    (``AnalysisOptions(settle_window_s=300, settle_spread=10)``). An option not given takes its declared
    default. Values must be numbers greater than 0 (ValueError); :func:`clusteremu.tools.analysis.analyze`
    refuses a name that no registered system declares (a typo must not silently leave a default in force).

    Immutable and picklable: it travels to the Spark executors inside each part's parameters.
    """

    __slots__ = ("settle_window_s", "values")

    settle_window_s: float
    #: The system options given explicitly, by name.
    values: Mapping[str, float]

    def __init__(self, settle_window_s: float = SETTLE_WINDOW.default, **values: float) -> None:
        object.__setattr__(self, "settle_window_s", SETTLE_WINDOW.check(settle_window_s))
        checked = {name: Option(name, 1.0, "").check(v) for name, v in values.items()}
        object.__setattr__(self, "values", dict(sorted(checked.items())))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("AnalysisOptions is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.settle_window_s, dict(self.values)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AnalysisOptions):
            return NotImplemented
        return (self.settle_window_s, self.values) == (other.settle_window_s, other.values)

    def __hash__(self) -> int:
        return hash((self.settle_window_s, tuple(self.values.items())))

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.values.items())
        return f"AnalysisOptions(settle_window_s={self.settle_window_s!r}{extra})"

    def resolved(self, declared: Iterable[Option]) -> dict[str, float]:
        """The values an analysis of a system with the options ``declared`` uses — what its ``summary.json``
        records: ``settle_window_s``, then each declared option in declaration order, the value given or else
        the declared default."""
        out = {SETTLE_WINDOW.name: self.settle_window_s}
        for option in declared:
            out[option.name] = self.values.get(option.name, option.default)
        return out


def _rebuild(settle_window_s: float, values: dict[str, float]) -> AnalysisOptions:
    return AnalysisOptions(settle_window_s, **values)
