"""A broker's leadership role: the leader election (the kernel's :class:`~clusteremu.emulator.election.LeaderElection`
on :data:`~.store.LEADER_PATH`) and, while this broker leads, the load manager.

Components:

* :class:`Leadership`: joins the election through the broker's metadata session; on winning it writes
  ``leader_elected`` and starts the configured load manager (modular or extensible); it stops the load manager
  when the broker stops leading (session lost, graceful stop) and routes the store notifications the load
  manager watches.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generator

from clusteremu.emulator.election import LeaderElection

from .extensible_load_manager import ExtensibleLoadManager
from .leader import LeaderLoadManager
from .load_manager import LoadManager
from .store import LEADER_PATH

if TYPE_CHECKING:
    from .broker import Broker


class Leadership:
    """The broker's part in the election and, while it leads, its load manager (one per run of the process)."""

    def __init__(self, broker: "Broker") -> None:
        self.b = broker
        self.election = LeaderElection(broker.store, LEADER_PATH, on_elected=self._elected,
                                       may_contend=lambda: not broker.stopping)
        self.lm: LeaderLoadManager | None = None

    @property
    def leader(self) -> str | None:
        """The leader as this broker knows it."""
        return self.election.leader

    @property
    def is_leading(self) -> bool:
        """Whether this broker believes it leads and runs the load manager."""
        return self.lm is not None and self.election.leader == self.b.name

    def run(self) -> Generator:
        """``yield from leadership.run()``: join the election (watch the leader node, contend once)."""
        yield from self.election.run()

    def known_brokers(self) -> set[str]:
        """The brokers this one knows to be up: the load manager's active set, else just the leader."""
        leader = self.election.leader
        return self.lm.active if self.lm is not None else {leader} if leader else set()

    def on_notify(self, path: str, change: str, data: Any) -> bool:
        """A store notification: the leader node, or a node the load manager watches; False if neither."""
        if path == LEADER_PATH:
            self.election.on_notify(change, data)
        elif self.lm is not None and path.startswith(self.lm.watched):
            self.lm.on_notify(path, change, data)
        else:
            return False
        return True

    def stop(self) -> None:
        """Stop leading (a graceful stop leaves the election: its session closes soon)."""
        if self.lm is not None:
            self.lm.stop()
            self.lm = None

    def session_lost(self) -> None:
        """The session ended with its leader node, if it held it: stop, and forget who leads."""
        self.stop()
        self.election.forget()

    def _elected(self, previous: str) -> None:
        b = self.b
        b.emit("leader_elected", previous=previous)
        self.lm = ExtensibleLoadManager(b) if b.xchannel is not None else LoadManager(b)
        b.spawn(self.lm.start())
