"""The workload's task rates over virtual time."""
import numpy as np
import pytest

from clusteremu.agents.pulsar.workload import Workload

NAMESPACES = [{"name": "public/default", "bundles": 4}]


def task(name, rate, start_s=0.0, end_s=0.0, pattern=None):
    return {"name": name, "namespace": "public/default", "topics": 4, "rate_msgs": rate, "msg_bytes": 100,
            "subscriptions": 1, "start_s": start_s, "end_s": end_s, "pattern": pattern or {"kind": "constant"}}


def test_constant_tasks_share_one_read_only_factors_array_per_stretch():
    wl = Workload(NAMESPACES, [task("a", 10.0), task("b", 5.0, start_s=60.0, end_s=120.0)])
    before, at_start, inside, at_end = (wl.task_factors(t) for t in (59.9, 60.0, 119.0, 120.0))
    assert before.tolist() == [10.0, 0.0] and at_start.tolist() == [10.0, 5.0] and at_end.tolist() == [10.0, 0.0]
    assert inside is at_start and wl.task_factors(0.0) is before and at_end is not before
    with pytest.raises(ValueError):
        inside[0] = 1.0


def test_varying_tasks_are_read_at_each_time():
    wl = Workload(NAMESPACES, [task("a", 10.0, pattern={"kind": "on_off", "on_s": 10.0, "off_s": 10.0,
                                                        "off_factor": 0.5})])
    assert wl.task_factors(5.0).tolist() == [10.0] and wl.task_factors(15.0).tolist() == [5.0]
    assert np.array_equal(wl.task_factors(5.0), wl.task_factors(25.0))


@pytest.mark.parametrize("count", [1, 3, 7, 9])
def test_task_rates_are_numpys_sums_to_the_bit(count):
    rng = np.random.default_rng(count)
    tasks = [{**task(f"t{i}", float(rng.uniform(0.1, 1e4))), "msg_bytes": int(rng.integers(1, 1 << 20)),
              "subscriptions": int(rng.integers(0, 4))} for i in range(count)]
    wl = Workload(NAMESPACES, tasks)
    for _ in range(200):
        per_task = rng.integers(0, 10_000, size=count).astype(float)
        rin = per_task * wl.task_factors(0.0)
        rout = rin * np.array([t.subscriptions for t in wl.tasks], dtype=float)
        size = np.array([t.msg_bytes for t in wl.tasks])
        expected = (float(rin.sum()), float(rout.sum()), float((rin * size).sum()), float((rout * size).sum()))
        assert wl.task_rates(per_task, 0.0) == expected


def test_clients_of_many_topics_is_client_of_each_in_their_order():
    from clusteremu.agents.pulsar.workload import client_of, clients_of

    clients = ["client-0", "client-1", "client-2"]
    topics = [7, 0, 5, 3, 11]
    assert clients_of(topics, clients) == {t: client_of(t, clients) for t in topics}
    assert list(clients_of(topics, clients)) == topics
