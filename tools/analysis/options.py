"""The knobs of an analysis: every figure that depends on one records it in ``summary.json`` (``options``)."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class AnalysisOptions:
    """Parameters of the figure definitions (docs/analysis.md gives each one's role).

    ``settle_window_s``: length of the settle window — the final stretch of the run over which the "steady state"
    figures are taken, and the quiet period the settle time asks for (``--settle-window-min`` × 60).
    ``settle_spread``: the score spread (max − min, score points) under which a cluster counts as balanced;
    15 is AvgShedder's low threshold and the line of the article's spread panel.
    ``round_gap_s``: two shedding unloads of one broker at most this far apart belong to the same round.
    ``after_round_s``: how long after a round's last unload its broker's load is judged (over-unloading).
    """

    settle_window_s: float = 600.0
    settle_spread: float = 15.0
    round_gap_s: float = 300.0
    after_round_s: float = 180.0

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if not (isinstance(value, (int, float)) and value > 0):
                raise ValueError(f"{name} must be a number greater than 0, got {value!r}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
