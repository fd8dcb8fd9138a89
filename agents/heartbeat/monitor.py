"""The monitor: tracks each member's last heartbeat and expires sessions after the timeout."""
from __future__ import annotations

from clusteremu.emulator.agent import Agent
from clusteremu.emulator.messages import Message
from clusteremu.emulator.trace.kinds import declare

declare(
    "heartbeat_received",
    "The monitor received heartbeat `n` of `member`; `gap_s` is the time since that member's previous one.",
    __name__,
    member="str",
    n="int",
    gap_s="float",
)
declare("session_expired", "No heartbeat from `member` for longer than the session timeout.", __name__, member="str", silent_s="float")
declare("session_restored", "A heartbeat arrived from a member whose session had expired.", __name__, member="str")


class Monitor(Agent):
    kind = "monitor"

    def on_start(self) -> None:
        self._last: dict[str, float] = {m: self.now for m in self.params["members"]}
        self._expired: set[str] = set()
        self.executor().schedule_with_fixed_delay(
            self._check, self.params["check_interval_s"], self.params["check_interval_s"], name="session-check"
        )

    def on_message(self, msg: Message) -> None:
        if msg.kind != "heartbeat":
            return
        member = msg.src
        prev = self._last.get(member, self.now)
        self._last[member] = self.now
        self.emit("heartbeat_received", member=member, n=msg.body["n"], gap_s=self.now - prev)
        if member in self._expired:
            self._expired.discard(member)
            self.emit("session_restored", member=member)

    def _check(self) -> None:
        timeout = self.params["session_timeout_s"]
        for member, last in self._last.items():
            silent = self.now - last
            if silent > timeout and member not in self._expired:
                self._expired.add(member)
                self.emit("session_expired", member=member, silent_s=silent)
