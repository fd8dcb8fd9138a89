"""The common frame of the shedders that carry no state across calls (``OverloadShedder``, ``UniformLoadShedder``).

Contents: :class:`StatelessShedder` — keeps the config and the result multimap that the Java class holds in a field
and clears on every call (so its table keeps the length a busy cycle gave it, see :mod:`.unload_plan`), and
answers ``get_state()``/``set_state()`` with nothing. A subclass writes only ``find_bundles_for_unloading``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..config import PulsarConfig
from ..explain import Explain
from .unload_plan import UnloadPlan

__all__ = ["StatelessShedder"]


class StatelessShedder:
    """Base class of a shedder without carried state, built as ``Shedder(config, rng)`` (``rng`` unused)."""

    def __init__(self, config: PulsarConfig, rng: np.random.Generator | None = None) -> None:
        self.config = config
        self._plan = UnloadPlan()
        #: set to an :class:`..explain.Explain` to record why; None (the default): nothing is recorded
        self.explain: Explain | None = None

    def get_state(self) -> dict[str, Any]:
        """No carried state: ``{}``."""
        return {}

    def set_state(self, state: dict[str, Any]) -> None:
        """Nothing to restore."""

    def _cleared_plan(self) -> UnloadPlan:
        """The result multimap, emptied for a new call (``selectedBundlesCache.clear()``)."""
        self._plan.clear()
        return self._plan
