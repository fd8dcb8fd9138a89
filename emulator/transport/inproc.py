"""In-process transport: the worker lives in the coordinator's process and runs when asked."""
from __future__ import annotations

from ..messages import Message
from ..trace.writer import WriterSummary
from ..worker import Worker


class InprocLink:
    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self.agents = worker.agent_names
        self._result: tuple[list[Message], float, int] | None = None

    def next_time(self) -> float:
        return self.worker.next_time()

    def advance(self, until: float, inbound: list[Message], since: float = 0.0) -> None:
        self._result = self.worker.advance(until, inbound, since)

    def result(self) -> tuple[list[Message], float, int]:
        res, self._result = self._result, None
        assert res is not None, "result() without advance()"
        return res

    def finish(self, until: float | None = None) -> WriterSummary:
        return self.worker.finish(until)
