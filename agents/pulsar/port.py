"""The broker as its roles and the leader's load managers see it: one narrow, typed interface.

Components:

* :class:`BrokerPort`: what :mod:`.load_manager`, :mod:`.extensible_load_manager`, :mod:`.extensible_channel`,
  :mod:`.extensible_reporting` and :mod:`.split` may use of the broker: its identity and configuration, the
  agent's messaging, events, processes and randomness, and its roles (:attr:`~BrokerPort.store`, the metadata
  session; :attr:`~BrokerPort.timers`, the load-manager executor; :attr:`~BrokerPort.ownership`,
  :attr:`~BrokerPort.usage`, :attr:`~BrokerPort.reporter`, :attr:`~BrokerPort.leadership`). Nothing else of the
  broker, in particular none of the agent's internals.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generator, Protocol

import numpy as np
import simpy

from clusteremu.emulator.election import MetadataSession
from clusteremu.emulator.executor import ScheduledExecutor
from clusteremu.emulator.messages import Message

if TYPE_CHECKING:
    from .extensible_channel import ServiceUnitChannel
    from .leadership import Leadership
    from .ownership import BundleOwnership
    from .reporter import LoadReporter
    from .usage import HostUsage
    from .workload import Workload


class BrokerPort(Protocol):
    """See the module docstring."""

    name: str
    config: dict[str, Any]
    params: dict[str, Any]
    workload: "Workload"
    env: simpy.Environment
    alive: bool
    #: the cause of a graceful stop in progress, or None
    stopping: str | None

    store: MetadataSession
    timers: ScheduledExecutor
    ownership: "BundleOwnership"
    usage: "HostUsage"
    reporter: "LoadReporter"
    leadership: "Leadership"
    #: the extensible load manager's channel view (None with the modular load manager)
    xchannel: "ServiceUnitChannel | None"

    @property
    def now(self) -> float: ...

    def now_ms(self) -> int:
        """Virtual time as the broker's clock reads it (epoch milliseconds)."""
        ...

    def emit(self, kind: str, **fields: Any) -> None: ...

    def spawn(self, gen: Generator) -> simpy.Process: ...

    def send(self, dst: str, kind: str, body: Any = None) -> None: ...

    def call(self, dst: str, kind: str, body: dict | None = None, timeout: float = 30.0) -> Generator: ...

    def reply(self, request: Message, body: dict | None = None) -> None: ...

    def sleep(self, delay: float) -> Generator[simpy.Event, None, None]: ...

    def runnable(self) -> Generator[simpy.Event, None, None]: ...

    def rng(self, purpose: str = "default") -> np.random.Generator: ...
