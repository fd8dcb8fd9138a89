"""What an analysis knows about a run before reading its events: its manifest, model, strategy and time span.

Components: :class:`RunInfo` and :func:`open_run_info` (a run directory and its manifest), :func:`strategy_label`
(the system's own, or :func:`generic_strategy_label`), :func:`short_class_name`, :func:`scenario_value`.

Everything here reads ``manifest.json`` defensively — a crashed run, a run of a model whose scenario schema is
still moving, or a directory with no manifest at all must still be analysable from its events.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clusteremu.base.errors import InputError
from clusteremu.tools.spark.segments import segment_files

#: The model name of a run whose manifest does not say (its events still get the figures every trace has).
UNKNOWN_MODEL = "unknown"


@dataclass
class RunInfo:
    """A run directory as the analysis sees it. ``index`` is its position in the analysed list."""

    index: int
    dir: Path
    manifest: dict[str, Any]
    problems: list[tuple[str, int, str]] = field(default_factory=list)

    @property
    def scenario(self) -> dict[str, Any]:
        s = self.manifest.get("scenario")
        return s if isinstance(s, dict) else {}

    @property
    def name(self) -> str:
        head = self.scenario.get("scenario")
        name = head.get("name") if isinstance(head, dict) else None
        return name if isinstance(name, str) and name else self.dir.name

    @property
    def model(self) -> str:
        head = self.scenario.get("scenario")
        model = head.get("model") if isinstance(head, dict) else None
        return model if isinstance(model, str) and model else UNKNOWN_MODEL

    @property
    def complete(self) -> bool:
        return bool(self.manifest.get("complete"))

    @property
    def until(self) -> float | None:
        until = self.manifest.get("until")
        return float(until) if isinstance(until, (int, float)) and math.isfinite(until) else None

    @property
    def seed(self) -> int | None:
        seed = self.manifest.get("seed")
        return seed if isinstance(seed, int) else None

    @property
    def recorded_events(self) -> int | None:
        """The events the manifest says a reader gives: ``events.rows`` (a record written in rows gives one a row),
        or ``events.count`` in a manifest written before kinds could be written in rows."""
        events = self.manifest.get("events")
        if not isinstance(events, dict):
            return None
        count = events.get("rows", events.get("count"))
        return count if isinstance(count, int) else None

    @property
    def strategy(self) -> str:
        return strategy_label(self.scenario, self.model)

    def end(self, last_event_t: float | None) -> float:
        """The run's end on the virtual time axis: ``until`` of a finished run, else its last event's time."""
        if self.complete and self.until is not None:
            return self.until
        if last_event_t is not None and math.isfinite(last_event_t):
            return last_event_t
        return self.until or 0.0


def short_class_name(value: Any) -> str:
    """``org.example.balance.LeastLoaded`` → ``LeastLoaded``: a Java class name without its package, as
    operators write them (``-`` for a value that is not a name)."""
    if not isinstance(value, str) or not value:
        return "-"
    return value.rsplit(".", 1)[-1]


def strategy_label(scenario: dict[str, Any], model: str) -> str:
    """The strategy a run of ``model`` is grouped under: its system's own label
    (:meth:`clusteremu.tools.compare.Rating.strategy_label`), else :func:`generic_strategy_label`."""
    from clusteremu.tools.compare import rating_for  # compare imports this module

    rating = rating_for(model)
    return generic_strategy_label(scenario) if rating is None else rating.strategy_label(scenario)


def generic_strategy_label(scenario: dict[str, Any]) -> str:
    """The short class names of the values of the scenario's ``strategy`` table, in its order, joined by ``+``;
    ``(no strategy)`` when it names none."""
    strategy = scenario.get("strategy") if isinstance(scenario, dict) else None
    names = [short_class_name(v) for v in strategy.values() if isinstance(v, str) and v] if isinstance(strategy, dict) else []
    return "+".join(names) if names else "(no strategy)"


def scenario_value(scenario: dict[str, Any], path: str) -> Any:
    """The value at a dotted key path of the scenario (``cluster.brokers``), or None where it is absent."""
    node: Any = scenario
    for part in path.split("."):
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def open_run_info(index: int, run_dir: str | Path) -> RunInfo:
    """Read a run directory's manifest; refuse (InputError) what is not a run directory at all."""
    path = Path(run_dir)
    if not path.is_dir():
        raise InputError(str(run_dir), "no such run directory")
    mpath = path / "manifest.json"
    has_events = (path / "events").is_dir()
    if not mpath.exists() and not has_events:
        raise InputError(str(run_dir), "not a run directory (no manifest.json and no events/)")
    info = RunInfo(index, path, {})
    if mpath.exists():
        try:
            manifest = json.loads(mpath.read_text())
            if not isinstance(manifest, dict):
                raise ValueError("not a JSON object")
            info.manifest = manifest
        except (ValueError, OSError) as err:
            info.problems.append(("manifest.json", 0, f"unreadable manifest: {err}"))
    else:
        info.problems.append(("manifest.json", 0, "missing manifest"))
    if not has_events or not segment_files(path):
        info.problems.append(("events", 0, "no segment files"))
    if info.manifest and not info.complete:
        info.problems.append(("manifest.json", 0, "the run did not finish (manifest says complete: false)"))
    return info
