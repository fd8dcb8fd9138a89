"""Kernel fault injection: the ``[[faults]]`` entries every model understands.

* ``pause``: a stop-the-world pause of ``duration_s`` on each agent matching ``agents`` (globs), at ``at``.
* ``crash``: the matching agents stop at ``at`` without clean-up.
* ``partition``: messages sent between the two groups of ``between`` are lost on [at, at + duration_s).
* ``drop``: each such message is lost with ``probability``.
* ``delay``: each such message takes ``extra_ms`` longer.

Agent faults are applied by the worker that hosts the agent; network faults become conditions of the network
model. The start and end of every fault are events (``fault_begin`` / ``fault_end`` of the pseudo-agent
``faults``). Models may add fault kinds of their own.
"""
from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass
from typing import Any

from clusteremu.scenarios.schema import ArrayOf, Field, Table

from .network import Condition
from .trace.kinds import declare

AGENT_FAULTS = ("pause", "crash")
NETWORK_FAULTS = ("partition", "drop", "delay")
KERNEL_FAULTS = AGENT_FAULTS + NETWORK_FAULTS
FAULTS_AGENT = "faults"

declare("fault_begin", "A scheduled fault began (pseudo-agent `faults`).", __name__, fault="str", index="int", label="str")
declare("fault_end", "A scheduled fault ended (pseudo-agent `faults`).", __name__, fault="str", index="int", label="str")


def _check_fault(f: dict[str, Any]) -> list[tuple[str, str]]:
    kind = f["kind"]
    problems = []
    if kind not in NETWORK_FAULTS and not f["agents"]:
        problems.append(("agents", f"a {kind} fault needs the agents it applies to (globs)"))
    if kind == "pause" and f["duration_s"] is None:
        problems.append(("duration_s", "a pause needs its duration"))
    if kind in NETWORK_FAULTS:
        between = f["between"]
        if len(between) != 2 or not all(isinstance(g, list) and g and all(isinstance(x, str) for x in g) for g in between):
            problems.append(("between", "expected two non-empty arrays of agent globs, e.g. [[\"broker-*\"], [\"store\"]]"))
    if kind == "drop" and f["probability"] is None:
        problems.append(("probability", "a drop fault needs its probability"))
    if kind == "delay" and f["extra_ms"] is None:
        problems.append(("extra_ms", "a delay fault needs extra_ms"))
    return problems


def fault_schema(kinds: tuple[str, ...] = KERNEL_FAULTS, extra: dict[str, Any] | None = None) -> ArrayOf:
    """The schema of ``[[faults]]``: the kernel's kinds plus a model's own (``extra`` fields)."""
    fields = {
        "kind": Field("str", choices=kinds, doc="what happens"),
        "at": Field("float", ge=0, doc="virtual time it starts, seconds"),
        "duration_s": Field("float", default=None, gt=0, doc="how long it lasts (network faults: to the end if absent)"),
        "agents": Field("list", default=[], item=Field("str"), doc="agent globs (agent faults)"),
        "between": Field("list", default=[], doc="two arrays of agent globs (network faults)"),
        "probability": Field("float", default=None, ge=0, le=1),
        "extra_ms": Field("float", default=None, ge=0),
        "label": Field("str", default=""),
        **(extra or {}),
    }
    return ArrayOf(Table(fields, check=_check_fault))


@dataclass(frozen=True)
class AgentFault:
    """One scheduled fault for one agent: the kernel's ``pause`` and ``crash``, or a model's own kind, which the
    worker hands to ``Agent.on_fault(kind, spec)``."""

    index: int
    kind: str
    at: float
    agent: str
    spec: dict[str, Any]


def agent_faults(faults: list[dict[str, Any]], agents: list[str]) -> list[AgentFault]:
    """The agent-level faults of the schedule (every kind but the network's), expanded to the agent names they
    match, in schedule order."""
    out = []
    for i, f in enumerate(faults):
        if f["kind"] not in NETWORK_FAULTS:
            for name in agents:
                if any(fnmatch.fnmatchcase(name, g) for g in f.get("agents", ())):
                    out.append(AgentFault(i, f["kind"], f["at"], name, f))
    return out


def network_conditions(faults: list[dict[str, Any]]) -> list[Condition]:
    out = []
    for i, f in enumerate(faults):
        if f["kind"] in NETWORK_FAULTS:
            end = math.inf if f["duration_s"] is None else f["at"] + f["duration_s"]
            out.append(
                Condition(
                    kind=f["kind"],
                    start=f["at"],
                    end=end,
                    group_a=tuple(f["between"][0]),
                    group_b=tuple(f["between"][1]),
                    probability=1.0 if f["probability"] is None else f["probability"],
                    extra_s=(f["extra_ms"] or 0.0) / 1000.0,
                    label=f["label"] or f"fault[{i}]",
                )
            )
    return out


def boundaries(faults: list[dict[str, Any]]) -> list[tuple[float, str, dict[str, Any]]]:
    """(time, event kind, fields) of every fault's start and end, sorted by time then schedule order."""
    out = []
    for i, f in enumerate(faults):
        fields = {"fault": f["kind"], "index": i, "label": f["label"]}
        out.append((f["at"], i, 0, "fault_begin", fields))
        if f["duration_s"] is not None:
            out.append((f["at"] + f["duration_s"], i, 1, "fault_end", fields))
    out.sort(key=lambda b: (b[0], b[1], b[2]))
    return [(t, kind, fields) for t, _i, _o, kind, fields in out]
