"""The Pulsar model's fault kinds: their ``[[faults]]`` schema, per-kind defaults and cross-checks.

On top of the kernel's ``pause``, ``crash``, ``partition``, ``drop`` and ``delay`` (``clusteremu.emulator.faults``):

* ``shutdown`` / ``scale_in`` (broker globs): graceful stop at ``at`` (bundles unloaded, session closed).
* ``leader_kill``: at ``at`` every broker receives the fault and the one that believes it is the leader crashes.
* ``gc_storm`` (broker globs, ``duration_s``, ``every_s``, ``pause_s``, ``sigma``): stop-the-world pauses (a JVM
  fault kind, :mod:`clusteremu.emulator.jvm`).
* ``store_latency`` (``extra_ms``, ``duration_s``): the metadata store answers ``extra_ms`` later.
* ``report_loss`` (broker globs, ``duration_s``, ``probability``, ``extra_ms``): load-report writes lost or late.
* ``cpu_spike`` (broker globs, ``duration_s``, ``cores``): another process on the host burns ``cores`` cores.
* ``scale_out`` (exact new broker names): those brokers boot at ``at``.
* ``rolling_restart`` (broker globs, ``down_s``, ``gap_s``): restart the brokers one at a time, in name order
  (:mod:`clusteremu.agents.common.lifecycle`).

Every fault reaches the agents its ``agents`` globs match through ``Agent.on_fault`` on their own worker; the
kinds that name no agents get them here (``leader_kill``: every broker; ``store_latency``: the store), so that
no fault needs knowledge of another agent's state. ``docs/faults.md`` documents each kind with an example.
"""
from __future__ import annotations

import fnmatch
import re
from typing import Any

from clusteremu.agents.common.jvm import JVM_FAULT_FIELDS, model_fault_schema
from clusteremu.agents.common.lifecycle import ROLLING_RESTART, ROLLING_RESTART_DEFAULTS, ROLLING_RESTART_FIELDS
from clusteremu.emulator import faults as kernel
from clusteremu.emulator.jvm import JVM_FAULTS
from clusteremu.scenarios.schema import ArrayOf, Field

from .store import STORE

#: graceful stops of a broker; ``cause`` of the ``broker_stopping`` / ``broker_stopped`` events
GRACEFUL = ("shutdown", "scale_in", ROLLING_RESTART)
BROKER_KINDS = ("shutdown", "scale_in", "leader_kill", *JVM_FAULTS, "report_loss", "cpu_spike", "scale_out",
                ROLLING_RESTART)
KINDS = kernel.KERNEL_FAULTS + BROKER_KINDS + ("store_latency",)
ALL_BROKERS = "broker-*"
BROKER_NAME = re.compile(r"broker-[1-9][0-9]*")

EXTRA = {
    "cores": Field("float", default=None, gt=0, doc="cpu_spike: cores' worth of load"),
    **JVM_FAULT_FIELDS,
    **ROLLING_RESTART_FIELDS,
}

#: per-kind defaults of the optional fields (the schema's defaults are shared by every kind, so None there); the
#: JVM kinds' are :mod:`clusteremu.emulator.jvm`'s
DEFAULTS: dict[str, dict[str, Any]] = {
    "report_loss": {"probability": 1.0},
    ROLLING_RESTART: ROLLING_RESTART_DEFAULTS,
    "leader_kill": {"agents": [ALL_BROKERS]},
    "store_latency": {"agents": [STORE]},
}

#: fields each kind needs
REQUIRED: dict[str, tuple[str, ...]] = {
    "store_latency": ("extra_ms", "duration_s"),
    "report_loss": ("duration_s",),
    "cpu_spike": ("duration_s", "cores"),
}


def _check(entry: dict[str, Any]) -> list[tuple[str, str]]:
    """Pulsar's own rules for an entry whose defaults are filled in."""
    kind = entry["kind"]
    problems: list[tuple[str, str]] = []
    if kind == "store_latency" and entry["agents"] != [STORE]:
        problems.append(("agents", f"a store_latency fault applies to the metadata store only ({STORE!r})"))
    if kind == "scale_out":
        bad = [a for a in entry["agents"] if not BROKER_NAME.fullmatch(a)]
        if bad:
            problems.append(("agents", f"scale_out needs exact new broker names like \"broker-6\", got {bad}"))
    return problems


def schema() -> ArrayOf:
    """``[[faults]]`` of a Pulsar scenario: the kernel's kinds and fields plus the model's."""
    return model_fault_schema(KINDS, EXTRA, defaults=DEFAULTS, required=REQUIRED, check=_check)


def scale_out_brokers(faults: list[dict[str, Any]]) -> dict[str, float]:
    """New broker name -> the time it boots, from the ``scale_out`` entries."""
    return {name: f["at"] for f in faults if f["kind"] == "scale_out" for name in f["agents"]}


def check(faults: list[dict[str, Any]], initial: list[str], others: list[str]) -> list[tuple[str, str]]:
    """Cross-checks that need the cluster: new broker names are new and unique, globs of broker kinds match
    brokers only, and at least one."""
    problems = []
    seen: dict[str, int] = {}
    brokers = list(initial)
    for i, f in enumerate(faults):
        if f["kind"] != "scale_out":
            continue
        for name in f["agents"]:
            if name in initial:
                problems.append((f"faults[{i}].agents", f"{name} exists from the start (cluster.brokers); "
                                                        "scale_out adds brokers beyond it"))
            elif name in seen:
                problems.append((f"faults[{i}].agents", f"{name} is already added by faults[{seen[name]}]"))
            else:
                seen[name] = i
                brokers.append(name)
    for i, f in enumerate(faults):
        if f["kind"] not in BROKER_KINDS or f["kind"] == "scale_out":
            continue
        globs = f["agents"]
        hit = [b for b in brokers if any(fnmatch.fnmatchcase(b, g) for g in globs)]
        stray = [a for a in others if any(fnmatch.fnmatchcase(a, g) for g in globs)]
        if stray:
            problems.append((f"faults[{i}].agents", f"a {f['kind']} fault applies to brokers only; "
                                                    f"{globs} also matches {stray[:3]}"))
        elif not hit:
            problems.append((f"faults[{i}].agents", f"{globs} matches no broker"))
    return problems
