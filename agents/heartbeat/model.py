"""Scenario sections and agent construction of the heartbeat model."""
from __future__ import annotations

from typing import Any

from clusteremu.emulator import faults
from clusteremu.emulator.executor import MODES
from clusteremu.emulator.models import AgentSpec
from clusteremu.emulator.jvm import JVM_FAULTS
from clusteremu.emulator.network import Condition
from clusteremu.scenarios.schema import ArrayOf, Field, Table

from clusteremu.agents.common.jvm import JVM_FAULT_FIELDS, complete_jvm_fault, gc_table

from . import member, monitor  # noqa: F401  (declares their event kinds)

MONITOR = "monitor"


def _fault_schema() -> ArrayOf:
    """The kernel's fault kinds and the JVM's (members are JVMs: ``gc_storm``)."""
    arr = faults.fault_schema(faults.KERNEL_FAULTS + JVM_FAULTS, JVM_FAULT_FIELDS)
    kernel_check = arr.item.check
    arr.item.check = lambda entry: complete_jvm_fault(entry) + kernel_check(entry)
    return arr


class HeartbeatModel:
    name = "heartbeat"
    description = "members heartbeat a monitor that expires sessions (the kernel's own model)"
    sections = {
        "cluster": Table(
            {
                "members": Field("int", default=3, ge=1, le=100_000),
                "gc": gc_table(young_pause_ms=20.0),
            }
        ),
        "workload": Table(
            {
                "heartbeat_interval_s": Field("float", default=2.0, gt=0),
                "timer_mode": Field("str", default="fixed_rate", choices=MODES),
                "session_timeout_s": Field("float", default=10.0, gt=0),
                "check_interval_s": Field("float", default=1.0, gt=0),
            }
        ),
        "faults": _fault_schema(),
    }

    def agents(self, scenario: dict[str, Any]) -> list[AgentSpec]:
        cluster, work = scenario["cluster"], scenario["workload"]
        members = [f"member-{i + 1}" for i in range(cluster["members"])]
        common = {**work, "gc": cluster["gc"], "monitor": MONITOR}
        specs = [AgentSpec(m, "clusteremu.agents.heartbeat.member:Member", common) for m in members]
        specs.append(
            AgentSpec(
                MONITOR,
                "clusteremu.agents.heartbeat.monitor:Monitor",
                {
                    "members": members,
                    "session_timeout_s": work["session_timeout_s"],
                    "check_interval_s": work["check_interval_s"],
                },
            )
        )
        return specs

    def network_conditions(self, scenario: dict[str, Any]) -> list[Condition]:
        return faults.network_conditions(scenario["faults"])


MODEL = HeartbeatModel()
