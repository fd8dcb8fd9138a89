"""A pool of worker processes that maps a function over tasks, in order, and survives a worker's death.

:func:`pool_map` is what a sweep runs its points and renders its reports with. Unlike
``concurrent.futures.ProcessPoolExecutor`` — whose pool is broken for every pending task once one worker dies —
each worker here holds one task at a time, so the task of a worker that dies (killed, out of memory, crashed in
native code) is known: it alone fails, and a new worker takes the remaining tasks.

Workers are fresh interpreters (``spawn``), not forks: the caller may hold a Spark gateway and its threads, which
a fork would copy.
"""
from __future__ import annotations

import multiprocessing
import os
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def pool_map(
    fn: Callable[[T], R],
    tasks: Sequence[T],
    *,
    jobs: int | None = None,
    done: Callable[[R], None] | None = None,
    died: Callable[[T, str], R],
) -> list[R]:
    """``[fn(t) for t in tasks]``, computed by ``jobs`` worker processes (default one per core; with 1, or a
    single task, in this process), in task order whatever the order they finish in. ``fn`` must be a
    module-level function, the tasks and results picklable. ``done`` is called with each result as it arrives.
    When a worker dies, ``died(task, reason)`` is the result of the task it held."""
    jobs = max(1, jobs or os.cpu_count() or 1)
    report = done or (lambda result: None)
    if jobs == 1 or len(tasks) <= 1:
        out = []
        for t in tasks:
            out.append(fn(t))
            report(out[-1])
        return out
    ctx = multiprocessing.get_context("spawn")
    results: dict[int, R] = {}
    pending = list(range(len(tasks)))[::-1]  # popped from the end: task order
    busy: dict[Any, tuple[Any, int]] = {}  # our end of a worker's pipe → (the worker, index of its task)

    def give(conn: Connection, proc: Any) -> None:
        i = pending.pop()
        conn.send(tasks[i])
        busy[conn] = (proc, i)

    def start_worker() -> None:
        mine, theirs = ctx.Pipe()
        proc = ctx.Process(target=_worker, args=(theirs, fn), name="clusteremu-pool-worker")
        proc.start()
        theirs.close()  # so that our end reads end-of-file when the worker dies
        give(mine, proc)

    try:
        for _ in range(min(jobs, len(tasks))):
            start_worker()
        while busy:
            for conn in wait(list(busy)):
                proc, i = busy.pop(conn)
                try:
                    results[i] = conn.recv()
                except (EOFError, OSError):
                    conn.close()
                    proc.join()
                    results[i] = died(tasks[i], f"its worker process died (exit code {proc.exitcode})")
                    report(results[i])
                    if pending:
                        start_worker()
                    continue
                report(results[i])
                if pending:
                    give(conn, proc)
                else:
                    conn.send(None)
                    conn.close()
                    proc.join()
    finally:
        for conn, (proc, _i) in busy.items():  # left only when interrupted; these are the pool's own workers
            proc.terminate()
            proc.join()
            conn.close()
    return [results[i] for i in range(len(tasks))]


def _worker(conn: Connection, fn: Callable[[Any], Any]) -> None:
    """A worker: ``fn`` of each task received, sent back, until told to stop (None) or the caller is gone."""
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        conn.send(fn(task))
