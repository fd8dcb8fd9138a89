"""The ``restart`` fault of Storm's daemons: the process (a host crash for a supervisor: its workers go too)
stops at once and starts again ``duration_s`` later, as a process supervisor (systemd, supervisord) would
restart it.

* :func:`restart_later`: crash the agent now and start it again later; the wake-up is a plain timer of the
  environment, not a process of the agent, so the crash does not end it.
"""
from __future__ import annotations

from clusteremu.emulator.agent import Agent

__all__ = ["restart_later"]


def restart_later(agent: Agent, down_s: float) -> None:
    """Crash ``agent`` now (``reason`` ``restart``) and start it again after ``down_s`` seconds."""
    if not agent.alive:
        return
    agent.crash("restart")
    agent.env.timeout(down_s).callbacks.append(lambda _ev: None if agent.alive else agent.start())
