"""Shared helpers of the transport tests: short runs of built-in scenarios under any placement."""
from __future__ import annotations

import pytest

from clusteremu.scenarios.catalog import builtins

from ...shrink import SHRINK as GOLDEN_SHRINK

#: the large scenarios shrunk as the golden test shrinks them, except that these runs last 120 s: Storm's faults come
#: within that (the golden test's come at 600 s and later)
SHRINK = {**GOLDEN_SHRINK,
          "storm-large": ['cluster.supervisors=[{count=5, rack="/rack-00"}, {count=5, rack="/rack-01"}]',
                          'faults=[{kind="restart", at=60.0, duration_s=30.0, agents=["supervisor-3"]}]']}


@pytest.fixture(scope="session")
def builtin_names() -> list[str]:
    return [b.name for b in builtins()]


@pytest.fixture(autouse=True)
def reap():
    """Kill the subprocesses a test left running, even when it failed."""
    from .proc_helpers import reap_started

    yield
    reap_started()
