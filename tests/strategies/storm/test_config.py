"""Storm config keys used by RAS: defaults from defaults.yaml (or Storm's code), types, and the typed reader."""
from __future__ import annotations

import pytest

from clusteremu.base.errors import InputError
from clusteremu.strategies.storm.config import DEFAULTS, KEYS, convert_value, read_config

# Storm 2.8 conf/defaults.yaml, or the default Storm's code applies where the file has none
EXPECTED = {
    "supervisor.cpu.capacity": 400.0,
    "supervisor.memory.capacity.mb": 4096.0,
    "supervisor.resources.map": {},
    "supervisor.slots.ports": [6700, 6701, 6702, 6703],
    "topology.component.cpu.pcore.percent": 10.0,
    "topology.component.resources.onheap.memory.mb": 128.0,
    "topology.component.resources.offheap.memory.mb": 0.0,
    "topology.component.resources.map": {},
    "topology.worker.max.heap.size.mb": 768.0,
    "topology.priority": 29,
    "topology.scheduler.strategy":
        "org.apache.storm.scheduler.resource.strategies.scheduling.DefaultResourceAwareStrategy",
    "topology.submitter.user": None,
    "topology.workers": 1,
    "topology.acker.executors": None,
    "topology.ras.one.executor.per.worker": False,
    "topology.ras.one.component.per.worker": False,
    "topology.ras.acker.executors.per.worker": 1,
    "topology.ras.constraint.max.state.search": 10000,
    "topology.scheduler.favored.nodes": None,
    "topology.scheduler.unfavored.nodes": None,
    "resource.aware.scheduler.user.pools": {},
    "resource.aware.scheduler.priority.strategy":
        "org.apache.storm.scheduler.resource.strategies.priority.DefaultSchedulingPriorityStrategy",
    "resource.aware.scheduler.max.topology.scheduling.attempts": 5,
    "resource.aware.scheduler.constraint.max.state.search": 100000,
    "storm.worker.min.cpu.pcore.percent": 0.0,
    "nimbus.monitor.freq.secs": 10,
    "nimbus.supervisor.timeout.secs": 60,
    "supervisor.heartbeat.frequency.secs": 5,
}


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_defaults(key):
    assert DEFAULTS[key] == EXPECTED[key]
    assert type(DEFAULTS[key]) is type(EXPECTED[key])


def test_read_fills_defaults_and_converts():
    conf = read_config({"topology.priority": "3", "supervisor.cpu.capacity": 800,
                        "topology.ras.one.executor.per.worker": "true",
                        "topology.scheduler.favored.nodes": ["h1", "h2"],
                        "resource.aware.scheduler.user.pools": {"alice": {"cpu": 100, "memory": 1024}},
                        "resource.aware.scheduler.constraint.max.state.search": "100_000",
                        "some.other.key": [1, 2]})
    assert conf["topology.priority"] == 3
    assert conf["supervisor.cpu.capacity"] == 800.0 and isinstance(conf["supervisor.cpu.capacity"], float)
    assert conf["topology.ras.one.executor.per.worker"] is True
    assert conf["topology.scheduler.favored.nodes"] == ["h1", "h2"]
    assert conf["resource.aware.scheduler.user.pools"] == {"alice": {"cpu": 100.0, "memory": 1024.0}}
    assert conf["resource.aware.scheduler.constraint.max.state.search"] == 100000
    assert conf["some.other.key"] == [1, 2]
    assert conf["topology.worker.max.heap.size.mb"] == 768.0
    assert read_config(None) == read_config({})


def test_defaults_are_not_shared_between_reads():
    a = read_config({})
    a["supervisor.resources.map"]["gpu.count"] = 1.0
    assert read_config({})["supervisor.resources.map"] == {}


@pytest.mark.parametrize(("key", "value", "where"), [
    ("topology.priority", 2.5, "conf.topology.priority"),
    ("topology.priority", True, "conf.topology.priority"),
    ("supervisor.cpu.capacity", "lots", "conf.supervisor.cpu.capacity"),
    ("topology.ras.one.executor.per.worker", "yes", "conf.topology.ras.one.executor.per.worker"),
    ("topology.scheduler.favored.nodes", "h1", "conf.topology.scheduler.favored.nodes"),
    ("topology.scheduler.favored.nodes", ["h1", 2], "conf.topology.scheduler.favored.nodes[1]"),
    ("supervisor.resources.map", {"gpu.count": "x"}, "conf.supervisor.resources.map.gpu.count"),
    ("resource.aware.scheduler.user.pools", {"bob": 5}, "conf.resource.aware.scheduler.user.pools.bob"),
    ("topology.worker.max.heap.size.mb", None, "conf.topology.worker.max.heap.size.mb"),
    ("supervisor.slots.ports", [6700, "p"], "conf.supervisor.slots.ports[1]"),
])
def test_bad_values_name_the_key(key, value, where):
    with pytest.raises(InputError) as err:
        read_config({key: value}, "conf")
    assert err.value.where == where


def test_nullable_keys_accept_null():
    conf = read_config({"topology.acker.executors": None, "topology.isolated.machines": None})
    assert conf["topology.acker.executors"] is None
    assert convert_value("int", None, "x", nullable=True) is None


def test_every_key_is_documented_with_a_scope():
    for key in KEYS.values():
        assert key.doc and key.scope in ("daemon", "topology")
        convert_value(key.kind, key.default, key.name, key.nullable)  # every default passes its own check
