"""Storm's rating: how well a scheduling strategy (and priority strategy) served the topologies of its runs (the
``rating`` target of the ``storm`` system, :data:`RATING`).

Five criteria, each a figure pooled over a group's Storm runs (every topology of every run counts once) and a
grade ``good`` / ``fair`` / ``poor``:

* ``time_to_schedule``: mean seconds from submission to fully scheduled, a topology never fully scheduled
  counted until its removal or the end of its run;
* ``failures``: % of topology-rounds that left their topology not fully scheduled;
* ``evictions``: evictions (not rolled back) per 100 submitted topologies;
* ``guarantee``: evictions that took from another user within their guarantee (runs with user pools only);
* ``network``: % of connected executor pairs placed on one node, mean over topologies (higher is better).

The thresholds are provisional — a round of ``nimbus.monitor.freq.secs`` (10 s) is the natural unit of time to
schedule — and not calibrated on a source article as Pulsar's are (docs/analysis.md, *Storm's rating*).

Components: :class:`RatingRules`, :data:`FIGURES` (criterion → its figure over a group's runs), :func:`rate`,
:func:`strategy_label`, :data:`RATING` (a :class:`~clusteremu.tools.compare.RuleRating`).
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable, Iterable, Mapping, Sequence

from clusteremu.strategies.storm.config import DEFAULTS, RESOURCE_AWARE_SCHEDULER_PRIORITY_STRATEGY, TOPOLOGY_SCHEDULER_STRATEGY
from clusteremu.strategies.storm.registry import EVICTION_STRATEGY_KEY
from clusteremu.tools.compare import (
    Criterion,
    Group,
    RuleRating,
    RunSummary,
    grade_groups,
    pooled_ratio,
    pooled_weighted,
)

from .runs import short_class_name

#: The model whose runs this rating grades.
MODEL = "storm"


@dataclass(frozen=True)
class RatingRules:
    """The criteria of Storm's rating, in table order."""

    time_to_schedule: Criterion = Criterion(
        "s from submission to fully scheduled, mean over topologies (never scheduled: until removal or the end)", 10.0, 60.0
    )
    failures: Criterion = Criterion("% of topology-rounds that left the topology not fully scheduled", 1.0, 10.0)
    evictions: Criterion = Criterion("evictions (not rolled back) per 100 submitted topologies", 10.0, 50.0)
    guarantee: Criterion = Criterion("evictions from another user within their guarantee (runs with user pools)", 0.0, 0.0)
    network: Criterion = Criterion("% of connected executor pairs on one node, mean over topologies", 75.0, 50.0, (), True)

    def criteria(self) -> dict[str, Criterion]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def guarantee_violations(runs: Iterable[RunSummary]) -> float | None:
    """Evictions from another user within their guarantee, summed over the runs whose scenario has user pools
    (None when none has)."""
    values = [r.figure("evictions.guarantee.within_guarantee_other_user") for r in runs
              if r.figures.get("evictions", {}).get("guarantee", {}).get("pools")]
    values = [v for v in values if v is not None]
    return float(sum(values)) if values else None


#: How each criterion's figure is computed from a group's Storm runs.
FIGURES: dict[str, Callable[[Sequence[RunSummary]], float | None]] = {
    "time_to_schedule": lambda runs: pooled_weighted(runs, "schedule.wait_s_mean", "schedule.topologies"),
    "failures": lambda runs: pooled_ratio(runs, "failures.topology_rounds", "failures.topology_rounds_total"),
    "evictions": lambda runs: pooled_ratio(runs, "evictions.count", "schedule.topologies"),
    "guarantee": guarantee_violations,
    "network": lambda runs: pooled_weighted(runs, "network.same_node.mean", "network.topologies"),
}


def rate(groups: Sequence[Group], rules: RatingRules = RatingRules()) -> list[dict[str, Any]]:
    """One row per group, ``{"strategy", "criteria": {name: {"grade", "figure", "unit"}}}``, from its Storm runs
    that the criterion selects; a criterion without a figure is left out of the row."""
    return grade_groups(groups, MODEL, rules, FIGURES)


def _named(scenario: Mapping[str, Any], table_key: str, conf_key: str) -> Any:
    # The model's precedence: [strategy] wins over [config], which wins over Storm's defaults.yaml.
    strategy = scenario.get("strategy") if isinstance(scenario.get("strategy"), Mapping) else {}
    config = scenario.get("config") if isinstance(scenario.get("config"), Mapping) else {}
    return strategy.get(table_key) or config.get(conf_key) or DEFAULTS.get(conf_key)


def strategy_label(scenario: Mapping[str, Any]) -> str:
    """``<scheduling>+<priority>``: the simple class names of the default ``topology.scheduler.strategy`` and of
    ``resource.aware.scheduler.priority.strategy`` (Storm's defaults when the scenario names neither), with
    ``+<eviction>`` when the scenario names Storm 1.x's eviction strategy — the same class names run under
    1.x's rules then, which must not be pooled with 2.x's."""
    if not isinstance(scenario, Mapping):
        scenario = {}
    label = f"{short_class_name(_named(scenario, 'scheduling', TOPOLOGY_SCHEDULER_STRATEGY))}+" \
            f"{short_class_name(_named(scenario, 'priority', RESOURCE_AWARE_SCHEDULER_PRIORITY_STRATEGY))}"
    eviction = _named(scenario, "eviction", EVICTION_STRATEGY_KEY)
    return f"{label}+{short_class_name(eviction)}" if eviction else label


#: Storm's rating (the ``rating`` target of the ``storm`` system).
RATING = RuleRating("rating (Storm Resource Aware Scheduler)", RatingRules(), rate, strategy_label)
