"""The run digest: a SHA-256 over the event stream that does not depend on where agents ran.

Each agent's events, in its own sequence order, are hashed as their msgpack payload bytes; the run digest hashes
the agent names and those per-agent digests in name order. Because the canonical order (t, agent, seq) is fully
determined by the per-agent streams, two traces have the same digest exactly when their canonical event
streams are identical — and each worker can compute its agents' part without seeing anyone else's events.
"""
from __future__ import annotations

import hashlib
from typing import Mapping


class AgentDigests:
    """Incremental per-agent SHA-256 of event payloads."""

    def __init__(self) -> None:
        self._h: dict[str, "hashlib._Hash"] = {}
        self.count = 0

    def update(self, agent: str, payload: bytes | memoryview) -> None:
        h = self._h.get(agent)
        if h is None:
            h = self._h[agent] = hashlib.sha256()
        h.update(payload)
        self.count += 1

    def hexdigests(self) -> dict[str, str]:
        return {a: h.hexdigest() for a, h in self._h.items()}


def run_digest(agent_digests: Mapping[str, str]) -> str:
    """Combine per-agent hex digests (from any number of workers) into the run's digest."""
    h = hashlib.sha256()
    for agent in sorted(agent_digests):
        h.update(agent.encode())
        h.update(b"\x00")
        h.update(bytes.fromhex(agent_digests[agent]))
    return h.hexdigest()
