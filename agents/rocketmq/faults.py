"""The RocketMQ model's fault kinds: their ``[[faults]]`` schema, per-kind defaults and cross-checks.

On top of the kernel's ``pause`` (a long GC pause), ``crash`` (a consumer or broker machine lost: its peers
notice only by expiry), ``partition``, ``drop`` and ``delay``, and the JVM's ``gc_storm``:

* ``scale_out`` (exact new consumer names, ``consumer-9``): those consumers start at ``at``;
* ``scale_in`` (consumer globs): graceful shutdown (offsets persisted, ``UNREGISTER_CLIENT``);
* ``rolling_restart`` (consumer globs, ``down_s`` 10, ``gap_s`` 30): each consumer in turn, in number order, shuts
  down gracefully, stays down ``down_s``, starts again (a new client id) and ``gap_s`` later hands over;
* ``slow_consumer`` (consumer globs, ``factor``, ``duration_s``): the consumers' capacity times ``factor``;
* ``broker_join`` (exact new broker names, ``broker-c``; ``queues``, ``room`` optional): those brokers start at
  ``at`` with new queues of the topic (``cluster.queues_per_broker`` unless ``queues``);
* ``broker_loss`` (broker globs): the brokers are lost (a machine or room outage: nothing is closed cleanly, the
  name server drops their routes after ``brokerChannelExpiredTime``).
"""
from __future__ import annotations

import fnmatch
from typing import Any

from clusteremu.agents.common.jvm import JVM_FAULT_FIELDS, model_fault_schema
from clusteremu.emulator import faults as kernel
from clusteremu.emulator.jvm import JVM_FAULTS
from clusteremu.scenarios.schema import ArrayOf, Field

from .names import BROKER_NAME, CONSUMER_NAME

__all__ = ["BROKER_KINDS", "CONSUMER_KINDS", "KINDS", "broker_joins", "check", "scale_out_consumers", "schema"]

CONSUMER_KINDS = ("scale_out", "scale_in", "rolling_restart", "slow_consumer")
BROKER_KINDS = ("broker_join", "broker_loss")
KINDS = kernel.KERNEL_FAULTS + JVM_FAULTS + CONSUMER_KINDS + BROKER_KINDS

EXTRA = {
    **JVM_FAULT_FIELDS,
    "factor": Field("float", default=None, gt=0, doc="slow_consumer: capacity multiplier"),
    "down_s": Field("float", default=None, ge=0, doc="rolling_restart: how long each consumer stays down (10)"),
    "gap_s": Field("float", default=None, ge=0, doc="rolling_restart: wait after a consumer is back (30)"),
    "queues": Field("int", default=None, ge=1, doc="broker_join: the new broker's queues of the topic"),
    "room": Field("str", default=None, doc="broker_join: the new broker's machine room"),
}

DEFAULTS: dict[str, dict[str, Any]] = {"rolling_restart": {"down_s": 10.0, "gap_s": 30.0}}
REQUIRED: dict[str, tuple[str, ...]] = {"slow_consumer": ("factor", "duration_s")}


def _check(entry: dict[str, Any]) -> list[tuple[str, str]]:
    """RocketMQ's own rules for an entry whose defaults are filled in."""
    kind = entry["kind"]
    problems: list[tuple[str, str]] = []
    if kind == "scale_out":
        bad = [a for a in entry["agents"] if not CONSUMER_NAME.fullmatch(a)]
        if bad:
            problems.append(("agents", f"scale_out needs exact new consumer names like \"consumer-9\", got {bad}"))
    if kind == "broker_join":
        bad = [a for a in entry["agents"] if not BROKER_NAME.fullmatch(a)]
        if bad:
            problems.append(("agents", f"broker_join needs exact new broker names like \"broker-c\", got {bad}"))
    return problems


def schema() -> ArrayOf:
    """``[[faults]]`` of a RocketMQ scenario: the kernel's kinds and fields plus the model's."""
    return model_fault_schema(KINDS, EXTRA, defaults=DEFAULTS, required=REQUIRED, check=_check)


def scale_out_consumers(faults: list[dict[str, Any]]) -> dict[str, float]:
    """New consumer name -> the time it starts."""
    return {n: f["at"] for f in faults if f["kind"] == "scale_out" for n in f["agents"]}


def broker_joins(faults: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """New broker name -> its ``broker_join`` entry."""
    return {n: f for f in faults if f["kind"] == "broker_join" for n in f["agents"]}


def check(faults: list[dict[str, Any]], consumers: list[str], brokers: list[str]) -> list[tuple[str, str]]:
    """Cross-checks that need the cluster: added agents are new and added once; consumer and broker kinds match
    agents of their sort, at least one."""
    problems = []
    all_consumers, all_brokers = list(consumers), list(brokers)
    for i, f in enumerate(faults):
        if f["kind"] not in ("scale_out", "broker_join"):
            continue
        pool = all_consumers if f["kind"] == "scale_out" else all_brokers
        for name in f["agents"]:
            if name in pool:
                problems.append((f"faults[{i}].agents", f"{name} exists already (the cluster or an earlier fault)"))
            else:
                pool.append(name)
    for i, f in enumerate(faults):
        kind = f["kind"]
        if kind in ("scale_out", "broker_join") or kind not in CONSUMER_KINDS + BROKER_KINDS:
            continue
        pool, other, sort = ((all_consumers, all_brokers, "consumers") if kind in CONSUMER_KINDS
                             else (all_brokers, all_consumers, "brokers"))
        globs = f["agents"]
        if any(fnmatch.fnmatchcase(a, g) for a in other + ["namesrv"] for g in globs):
            problems.append((f"faults[{i}].agents", f"a {kind} fault applies to {sort} only"))
        elif not any(fnmatch.fnmatchcase(a, g) for a in pool for g in globs):
            problems.append((f"faults[{i}].agents", f"{globs} matches no {sort[:-1]}"))
    return problems
