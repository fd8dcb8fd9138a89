"""The placement strategy interface (``ModularLoadManagerStrategy``) and what a choice reports.

Every placement strategy is built by the registry as ``Strategy(config, rng)`` — ``config`` a
:class:`~clusteremu.strategies.pulsar.config.PulsarConfig` (a plain mapping is accepted too: :func:`~clusteremu.strategies.pulsar.config.as_config`), ``rng`` a
``numpy.random.Generator`` that every random choice draws from — and offers::

    s.select_broker(candidates, bundle, load)   # -> broker id or None   (selectBrokerForBundle)
    s.select(candidates, bundle, load)          # -> BrokerChoice: the same choice with how it was made
    s.get_state(); s.set_state(state)           # carried state, keyed by the Java field names
    s.on_active_brokers_change(active)          # where Java has it

``candidates`` is the candidate *set* in the order Java iterates it (duplicates are ignored, as a ``Set``
has none); the order matters for ties, for float sums and for the round-robin cache.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Protocol, runtime_checkable

from ..load_data import LoadData

__all__ = ["BrokerChoice", "PlacementStrategy", "unique_candidates"]


@dataclass(frozen=True)
class BrokerChoice:
    """A placement decision: the broker (``None`` if there was no candidate), the brokers it was drawn from,
    and whether it was a random fallback over all candidates because none qualified as "best"."""

    broker: str | None
    best: tuple[str, ...] = ()
    random_fallback: bool = False


@runtime_checkable
class PlacementStrategy(Protocol):
    """``ModularLoadManagerStrategy.selectBroker``."""

    def select_broker(self, candidates: Iterable[str], bundle: str, load: LoadData) -> str | None: ...


def unique_candidates(candidates: Iterable[str]) -> list[str]:
    """The candidates as a Java ``Set`` would hold them: first occurrence kept, order preserved."""
    return list(dict.fromkeys(candidates))
