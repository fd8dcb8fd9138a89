"""The worker pool of sweeps: results in task order whatever finishes first, and a dying worker fails its task
only. The tasks are callables run by ``operator.call`` (picklable by reference), so no test code needs to be
importable in the workers."""
from __future__ import annotations

import operator
import os
import time
from functools import partial

from clusteremu.tools.pool import pool_map


def died(task, reason):
    return ("died", reason)


def test_results_come_in_task_order_whatever_finishes_first():
    # The first task is the slowest: with two workers, the others finish before it.
    tasks = [partial(time.sleep, 0.8), partial(abs, -1), partial(abs, -2), partial(max, 3, 4), partial(min, 5, 6)]
    seen = []
    out = pool_map(operator.call, tasks, jobs=2, done=seen.append, died=died)
    assert out == [None, 1, 2, 4, 5]
    assert sorted(seen, key=str) == sorted(out, key=str)  # each result told once, as it arrived
    assert pool_map(operator.call, tasks[1:], jobs=1, died=died) == [1, 2, 4, 5]


def test_a_worker_that_dies_fails_its_task_only():
    tasks = [partial(abs, -3), partial(os._exit, 7), partial(abs, -5), partial(abs, -6), partial(os._exit, 9)]
    out = pool_map(operator.call, tasks, jobs=2, died=died)
    assert out[0] == 3 and out[2] == 5 and out[3] == 6
    assert out[1] == ("died", "its worker process died (exit code 7)")
    assert out[4] == ("died", "its worker process died (exit code 9)")
