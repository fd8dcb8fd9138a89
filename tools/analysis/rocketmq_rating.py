"""RocketMQ's rating: how well an allocation strategy (client-side rebalance, or broker-side assignment with POP)
kept the group's queues consumed once and only once through its runs' membership changes (the ``rating`` target of
the ``rocketmq`` system, :data:`RATING`).

Seven criteria, each a figure pooled over a group's RocketMQ runs and a grade ``good`` / ``fair`` / ``poor``
(docs/analysis.md, *RocketMQ figures*); the start-up allocation is not graded:

* ``overlap``: queue-seconds with two holders or more, per hour after the start-up;
* ``orphan``: queue-seconds with no holder, per hour after the start-up;
* ``duplicates``: % of the messages consumed that were consumed twice (PULL and POP, exact);
* ``time_to_stable``: mean seconds from a membership change to a stable allocation (a change that never got one
  counted until the next change or the end);
* ``moves``: queues whose holder changed per membership change, % of the queues;
* ``lag``: p99 lag in seconds of the queue's production, mean over runs;
* ``skew``: queues the busiest consumer held at the end over the even share, mean over runs.

The thresholds are provisional, set from the built-in scenarios (a committed offset is persisted every 5 s, so a
healthy group's lag is a few seconds of production), not calibrated on an article.

Components: :class:`RatingRules`, :data:`FIGURES`, :func:`rate`, :func:`strategy_label`, :data:`RATING` (a
:class:`~clusteremu.tools.compare.RuleRating`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Callable, Iterable, Mapping, Sequence

from clusteremu.strategies.rocketmq.registry import simple_name
from clusteremu.tools.compare import (
    Criterion,
    Group,
    RuleRating,
    RunSummary,
    grade_groups,
    mean_figure,
    pooled_ratio,
    pooled_weighted,
)

from .runs import short_class_name

#: The model whose runs this rating grades.
MODEL = "rocketmq"
#: RocketMQ's default ``allocateMessageQueueStrategy`` (DefaultMQPushConsumer).
DEFAULT_STRATEGY = "AllocateMessageQueueAveragely"


@dataclass(frozen=True)
class RatingRules:
    """The criteria of RocketMQ's rating, in table order."""

    overlap: Criterion = Criterion("queue-s held by two consumers or more, per hour after the start-up", 0.0, 1.0)
    orphan: Criterion = Criterion("queue-s held by nobody, per hour after the start-up", 1.0, 60.0)
    duplicates: Criterion = Criterion("% of consumed messages consumed twice", 0.01, 0.5)
    time_to_stable: Criterion = Criterion("s from a membership change to a stable allocation, mean (never: until the next)", 5.0, 60.0)
    moves: Criterion = Criterion("% of the queues whose holder changed, per membership change", 50.0, 100.0)
    lag: Criterion = Criterion("p99 lag in s of the queue's production, mean over runs", 10.0, 60.0)
    skew: Criterion = Criterion("queues the busiest consumer holds over the even share at the end, mean over runs", 0.0, 1.0)

    def criteria(self) -> dict[str, Criterion]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _hours_after_start(r: RunSummary) -> float | None:
    end = r.summary.get("run", {}).get("end_s")
    start = r.figure("queues.after_start_s")
    if not isinstance(end, (int, float)) or start is None:
        return None
    return max(float(end) - start, 0.0) / 3600.0


def per_hour(runs: Iterable[RunSummary], path: str) -> float | None:
    """Σ figure / Σ hours after the start-up over the runs that have both (None without any hour)."""
    num = den = 0.0
    for r in runs:
        v, h = r.figure(path), _hours_after_start(r)
        if v is None or h is None or math.isnan(v):
            continue
        num, den = num + v, den + h
    return num / den if den > 0 else None


#: How each criterion's figure is computed from a group's RocketMQ runs.
FIGURES: dict[str, Callable[[Sequence[RunSummary]], float | None]] = {
    "overlap": lambda runs: per_hour(runs, "overlap.after_start_s"),
    "orphan": lambda runs: per_hour(runs, "orphan.after_start_s"),
    "duplicates": lambda runs: pooled_ratio(runs, "duplicates.total", "duplicates.consumed"),
    "time_to_stable": lambda runs: pooled_weighted(runs, "changes.wait_s_mean", "changes.count"),
    "moves": lambda runs: pooled_weighted(runs, "changes.net_moved_pct_mean", "changes.count"),
    "lag": lambda runs: mean_figure(runs, "lag.p99_s"),
    "skew": lambda runs: mean_figure(runs, "skew.final.excess"),
}


def rate(groups: Sequence[Group], rules: RatingRules = RatingRules()) -> list[dict[str, Any]]:
    """One row per group, ``{"strategy", "criteria": {name: {"grade", "figure", "unit"}}}``, from its RocketMQ
    runs that the criterion selects; a criterion without a figure is left out of the row."""
    return grade_groups(groups, MODEL, rules, FIGURES)


def _table(scenario: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = scenario.get(key)
    return value if isinstance(value, Mapping) else {}


def strategy_label(scenario: Mapping[str, Any]) -> str:
    """The simple class name of the scenario's ``allocateMessageQueueStrategy`` (RocketMQ's default
    ``AllocateMessageQueueAveragely`` when it names none), with ``+POP`` under broker-side assignment with POP
    (``clientRebalance = false``, ``defaultMessageRequestMode = "POP"``), ``+broker`` under broker-side assignment
    of PULL queues, and ``+orderly`` for orderly consumers (queue locks; they always rebalance on the client)."""
    if not isinstance(scenario, Mapping):
        scenario = {}
    strategy, config = _table(scenario, "strategy"), _table(scenario, "config")
    name = strategy.get("allocateMessageQueueStrategy") or DEFAULT_STRATEGY
    try:
        label = simple_name(name)
    except KeyError:
        label = short_class_name(name)
    if strategy.get("listener") == "orderly":
        return f"{label}+orderly"
    if config.get("clientRebalance") is False and config.get("messageModel", "CLUSTERING") == "CLUSTERING":
        return f"{label}+POP" if config.get("defaultMessageRequestMode") == "POP" else f"{label}+broker"
    return label


#: RocketMQ's rating (the ``rating`` target of the ``rocketmq`` system).
RATING = RuleRating("rating (RocketMQ consumer load balancing)", RatingRules(), rate, strategy_label)
