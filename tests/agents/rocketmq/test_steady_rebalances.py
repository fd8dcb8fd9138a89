"""What the steady rebalances (agents/rocketmq/steady_rebalances.py) rely on of the keyed streams: the runs they
count draw their brokers in one call, which must leave the stream where the runs' one draw each leaves it (the
next real rebalance, and the consumer's next start, draw from there). A NumPy whose bounded draws buffer
otherwise would fail here before it moved a trace."""
from __future__ import annotations

import pytest

from clusteremu.emulator.rng import keyed_rng


@pytest.mark.parametrize("brokers", [1, 2, 3, 10, 50])
@pytest.mark.parametrize("runs", [1, 2, 7, 64])
def test_counted_runs_draw_in_one_call_what_the_runs_draw_one_by_one(brokers, runs):
    one_by_one, at_once = (keyed_rng(5, "consumer-7", "findBrokerAddrByTopic") for _ in range(2))
    one_by_one.integers(0, 3), at_once.integers(0, 3)  # a draw before: an odd number of 32-bit halves used
    drawn = [int(one_by_one.integers(0, brokers)) for _ in range(runs)]
    assert at_once.integers(0, brokers, size=runs).tolist() == drawn
    assert at_once.bit_generator.state == one_by_one.bit_generator.state
    assert int(at_once.integers(0, 1000)) == int(one_by_one.integers(0, 1000))
