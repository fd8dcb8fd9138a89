"""``LeastLongTermMessageRate``: place a bundle on the broker with the lowest long-term message rate.

Follows ``LB/impl/LeastLongTermMessageRate.java`` (reference §8.2), the default placement strategy.

API::

    s = LeastLongTermMessageRate(config, rng)
    s.select_broker(candidates, bundle, load)   # -> broker id, or None when there is no candidate
    s.select(candidates, bundle, load)          # -> BrokerChoice (broker, best, random_fallback)
    s.score(broker, load)                       # -> float, msg/s (or +inf)

Score of a broker (msg/s): ``+inf`` if its 4-argument weighted max resource usage is **strictly** above
``loadBalancerBrokerOverloadedThresholdPercentage / 100`` (CPU, direct memory, bandwidth in/out, configured
weights, float32 percentages; NaN signals are ignored by the max, usage above 100 % is kept); otherwise the
sum of its preallocated bundles' long-term ``msgRateIn + msgRateOut`` (``ConcurrentHashMap`` order) plus its
time-average ``longTermMsgRateIn + longTermMsgRateOut``. Preallocated bundles make back-to-back placements
see each other.

Choice: ``best`` holds every candidate whose score equals the running minimum (which starts at ``+inf``, so
when every candidate scores ``+inf`` they are all best); a NaN score never enters ``best``. If ``best`` is
empty (all scores NaN) it falls back to all candidates. The broker is ``best[rng.integers(len(best))]`` — one
draw per call with at least one candidate, like Java's ``ThreadLocalRandom.nextInt``. No candidates → ``None``.
A candidate without broker data raises ``KeyError`` (Java: ``NullPointerException``).

Stateless (``bestBrokers`` is scratch space in Java): ``get_state()`` is ``{}``.

Versions: the overload test has been the unweighted max (oldest), a 5-argument weighted max including heap
memory (2.x), and the 4-argument weighted max of the newest modular code (reference §2), which this follows.
With the newest defaults (memory and direct-memory weights 0) the last two agree.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

import numpy as np

from clusteremu.base.java import java_order

from ..config import PulsarConfig, as_config
from ..load_data import BrokerData, LoadData
from .strategy import BrokerChoice, unique_candidates

__all__ = ["LeastLongTermMessageRate"]

_MEMO_SIZE = 1 << 16


class LeastLongTermMessageRate:
    """Pulsar's ``LeastLongTermMessageRate`` placement strategy."""

    def __init__(self, config: PulsarConfig | Mapping[str, Any] | None = None, rng: np.random.Generator | None = None) -> None:
        self.config = as_config(config)
        self.rng = rng if rng is not None else np.random.default_rng(0)
        # Whether a broker is overloaded, by its usage figures (see _overloaded).
        self._overloaded_memo: dict[tuple[float, ...], bool] = {}

    def get_state(self) -> dict[str, Any]:
        """No state is carried across calls."""
        return {}

    def set_state(self, state: dict[str, Any]) -> None:
        """Accepts only the empty state."""
        if state:
            raise ValueError(f"LeastLongTermMessageRate carries no state, got keys {sorted(state)}")

    def _overloaded(self, data: BrokerData) -> bool:
        """The weighted max usage is strictly above the threshold.

        Remembered by the eight usage figures it is a pure function of: a placement scores every candidate,
        and a broker's figures change only with its reports. Two keys that compare equal but differ in their
        bits (0.0 and -0.0) can only change the sign of a zero maximum, which the comparison does not see; a
        NaN key never matches and is computed each time."""
        local = data.local_data
        cpu, mem, bw_in, bw_out = local.cpu, local.direct_memory, local.bandwidth_in, local.bandwidth_out
        key = (cpu.usage, cpu.limit, mem.usage, mem.limit, bw_in.usage, bw_in.limit, bw_out.usage, bw_out.limit)
        memo = self._overloaded_memo
        hit = memo.get(key)
        if hit is None:
            threshold = self.config["loadBalancerBrokerOverloadedThresholdPercentage"] / 100.0
            hit = local.max_resource_usage_with_weight(*self.config.resource_weights()) > threshold
            if len(memo) >= _MEMO_SIZE:
                memo.clear()
            memo[key] = hit
        return hit

    def _broker_score(self, data: BrokerData) -> float:
        if self._overloaded(data):
            return math.inf
        preallocated = data.preallocated_bundle_data
        total = 0.0
        for bundle in java_order(preallocated, "concurrent"):
            long_term = preallocated[bundle].long_term_data
            total += long_term.msg_rate_in + long_term.msg_rate_out
        averages = data.time_average_data
        return total + (averages.long_term_msg_rate_in + averages.long_term_msg_rate_out)

    def score(self, broker: str, load: LoadData) -> float:
        """``getScore``: the broker's estimated long-term message rate (msg/s), ``+inf`` when overloaded."""
        data = load.broker_data.get(broker)
        if data is None:
            raise KeyError(f"no broker data for candidate {broker!r}")
        return self._broker_score(data)

    def select(self, candidates: Iterable[str], bundle: str, load: LoadData) -> BrokerChoice:
        """The choice with the brokers it was drawn from (see the module docstring)."""
        cands = unique_candidates(candidates)
        best: list[str] = []
        min_score = math.inf
        for broker in cands:
            score = self.score(broker, load)
            if score < min_score:
                best = [broker]
                min_score = score
            elif score == min_score:
                best.append(broker)
        fallback = False
        if not best:
            best = list(cands)
            fallback = bool(best)
        if not best:
            return BrokerChoice(None)
        broker = best[int(self.rng.integers(len(best)))]
        return BrokerChoice(broker, tuple(best), fallback)

    def select_broker(self, candidates: Iterable[str], bundle: str, load: LoadData) -> str | None:
        """``selectBroker``: a broker with the least long-term message rate, or ``None``."""
        return self.select(candidates, bundle, load).broker
