"""``RoundRobinBrokerSelector``: hand out candidates in turn (``LB/impl/RoundRobinBrokerSelector.java``).

The modular load manager uses it, instead of the configured placement strategy, for bundles of namespaces in
``loadBalancerSheddingExcludedNamespaces`` (they are never rebalanced, so they should start out spread).

API::

    s = RoundRobinBrokerSelector(config, rng)     # neither is used; the signature is the registry's
    s.select_broker(candidates, bundle, load)     # -> broker id, or None for no candidates
    s.get_state() / s.set_state(state)            # {"count": int, "ref": [broker, ...]}

Per call with ``n`` candidates (``n == 0`` → ``None``, the counter does not move):

* ``index = count % n``, then ``count`` advances, wrapping from ``2**31 - 1`` to 0 (``getAndUpdate``);
* the cached list ``ref`` is replaced by a copy of the candidates (in their order) when its size differs from
  ``n`` or ``index`` is past its end, or when ``ref[index]`` is no longer a candidate;
* the answer is ``ref[index]``.

So the same candidates in another order keep being served from the old cache, and a changed set restarts
the cycle from the new order at the current counter position.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np

from clusteremu.base.java import INT_MAX

from ..config import PulsarConfig, as_config
from ..load_data import LoadData
from .strategy import BrokerChoice, unique_candidates

__all__ = ["RoundRobinBrokerSelector"]


class RoundRobinBrokerSelector:
    """Pulsar's ``RoundRobinBrokerSelector`` (stateful: counter and cached candidate list)."""

    def __init__(self, config: PulsarConfig | Mapping[str, Any] | None = None, rng: np.random.Generator | None = None) -> None:
        self.config = as_config(config)
        self.rng = rng
        self.count = 0
        self.ref: list[str] = []

    def get_state(self) -> dict[str, Any]:
        return {"count": self.count, "ref": list(self.ref)}

    def set_state(self, state: dict[str, Any]) -> None:
        count = int(state.get("count", 0))
        if not 0 <= count <= INT_MAX:
            raise ValueError(f"count must be in [0, 2**31 - 1], got {count}")
        self.count = count
        self.ref = [str(b) for b in state.get("ref", [])]

    def select(self, candidates: Iterable[str], bundle: str | None = None, load: LoadData | None = None) -> BrokerChoice:
        """The next candidate in turn (see the module docstring)."""
        cands = unique_candidates(candidates)
        n = len(cands)
        if n == 0:
            return BrokerChoice(None)
        cache = self.ref
        index = self.count % n
        self.count = 0 if self.count == INT_MAX else self.count + 1
        refreshed = False
        if len(cache) <= index or n != len(cache):
            cache = list(cands)
            refreshed = True
        selected = cache[index]
        if selected not in cands:
            cache = list(cands)
            refreshed = True
            selected = cache[index]
        if refreshed:
            self.ref = cache
        return BrokerChoice(selected, tuple(cands))

    def select_broker(
        self, candidates: Iterable[str], bundle: str | None = None, load: LoadData | None = None
    ) -> str | None:
        """``selectBroker``: the next candidate in turn, or ``None``."""
        return self.select(candidates, bundle, load).broker
