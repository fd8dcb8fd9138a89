"""Pulsar's nodes in the metadata store (the kernel's ZooKeeper-like :class:`~clusteremu.emulator.metadata_store.MetadataStore`,
run as the agent :data:`STORE`): load reports (``/loadbalance/brokers/<broker>``), bundle ownership
(``/namespace/<bundle>``) and the leader (``/loadbalance/leader``)."""
from __future__ import annotations

STORE = "metadata-store"
LEADER_PATH = "/loadbalance/leader"
BROKERS_PREFIX = "/loadbalance/brokers/"
OWNERSHIP_PREFIX = "/namespace/"
