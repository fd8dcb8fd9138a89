"""A member: heartbeats the monitor on a JVM-like timer and suffers GC pauses."""
from __future__ import annotations

from typing import Generator

import simpy

from clusteremu.emulator.agent import Agent
from clusteremu.emulator.trace.kinds import declare

declare("heartbeat_sent", "A member sent heartbeat number `n` to the monitor.", __name__, n="int")


class Member(Agent):
    kind = "member"

    def on_start(self) -> None:
        p = self.params
        interval = p["heartbeat_interval_s"]
        phase = float(self.rng("phase").uniform(0.0, interval))
        self._n = 0
        self.executor().schedule_periodic(p["timer_mode"], self._beat, phase, interval, name="heartbeat")
        gc = p["gc"]
        if gc["young_every_s"] > 0:
            self.spawn(self._gc("young", gc["young_every_s"], gc["young_pause_ms"] / 1000.0, gc["sigma"]))
        if gc["full_every_s"] > 0:
            self.spawn(self._gc("full", gc["full_every_s"], gc["full_pause_s"], gc["sigma"]))

    def _beat(self) -> None:
        self._n += 1
        self.send(self.params["monitor"], "heartbeat", {"n": self._n})
        self.emit("heartbeat_sent", n=self._n)

    def _gc(self, kind: str, every_s: float, median_s: float, sigma: float) -> Generator[simpy.Event, None, None]:
        rng = self.rng(f"gc-{kind}")
        while True:
            yield from self.sleep(float(rng.exponential(every_s)))
            self.stop_the_world(float(median_s * rng.lognormal(0.0, sigma)), cause=f"gc-{kind}")
