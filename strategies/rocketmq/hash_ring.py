"""RocketMQ's consistent-hash ring (``common.consistenthash.ConsistentHashRouter`` with its default ``MD5Hash``).

Holds :func:`md5_hash` and :class:`ConsistentHashRouter`.
"""
from __future__ import annotations

import bisect
import hashlib
from functools import lru_cache
from typing import Iterable

from clusteremu.base.java import utf8_bytes

__all__ = ["ConsistentHashRouter", "md5_hash"]


@lru_cache(maxsize=1 << 16)  # pure; the same client and queue names are hashed on every allocation
def md5_hash(key: str) -> int:
    """``MD5Hash.hash``: the first four bytes of MD5(UTF-8 of ``key``) as a big-endian unsigned int (0 .. 2^32-1).

    5.x encodes with UTF-8 explicitly; 4.9.x calls ``key.getBytes()`` (the JVM's default charset), which is the
    same for ASCII ids and for any JVM running with UTF-8, but not for non-ASCII ids on, say, a GBK platform.
    """
    return int.from_bytes(hashlib.md5(utf8_bytes(key)).digest()[:4], "big")


class ConsistentHashRouter:
    """A ring of virtual nodes ``"<node>-<replica>"`` mapped to their physical node, built as Java builds it.

    Nodes are added in the given order. ``addNode`` numbers a node's replicas after those of the same node already on
    the ring (``getExistingReplicas``), so a node listed twice gets replicas ``vnodes .. 2*vnodes-1`` the second time;
    a virtual node whose hash is already on the ring replaces the earlier one (``TreeMap.put``).
    """

    def __init__(self, nodes: Iterable[str], virtual_node_count: int) -> None:
        if virtual_node_count < 0:
            raise ValueError(f"illegal virtual node counts :{virtual_node_count}")
        ring: dict[int, str] = {}
        on_ring: dict[str, int] = {}  # physical node -> how many of its virtual nodes the ring holds now
        for node in nodes:
            existing = on_ring.get(node, 0)
            for i in range(virtual_node_count):
                h = md5_hash(f"{node}-{i + existing}")
                previous = ring.get(h)
                if previous is not None:
                    on_ring[previous] -= 1
                ring[h] = node
                on_ring[node] = on_ring.get(node, 0) + 1
        self._keys = sorted(ring)
        self._owners = [ring[k] for k in self._keys]

    def __len__(self) -> int:
        """Number of virtual nodes on the ring."""
        return len(self._keys)

    def route_node(self, object_key: str) -> str | None:
        """``routeNode``: the node of the first virtual node at or after ``md5_hash(object_key)``, wrapping to the
        smallest; None on an empty ring."""
        if not self._keys:
            return None
        i = bisect.bisect_left(self._keys, md5_hash(object_key))
        return self._owners[i if i < len(self._keys) else 0]
