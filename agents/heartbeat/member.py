"""A member: a JVM (:class:`~clusteremu.emulator.jvm.JvmAgent`) that heartbeats the monitor on a JVM-like timer,
so its garbage-collection pauses and ``gc_storm`` faults delay the heartbeats."""
from __future__ import annotations

from clusteremu.emulator.jvm import JvmAgent
from clusteremu.emulator.trace.kinds import declare

declare("heartbeat_sent", "A member sent heartbeat number `n` to the monitor.", __name__, n="int")


class Member(JvmAgent):
    kind = "member"

    def on_start(self) -> None:
        p = self.params
        interval = p["heartbeat_interval_s"]
        phase = float(self.rng("phase").uniform(0.0, interval))
        self._n = 0
        self.executor().schedule_periodic(p["timer_mode"], self._beat, phase, interval, name="heartbeat")
        self.start_gc(p["gc"])

    def _beat(self) -> None:
        self._n += 1
        self.send(self.params["monitor"], "heartbeat", {"n": self._n})
        self.emit("heartbeat_sent", n=self._n)
