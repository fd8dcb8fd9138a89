"""The trace (DESIGN.md principle 6): an append-only stream of events in msgpack-framed segment files.

``open_run(run_dir)`` is the reader API that tools and tests build on.
"""
from .reader import Event, Run, SegmentProblem, open_run

__all__ = ["Event", "Run", "SegmentProblem", "open_run"]
