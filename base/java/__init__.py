"""Java semantics in one place: what a faithful re-implementation of Pulsar, RocketMQ or Storm needs to decide
exactly as the JVM does.

* :mod:`.collections`: ``HashMap``/``HashSet``/``ConcurrentHashMap`` iteration orders for string keys, with
  ``String.hashCode``, ``String.compareTo`` and ``Double.compare`` orderings.
"""
from __future__ import annotations

from .collections import (
    JavaHashMapOrder,
    MapKind,
    double_compare_key,
    java_order,
    string_compare_key,
    string_hash_code,
)

__all__ = [
    "JavaHashMapOrder",
    "MapKind",
    "double_compare_key",
    "java_order",
    "string_compare_key",
    "string_hash_code",
]
