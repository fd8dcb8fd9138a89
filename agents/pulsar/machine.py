"""A broker's host: turns the traffic of the topics it serves into CPU time, NIC bytes and JVM memory.

CPU is consumed at ``background_cores + spike_cores + cost(traffic)`` cores, integrated over virtual time into a
cumulative CPU-time counter (the cgroup's ``cpuacct.usage``), and NIC bytes likewise, so that the broker's
sampler can compute usage the way Pulsar does: from the difference of two cumulative samples divided by the
elapsed time it measures. Traffic is a step function between integration points plus the workload's own
variation, integrated with sub-steps of at most ``step_s``.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

MIB = 1024 * 1024


class Machine:
    def __init__(self, spec: dict[str, Any], model: dict[str, Any], rng: np.random.Generator,
                 start: float = 0.0) -> None:
        self.cores = spec["cores"]
        self.nic_kbps = spec["nic_gbps"] * 1e6
        self.heap_max_mb = spec["heap_gb"] * 1024
        self.direct_max_mb = spec["direct_memory_gb"] * 1024
        self.m = model
        self.rng = rng
        self.spike_cores = 0.0
        self.cpu_seconds = 0.0  # cumulative CPU time, core-seconds
        self.bytes_in = 0.0
        self.bytes_out = 0.0
        self._t = start  # integrated up to here (virtual time the host came up)

    def cores_for(self, rates: tuple[float, float, float, float]) -> float:
        rin, rout, tin, tout = rates
        m = self.m
        traffic = (rin * m["cpu_us_per_msg_in"] + rout * m["cpu_us_per_msg_out"]) / 1e6
        traffic += (tin + tout) / MIB * m["cpu_ms_per_mib"] / 1e3
        return min(self.cores, m["background_cores"] + self.spike_cores + traffic)

    def advance(self, now: float, rates_at: Callable[[float], tuple[float, float, float, float]],
                is_steady: Callable[[float, float], bool] | None = None) -> None:
        """Integrate CPU time and NIC bytes from the last call up to ``now``, in sub-steps of at most ``step_s``
        each with its own noise. ``is_steady(t0, t1)``: whether the traffic is the same all through [t0, t1], so
        that it is read once rather than per sub-step."""
        t0 = self._t
        if now <= t0:
            return
        steps = max(1, math.ceil((now - t0) / self.m["step_s"]))
        dt = (now - t0) / steps
        sigma = self.m["noise_sigma"]
        if is_steady is not None and is_steady(t0, now):
            r = rates_at(t0 + 0.5 * dt)
            self.bytes_in += r[2] * dt * steps
            self.bytes_out += r[3] * dt * steps
            if sigma > 0 and steps == 1:
                # the same operations on one number (a broker taking 100 bundles at start integrates 100 times)
                noisy = max(0.0, self.rng.standard_normal() * sigma + 1.0) * self.cores_for(r)
                self.cpu_seconds += min(self.cores, noisy) * dt
                self._t = now
                return
            if sigma > 0:
                # the general path's operations, done in place
                cores = self.rng.standard_normal(steps)
                cores *= sigma
                cores += 1.0
                np.maximum(0.0, cores, out=cores)
                cores *= self.cores_for(r)
            else:
                cores = np.full(steps, self.cores_for(r))
        else:
            cores = np.empty(steps)
            for k in range(steps):
                r = rates_at(t0 + (k + 0.5) * dt)
                cores[k] = self.cores_for(r)
                self.bytes_in += r[2] * dt
                self.bytes_out += r[3] * dt
            if sigma > 0:
                cores *= np.maximum(0.0, 1.0 + sigma * self.rng.standard_normal(steps))
        self.cpu_seconds += float(np.minimum(self.cores, cores, out=cores).sum()) * dt
        self._t = now

    def heap_mb(self, topics: int, rates: tuple[float, float, float, float]) -> float:
        m = self.m
        return m["heap_base_mb"] + m["heap_mb_per_topic"] * topics + m["heap_mb_per_mibps"] * (rates[2] + rates[3]) / MIB

    def direct_mb(self, rates: tuple[float, float, float, float]) -> float:
        m = self.m
        return m["direct_base_mb"] + m["direct_mb_per_mibps"] * (rates[2] + rates[3]) / MIB
