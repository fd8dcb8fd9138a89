"""Writing a scenario in Python: start from a built-in, a file, a dict or nothing, set keys, add faults.

A :class:`ScenarioBuilder` holds the raw scenario (the dict a TOML file parses to) and is validated by the same
code as a file (:func:`clusteremu.scenarios.loader.validate_scenario`) when it is built or run, so a bad key is refused with
the key path and the reason. Setters return the builder, so a scenario reads as one expression::

    ScenarioBuilder("kernel-heartbeat").set("workload.timer_mode", "fixed_delay").pause("member-2", at=60, duration_s=15)
"""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Iterable, Mapping

from clusteremu.scenarios.loader import Scenario, read_raw, resolve, validate_scenario
from clusteremu.scenarios.paths import set_path, split_path

#: Duration of a scenario started from scratch, when none is given.
DEFAULT_DURATION_S = 60.0


def dotted(key: str) -> str:
    """A keyword argument's name as a key path: ``workload__timer_mode`` → ``workload.timer_mode``."""
    return key.replace("__", ".")


def raw_scenario(source: "str | Path | Mapping[str, Any] | Scenario | ScenarioBuilder") -> tuple[dict[str, Any], str]:
    """The raw dict of a scenario given in any of the accepted forms, and the name to report it under."""
    if isinstance(source, ScenarioBuilder):
        return source.to_dict(), source.source
    if isinstance(source, Scenario):
        return copy.deepcopy(source.data), source.source
    if isinstance(source, Mapping):
        raw = copy.deepcopy(dict(source))
        name = raw.get("scenario", {}).get("name", "?") if isinstance(raw.get("scenario"), dict) else "?"
        return raw, f"<python scenario {name!r}>"
    path = resolve(str(source))
    return read_raw(path), str(path)


