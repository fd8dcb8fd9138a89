"""The ``[[faults]]`` of the Storm model: the kernel's kinds (``pause``, ``crash``, network faults), the JVM's
(``gc_storm``: every Storm daemon is a JVM) and Storm's own:

* ``leader_kill``: the Nimbus that believes it leads crashes (give it ``agents = ["nimbus-*"]``: each Nimbus gets
  the fault and only the leader acts, so no agent needs another's state);
* ``restart``: the matching daemons crash and start again ``duration_s`` later (a supervisor's crash is its
  host's: its workers go too);
* ``rolling_restart``: the operator restarts the matching supervisors one at a time, in name order
  (:mod:`clusteremu.agents.common.lifecycle`): each stops gracefully (its ZooKeeper session closed, so its node
  goes at once; its workers keep running, as Storm's worker processes outlive their supervisor), stays down
  ``down_s`` (30), starts again and, once registered and ``gap_s`` (60) later, hands the turn to the next.

Components: :data:`STORM_FAULTS`, :func:`schema`.
"""
from __future__ import annotations

from typing import Any

from clusteremu.agents.common.jvm import JVM_FAULT_FIELDS, model_fault_schema
from clusteremu.agents.common.lifecycle import ROLLING_RESTART, ROLLING_RESTART_DEFAULTS, ROLLING_RESTART_FIELDS
from clusteremu.emulator import faults
from clusteremu.emulator.jvm import JVM_FAULTS
from clusteremu.scenarios.schema import ArrayOf

__all__ = ["STORM_FAULTS", "schema"]

STORM_FAULTS = ("leader_kill", "restart", ROLLING_RESTART)


def _check(entry: dict[str, Any]) -> list[tuple[str, str]]:
    if entry["kind"] == "restart" and entry["duration_s"] is None:
        return [("duration_s", "a restart needs duration_s: how long the daemon stays down")]
    return []


def schema() -> ArrayOf:
    """The fault table: kernel, JVM and Storm kinds."""
    return model_fault_schema(faults.KERNEL_FAULTS + JVM_FAULTS + STORM_FAULTS,
                              {**JVM_FAULT_FIELDS, **ROLLING_RESTART_FIELDS},
                              defaults={ROLLING_RESTART: ROLLING_RESTART_DEFAULTS}, check=_check)
