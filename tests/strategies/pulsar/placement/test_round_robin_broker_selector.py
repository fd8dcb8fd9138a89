"""RoundRobinBrokerSelector (reference §8.2), including Pulsar's ModularLoadManagerStrategyTest.testRoundRobinBrokerSelector."""
import pytest

from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar.placement import RoundRobinBrokerSelector

INT_MAX = 2**31 - 1


def test_pulsar_round_robin_case():
    brokers = ["1", "2", "3"]
    n = len(brokers)
    s = pulsar.create("RoundRobinBrokerSelector")
    assert s.select_broker([], None, None) is None
    i = 0
    for _ in range(10):
        assert s.select_broker(brokers, None, None) == str(i % n + 1)
        i += 1
    # The same set in another order is still served from the cached order.
    for _ in range(10):
        assert s.select_broker(["2", "3", "1"], None, None) == str(i % n + 1)
        i += 1
    brokers3 = ["1", "2", "4"]
    assert [s.select_broker(brokers3) for _ in range(6)] == ["4", "1", "2", "4", "1", "2"]
    brokers4 = ["2", "4"]
    assert [s.select_broker(brokers4) for _ in range(4)] == ["2", "4", "2", "4"]
    s.set_state({"count": INT_MAX, "ref": s.get_state()["ref"]})
    assert s.select_broker(brokers) == str(INT_MAX % n + 1)
    assert s.get_state()["count"] == 0


def test_empty_candidates_do_not_advance_the_counter():
    s = RoundRobinBrokerSelector()
    s.select_broker(["a", "b"])
    assert s.select_broker([]) is None
    assert s.get_state()["count"] == 1
    assert s.select_broker(["a", "b"]) == "b"


def test_cache_is_refreshed_when_the_selected_broker_left():
    s = RoundRobinBrokerSelector()
    assert s.select_broker(["a", "b", "c"]) == "a"
    # Same size, index 1 still in range, but the cached "b" is gone: refresh from the new order.
    assert s.select_broker(["a", "x", "c"]) == "x"
    assert s.get_state()["ref"] == ["a", "x", "c"]


def test_cache_is_kept_when_the_same_brokers_come_in_another_order():
    s = RoundRobinBrokerSelector()
    s.select_broker(["a", "b", "c"])
    s.select_broker(["c", "b", "a"])
    assert s.get_state()["ref"] == ["a", "b", "c"]


def test_state_round_trip_and_validation():
    s = RoundRobinBrokerSelector()
    s.set_state({"count": 5, "ref": ["p", "q"]})
    assert s.get_state() == {"count": 5, "ref": ["p", "q"]}
    assert s.select_broker(["p", "q"]) == "q"
    with pytest.raises(ValueError):
        s.set_state({"count": -1, "ref": []})
