"""Keyed randomness (DESIGN.md principle 4).

Every entity draws from its own generator derived from (run seed, entity name, purpose). Nothing is drawn from a
shared stream, so adding an entity, or moving one to another worker process, changes no other entity's draws.
The key is hashed with SHA-256 rather than Python's ``hash()``, which is salted per process.
"""
from __future__ import annotations

import hashlib

import numpy as np


def key_words(seed: int, *names: str) -> list[int]:
    """Four 64-bit words derived from the seed and the names; stable across processes and hosts."""
    h = hashlib.sha256()
    h.update(str(int(seed)).encode())
    for name in names:
        h.update(b"\x00")
        h.update(name.encode())
    digest = h.digest()
    return [int.from_bytes(digest[i : i + 8], "little") for i in range(0, 32, 8)]


def keyed_rng(seed: int, *names: str) -> np.random.Generator:
    """A generator of its own for ``names`` (e.g. ``("broker-1", "gc")``) under run ``seed``."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(key_words(seed, *names))))