def with_overrides(raw: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` with each ``key.path: value`` applied (keys may use ``__`` for dots, as keyword arguments must)."""
    for key, value in overrides.items():
        set_path(raw, dotted(key), value)
    return raw


class ScenarioBuilder:
    """A scenario under construction.

    ``ScenarioBuilder("kernel-heartbeat")`` starts from a built-in (or a file path, a dict, a validated
    :class:`~clusteremu.scenarios.loader.Scenario`, another builder); ``ScenarioBuilder(model="heartbeat")`` starts from
    scratch with the model's defaults, named ``<model>-python``, lasting :data:`DEFAULT_DURATION_S`.
    """

    def __init__(
        self,
        base: "str | Path | Mapping[str, Any] | Scenario | ScenarioBuilder | None" = None,
        /,
        *,
        model: str | None = None,
        name: str | None = None,
        duration_s: float | None = None,
        seed: int | None = None,
    ) -> None:
        if base is None:
            if model is None:
                raise TypeError("ScenarioBuilder needs a base scenario or model=")
            self._raw: dict[str, Any] = {
                "scenario": {"name": name or f"{model}-python", "model": model, "duration_s": DEFAULT_DURATION_S}
            }
            self.source = f"<python scenario {self._raw['scenario']['name']!r}>"
        else:
            self._raw, self.source = raw_scenario(base)
            if model is not None:
                set_path(self._raw, "scenario.model", model)
        if name is not None:
            self.named(name)
        if duration_s is not None:
            self.duration(duration_s)
        if seed is not None:
            self.seed(seed)

    # -- keys -------------------------------------------------------------------------------------------------
    def set(self, key: str | None = None, value: Any = None, /, **keys: Any) -> "ScenarioBuilder":
        """Set one key path to a value, ``set("workload.timer_mode", "fixed_delay")``, or several as keywords,
        ``set(workload__timer_mode="fixed_delay", cluster__members=3)``."""
        if key is not None:
            set_path(self._raw, key, value)
        elif value is not None:
            raise TypeError("set(key, value) needs the key")
        with_overrides(self._raw, keys)
        return self

    def get(self, key: str, default: Any = None) -> Any:
        """The raw value at a key path (before validation fills defaults), or ``default``."""
        node: Any = self._raw
        for part in split_path(key):
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                return default
        return node

    def named(self, name: str) -> "ScenarioBuilder":
        set_path(self._raw, "scenario.name", name)
        self.source = f"<python scenario {name!r}>"
        return self

    def duration(self, seconds: float) -> "ScenarioBuilder":
        set_path(self._raw, "scenario.duration_s", seconds)
        return self

    def seed(self, seed: int) -> "ScenarioBuilder":
        set_path(self._raw, "scenario.seed", seed)
        return self

    # -- faults -----------------------------------------------------------------------------------------------
    def fault(self, kind: str, at: float, **spec: Any) -> "ScenarioBuilder":
        """Append a ``[[faults]]`` entry: ``kind``, ``at`` and its other keys as they are in TOML."""
        self._raw.setdefault("faults", []).append({"kind": kind, "at": at, **spec})
        return self

    def pause(self, agents: str | Iterable[str], at: float, duration_s: float, label: str = "") -> "ScenarioBuilder":
        """A stop-the-world pause of the agents (globs) at ``at`` for ``duration_s``."""
        return self.fault("pause", at, agents=_globs(agents), duration_s=duration_s, label=label)

    def crash(self, agents: str | Iterable[str], at: float, label: str = "") -> "ScenarioBuilder":
        """The agents (globs) stop at ``at`` without clean-up."""
        return self.fault("crash", at, agents=_globs(agents), label=label)

    def partition(
        self, a: str | Iterable[str], b: str | Iterable[str], at: float, duration_s: float | None = None, label: str = ""
    ) -> "ScenarioBuilder":
        """Messages between groups ``a`` and ``b`` (globs) are lost from ``at`` for ``duration_s`` (None: to the end)."""
        return self.fault("partition", at, **_network(a, b, duration_s, label))

    def drop(
        self, a: str | Iterable[str], b: str | Iterable[str], at: float, probability: float,
        duration_s: float | None = None, label: str = "",
    ) -> "ScenarioBuilder":
        """Each message between ``a`` and ``b`` is lost with ``probability``."""
        return self.fault("drop", at, probability=probability, **_network(a, b, duration_s, label))

    def delay(
        self, a: str | Iterable[str], b: str | Iterable[str], at: float, extra_ms: float,
        duration_s: float | None = None, label: str = "",
    ) -> "ScenarioBuilder":
        """Each message between ``a`` and ``b`` takes ``extra_ms`` longer."""
        return self.fault("delay", at, extra_ms=extra_ms, **_network(a, b, duration_s, label))

    def without_faults(self) -> "ScenarioBuilder":
        """Remove every fault (a built-in's scripted ones included)."""
        self._raw["faults"] = []
        return self

    # -- results ----------------------------------------------------------------------------------------------
    def copy(self) -> "ScenarioBuilder":
        return ScenarioBuilder(self)

    def to_dict(self) -> dict[str, Any]:
        """The raw scenario (a copy), as a TOML file would parse to."""
        return copy.deepcopy(self._raw)

    def build(self) -> Scenario:
        """The validated scenario (``InputError`` naming the key and the reason if it is invalid)."""
        return validate_scenario(self.to_dict(), self.source)

    def __repr__(self) -> str:
        head = self._raw.get("scenario", {})
        return f"ScenarioBuilder({head.get('name')!r}, model={head.get('model')!r}, faults={len(self._raw.get('faults', []))})"


def _globs(agents: str | Iterable[str]) -> list[str]:
    return [agents] if isinstance(agents, str) else list(agents)


def _network(a: str | Iterable[str], b: str | Iterable[str], duration_s: float | None, label: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"between": [_globs(a), _globs(b)], "label": label}
    if duration_s is not None:
        spec["duration_s"] = duration_s
    return spec
