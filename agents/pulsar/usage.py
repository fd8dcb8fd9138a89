"""A broker's host usage role: the traffic it serves, its host's counters and the host-usage sampler.

Components:

* :class:`HostUsage`: the rates the broker serves (from its owned bundles' task counts and the workload), the
  integration of its :class:`~.machine.Machine` (the host outlives a restart of the broker: its CPU counters keep
  counting), ``LinuxBrokerHostUsageImpl``'s sampler, and CPU spikes of other processes on the host.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Generator

import numpy as np

from clusteremu.base.java import double_divide

from .machine import Machine
from .reporting import percent_usage

if TYPE_CHECKING:
    from .broker import Broker

#: virtual time 0 as epoch milliseconds, so that a first CPU sample divides by "seconds since the epoch"
EPOCH_MS = 1_700_000_000_000

Rates = tuple[float, float, float, float]


def now_ms(t: float) -> int:
    """Virtual time ``t`` as a broker's clock reads it (epoch milliseconds)."""
    return EPOCH_MS + int(t * 1000)


class HostUsage:
    """The broker's traffic, host and sampled usage (one per run of the broker process; the host is given)."""

    def __init__(self, broker: "Broker", machine: Machine) -> None:
        self.b = broker
        self.machine = machine
        # what the sampler measured last (LocalBrokerData's usage figures)
        self.cpu_percent = 0.0
        self.bw_in_kbps = 0.0
        self.bw_out_kbps = 0.0
        self.elapsed_s = 0.0
        self._last_sample_ms = 0
        self._last_cpu_ns = 0.0
        self._last_bytes = (0.0, 0.0)
        self._rates_cache: tuple[np.ndarray, bytes, Rates] | None = None

    def rates(self, t: float) -> Rates:
        """(msgRateIn, msgRateOut, msgThroughputIn, msgThroughputOut) this broker serves at ``t``."""
        b = self.b
        task_counts = b.ownership.task_counts
        f = b.workload.task_factors(t)
        counts = task_counts.tobytes()
        cached = self._rates_cache
        # the workload hands out one factors array per stretch of constant rates
        if cached is not None and cached[0] is f and cached[1] == counts:
            return cached[2]
        out = b.workload.task_rates(task_counts, t)
        self._rates_cache = (f, counts, out)
        return out

    def advance(self) -> None:
        """Integrate the host up to now at the rates served so far (call it before the rates change)."""
        self.machine.advance(self.b.now, self.rates, self.b.workload.is_steady)
        self.b.reporter.changed()  # the rates or the usage figures change now

    def sample(self) -> Generator:
        """LinuxBrokerHostUsageImpl: usage from two cumulative samples over the elapsed time in whole seconds."""
        b = self.b
        self.advance()
        t_ms = now_ms(b.now)
        elapsed_s = (t_ms - self._last_sample_ms) // 1000  # Java long division, as the Tencent article shows
        m = self.machine
        cpu_ns = m.cpu_seconds * 1e9
        delta_ns = cpu_ns - self._last_cpu_ns
        self.cpu_percent = double_divide(100.0 * delta_ns, elapsed_s) / 1e9
        bin_, bout = m.bytes_in, m.bytes_out
        if self._last_sample_ms:
            self.bw_in_kbps = double_divide((bin_ - self._last_bytes[0]) * 8 / 1000, elapsed_s)
            self.bw_out_kbps = double_divide((bout - self._last_bytes[1]) * 8 / 1000, elapsed_s)
        self.elapsed_s = float(elapsed_s)
        self._last_sample_ms, self._last_cpu_ns, self._last_bytes = t_ms, cpu_ns, (bin_, bout)
        b.emit("host_usage_sampled", cpu=percent_usage(self.cpu_percent, 100.0 * m.cores),
               elapsed_s=float(elapsed_s), bandwidth_in=percent_usage(self.bw_in_kbps, m.nic_kbps),
               bandwidth_out=percent_usage(self.bw_out_kbps, m.nic_kbps))
        # Reading /proc and the cgroup files takes a few milliseconds of the thread's time.
        yield from b.sleep(float(b.rng("sampler").uniform(0.001, 0.005)))

    def cpu_spike(self, cores: float, duration: float) -> Generator:
        """Another process on the host burns ``cores`` for ``duration``: run it with ``env.process`` (it neither
        stops with the broker nor pauses with its GC)."""
        b = self.b
        self.advance()
        self.machine.spike_cores += cores
        b.emit("cpu_spike", cores=cores, duration_s=duration)
        yield b.env.timeout(duration)
        if b.alive:
            b.usage.advance()  # the broker may have restarted meanwhile: its current run integrates the host
        else:  # the broker is down: the host's counters still advance, without traffic
            self.machine.advance(b.now, lambda _t: (0.0, 0.0, 0.0, 0.0))
        self.machine.spike_cores -= cores
