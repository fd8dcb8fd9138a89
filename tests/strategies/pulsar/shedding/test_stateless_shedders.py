"""The shedders without carried state share one frame: config, the reused result multimap, empty state."""
import pytest

from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar.load_data import LoadData
from clusteremu.strategies.pulsar.shedding.stateless import StatelessShedder


@pytest.mark.parametrize("name", ["OverloadShedder", "UniformLoadShedder"])
def test_stateless_shedders_carry_nothing_and_reuse_their_multimap(name):
    shedder = pulsar.create(name, {"maxUnloadPercentage": 0.5})
    assert isinstance(shedder, StatelessShedder)
    assert shedder.config["maxUnloadPercentage"] == 0.5
    assert shedder.get_state() == {}
    shedder.set_state({"anything": 1})
    assert shedder.get_state() == {}
    plan = shedder._plan
    assert shedder.find_bundles_for_unloading(LoadData()) == []
    assert shedder._plan is plan  # cleared, not replaced: Java keeps the multimap in a field
