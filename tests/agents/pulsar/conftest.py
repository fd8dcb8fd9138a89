"""Helpers shared by the Pulsar model's tests, as fixtures (test modules are imported by path, not as a package)."""
from __future__ import annotations

from typing import Callable, Iterable

import pytest


def owners_over_time(events: Iterable) -> dict[str, str]:
    """Check that no bundle is owned by two brokers at any instant; return the final owners.

    A broker that stops (crash or graceful stop) owns nothing any more from its point of view; a crashed
    broker's ownership nodes live on until its session expires, which the new owner's ``bundle_owned`` waits for.
    """
    owner: dict[str, str] = {}
    for e in events:
        if e.kind == "bundle_owned":
            assert owner.get(e.bundle) in (None, e.agent), f"{e.bundle} owned by {owner.get(e.bundle)} and {e.agent} at {e.t}"
            owner[e.bundle] = e.agent
        elif e.kind == "bundle_unloaded":
            if owner.get(e.bundle) == e.agent:
                del owner[e.bundle]
        elif e.kind == "agent_stopped" and e.agent.startswith("broker-"):
            for b in [b for b, o in owner.items() if o == e.agent]:
                del owner[b]
    return owner


@pytest.fixture(name="owners_over_time")
def owners_over_time_fixture() -> Callable[[Iterable], dict[str, str]]:
    """:func:`owners_over_time`: assert single ownership at every instant, return the final owners."""
    return owners_over_time
