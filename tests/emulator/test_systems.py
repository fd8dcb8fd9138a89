"""The system registry: the built-in systems load through their entry points, a plug-in that fails to load is
named rather than taking the others down, and ``register`` adds a system in-process."""
from __future__ import annotations

import pytest

from clusteremu.emulator import systems
from clusteremu.emulator.models import load_model, model_names
from clusteremu.emulator.systems import Suite, System


def test_every_built_in_entry_point_loads():
    assert systems.broken() == {}
    assert {"heartbeat", "pulsar"} <= set(systems.systems())


def test_every_target_of_every_system_imports():
    for name, sys_ in systems.systems().items():
        for field in ("model", "figures", "rating", "decide", "strategies", "views", "suites"):
            target = getattr(sys_, field)
            if target is not None:
                assert systems.load(target) is not None, f"{name}.{field}"
        assert sys_.library_dir() is None or sys_.library_dir().is_dir()
        for suite in (systems.load(sys_.suites).values() if sys_.suites else ()):
            assert isinstance(suite, Suite) and suite.scenarios


def test_an_unknown_model_lists_the_known_ones():
    with pytest.raises(KeyError, match="unknown model 'kafka'; known: .*pulsar"):
        systems.system("kafka")


def test_register_adds_a_system_in_process_and_unregister_removes_it():
    toy = System(name="zz-inline", description="d", model="clusteremu.agents.heartbeat.model:MODEL")
    systems.register(toy)
    try:
        assert "zz-inline" in model_names() and load_model("zz-inline").name == "heartbeat"
    finally:
        systems.unregister("zz-inline")
    assert "zz-inline" not in model_names()
    with pytest.raises(TypeError):
        systems.register("pulsar")  # type: ignore[arg-type]


def test_a_broken_entry_point_is_named_when_used(monkeypatch):
    class EP:
        name, value = "ghost", "no.such.module:SYSTEM"

        def load(self):
            raise ModuleNotFoundError("No module named 'no'")

    monkeypatch.setattr(systems, "entry_points", lambda group: [EP()])
    systems.reload()
    try:
        assert "ghost" in systems.broken() and "ghost" not in systems.systems()
        with pytest.raises(KeyError, match="registered but broken.*no.such.module"):
            systems.system("ghost")
    finally:
        monkeypatch.undo()
        systems.reload()
    assert "pulsar" in systems.systems()
