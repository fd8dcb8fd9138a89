"""The kernel's own heartbeat model as a clusteremu system (``agents/heartbeat``): members heartbeat a monitor
that expires their sessions. It exercises every kernel mechanism with no system's logic on top."""
from __future__ import annotations

from clusteremu.emulator.systems import System

SYSTEM = System(
    name="heartbeat",
    description="members heartbeat a monitor that expires sessions (the kernel's own model)",
    model="clusteremu.agents.heartbeat.model:MODEL",
    events=("clusteremu.agents.heartbeat.member", "clusteremu.agents.heartbeat.monitor"),
    entity_keys=("member",),
    figures="clusteremu.tools.analysis.heartbeat:HeartbeatFigures",
    suites="clusteremu.systems.heartbeat.suites:SUITES",
    library="clusteremu.scenarios.library.heartbeat",
)
