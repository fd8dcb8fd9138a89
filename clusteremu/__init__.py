"""clusteremu: an agent-based, multi-process emulator of the control plane of Pulsar, RocketMQ and Storm.

The repository's top-level folders install as subpackages of this one: ``clusteremu.base`` (errors, Java
semantics), ``clusteremu.emulator`` (the kernel), ``clusteremu.strategies``, ``clusteremu.agents``,
``clusteremu.scenarios`` and ``clusteremu.tools``.
"""
from __future__ import annotations

__version__ = "0.1.0"
