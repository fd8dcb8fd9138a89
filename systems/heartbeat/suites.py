"""The heartbeat model's sweep suite."""
from __future__ import annotations

from clusteremu.emulator.systems import Suite

SUITES: dict[str, Suite] = {
    "kernel": Suite(("kernel-heartbeat",), "the kernel's own heartbeat model"),
}
