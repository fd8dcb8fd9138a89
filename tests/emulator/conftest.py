"""Fixtures for kernel unit tests: a bare environment with agents, without a coordinator."""
from __future__ import annotations

import pytest
import simpy

from clusteremu.emulator.agent import Agent, AgentContext


class Harness:
    def __init__(self, seed: int = 1) -> None:
        self.env = simpy.Environment()
        self.outbox: list = []
        self.events: list = []
        self.seed = seed

    def agent(self, cls: type[Agent] = Agent, name: str = "a", **params) -> Agent:
        a = cls(name, AgentContext(self.env, self.seed, self.outbox, self.events, params))
        a.start()
        return a


@pytest.fixture
def harness() -> Harness:
    return Harness()


@pytest.fixture
def make_harness():
    return Harness
