"""Storm strategies by Java class name, simple or fully qualified, per generation."""
from __future__ import annotations

import pytest

from clusteremu.strategies.storm import registry
from clusteremu.strategies.storm.eviction import DefaultEvictionStrategy
from clusteremu.strategies.storm.priority import (
    DefaultSchedulingPriorityStrategy,
    DefaultSchedulingPriorityStrategyV1,
    FIFOSchedulingPriorityStrategy,
    GenericResourceAwareSchedulingPriorityStrategy,
)
from clusteremu.strategies.storm.scheduling import (
    DefaultResourceAwareStrategy,
    DefaultResourceAwareStrategyOld,
    GenericResourceAwareStrategyOld,
    RoundRobinResourceAwareStrategy,
)

PKG = "org.apache.storm.scheduler.resource.strategies."


@pytest.mark.parametrize("name, cls", [
    ("DefaultSchedulingPriorityStrategy", DefaultSchedulingPriorityStrategy),
    (PKG + "priority.FIFOSchedulingPriorityStrategy", FIFOSchedulingPriorityStrategy),
    ("GenericResourceAwareSchedulingPriorityStrategy", GenericResourceAwareSchedulingPriorityStrategy),
])
def test_priority_strategies_2x(name: str, cls: type) -> None:
    assert type(registry.priority_strategy(name)) is cls


def test_the_same_class_name_means_the_1x_strategy_in_1x() -> None:
    name = PKG + "priority.DefaultSchedulingPriorityStrategy"
    assert type(registry.priority_strategy(name, "1.x")) is DefaultSchedulingPriorityStrategyV1
    with pytest.raises(KeyError, match="known: DefaultSchedulingPriorityStrategy, " + PKG.replace(".", r"\.")):
        registry.priority_strategy("FIFOSchedulingPriorityStrategy", "1.x")


@pytest.mark.parametrize("name, cls", [
    ("DefaultResourceAwareStrategy", DefaultResourceAwareStrategy),
    (PKG + "scheduling.RoundRobinResourceAwareStrategy", RoundRobinResourceAwareStrategy),
    ("GenericResourceAwareStrategyOld", GenericResourceAwareStrategyOld),
])
def test_scheduling_strategies_come_from_the_model(name: str, cls: type) -> None:
    assert registry.scheduling_strategy(name) is cls


def test_1x_has_one_scheduling_class_modelled_by_the_old_default() -> None:
    assert registry.scheduling_strategy("DefaultResourceAwareStrategy", "1.x") is DefaultResourceAwareStrategyOld
    assert registry.names("scheduling", "1.x") == ["DefaultResourceAwareStrategy",
                                                   PKG + "scheduling.DefaultResourceAwareStrategy"]
    with pytest.raises(KeyError):
        registry.scheduling_strategy("GenericResourceAwareStrategy", "1.x")


def test_eviction_exists_only_in_1x() -> None:
    assert isinstance(registry.eviction_strategy(PKG + "eviction.DefaultEvictionStrategy"), DefaultEvictionStrategy)
    assert registry.names("eviction", "2.x") == []
    with pytest.raises(KeyError, match="unknown Storm 1.x eviction strategy 'Other'; known: DefaultEvictionStrategy"):
        registry.eviction_strategy("Other")


def test_unknown_and_misplaced_names_list_the_known_ones() -> None:
    with pytest.raises(KeyError) as err:
        registry.priority_strategy("Nope")
    assert "FIFOSchedulingPriorityStrategy" in err.value.args[0] and PKG + "priority." in err.value.args[0]
    # a known simple name in the wrong package is not that class
    with pytest.raises(KeyError):
        registry.priority_strategy("com.example.DefaultSchedulingPriorityStrategy")
    with pytest.raises(KeyError):
        registry.scheduling_strategy(PKG + "priority.DefaultResourceAwareStrategy")


def test_canonical_names_and_generation() -> None:
    assert registry.canonical_name("priority", "FIFOSchedulingPriorityStrategy") == \
        PKG + "priority.FIFOSchedulingPriorityStrategy"
    assert registry.generation_of({}) == "2.x"
    assert registry.generation_of({registry.EVICTION_STRATEGY_KEY: None}) == "2.x"
    assert registry.generation_of({registry.EVICTION_STRATEGY_KEY: "DefaultEvictionStrategy"}) == "1.x"
