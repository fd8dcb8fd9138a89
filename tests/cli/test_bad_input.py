"""Bad input, table-driven: every case is a command line over files it writes, and must exit 2 with a message
that names the file, key or flag, and leave what was already written as it was.

Extend ``CASES`` for any new input type: ``files`` are written into a fresh directory (bytes or text), ``argv``
may use ``{dir}`` for it, and ``names`` are the substrings the message must contain.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from clusteremu.cli import main

HEARTBEAT = '[scenario]\nname = "hb"\nmodel = "heartbeat"\nduration_s = 60\n'


@dataclass(frozen=True)
class Case:
    id: str
    argv: tuple[str, ...]
    names: tuple[str, ...]
    files: dict[str, str | bytes] = field(default_factory=dict)


CASES = [
    Case("unknown model: one message, not a list of unknown keys",
         ("validate", "{dir}/s.toml"), ("s.toml", "scenario.model", "unknown value 'kafka'"),
         {"s.toml": '[scenario]\nname = "k"\nmodel = "kafka"\nduration_s = 10\n[cluster]\nbrokers = 3\n'}),
    Case("scenario file that is not UTF-8", ("validate", "{dir}/s.toml"), ("s.toml", "not UTF-8"),
         {"s.toml": b'[scenario]\nname = "\xff\xfe"\n'}),
    Case("scenario file that is not TOML", ("run", "{dir}/s.toml", "--out", "{dir}/run"), ("s.toml", "not valid TOML"),
         {"s.toml": "[scenario\n"}),
    Case("absurd duration", ("validate", "{dir}/s.toml"), ("scenario.duration_s", "at most"),
         {"s.toml": HEARTBEAT.replace("duration_s = 60", "duration_s = 1e300")}),
    Case("absurd --until", ("run", "{dir}/s.toml", "--until", "1e308", "--out", "{dir}/run"), ("--until", "at most"),
         {"s.toml": HEARTBEAT}),
    Case("a fault naming an agent that does not exist",
         ("validate", "{dir}/s.toml"), ("faults[0].agents", "'member-9' matches no agent"),
         {"s.toml": HEARTBEAT + '[[faults]]\nkind = "crash"\nat = 10\nagents = ["member-9"]\n'}),
    Case("a fault after the scenario's end",
         ("validate", "{dir}/s.toml"), ("faults[0].at", "not before the scenario's end"),
         {"s.toml": HEARTBEAT + '[[faults]]\nkind = "crash"\nat = 90\nagents = ["member-1"]\n'}),
    Case("a partition between agents that do not exist",
         ("validate", "{dir}/s.toml"), ("faults[0].between[1]", "'zookeeper' matches no agent"),
         {"s.toml": HEARTBEAT + '[[faults]]\nkind = "partition"\nat = 10\nduration_s = 5\n'
                                'between = [["member-*"], ["zookeeper"]]\n'}),
    Case("--set of a path through a value", ("validate", "{dir}/s.toml", "--set", "scenario.name.x=1"),
         ("--set scenario.name.x=1", "is a value, not a table"), {"s.toml": HEARTBEAT}),
    Case("a sweep of a hundred million seeds", ("sweep", "kernel-heartbeat", "--seeds", "1..100000000", "--out", "{dir}/sw"),
         ("--seeds 1..100000000", "more than 10,000 seeds"), {}),
    Case("decide with a strategy no system knows", ("decide", "{dir}/in.json", "--strategy", "NoSuchShedder"),
         ("--strategy", "unknown strategy 'NoSuchShedder'"), {"in.json": "{}"}),
    Case("decide on an input no system recognises", ("decide", "{dir}/in.json"), ("in.json", "no system recognises"),
         {"in.json": '{"something": 1}'}),
    Case("decide on a missing file", ("decide", "{dir}/missing.json", "--strategy", "ThresholdShedder"),
         ("missing.json", "not found"), {}),
    Case("decide on a snapshot that is not JSON", ("decide", "{dir}/in.json", "--strategy", "ThresholdShedder"),
         ("in.json", "not valid JSON"), {"in.json": "{brokerData"}),
]

# Pulsar decide: what a cluster gives, with a required field left out (the message names the file and the field)
_USAGE = '{"usage": 10.0, "limit": 100.0}'
_STATS = '{"msgRateIn": 10.0, "msgThroughputIn": 10240.0, "msgRateOut": 10.0, "msgThroughputOut": 10240.0}'
_REPORT = ('{"loadReportType": "LocalBrokerData", "webServiceUrl": "http://b1:8080", '
           + ", ".join(f'"{r}": {_USAGE}' for r in ("cpu", "memory", "directMemory", "bandwidthIn", "bandwidthOut"))
           + ', "msgRateIn": 10.0, "msgRateOut": 10.0, "msgThroughputIn": 10240.0, "msgThroughputOut": 10240.0, '
           + '"lastStats": {"t/ns/0x00000000_0xffffffff": ' + _STATS + "}}")
_LOCAL = '{"cpu": ' + _USAGE + ', "msgRateIn": 1.0, "msgRateOut": 1.0, "msgThroughputIn": 1.0, ' \
         '"msgThroughputOut": 1.0, "bundles": []}'
_BROKER_LOAD = ('{"weightedMaxEMA": 0.5, "msgThroughputIn": 1.0, "msgThroughputOut": 1.0, "msgThroughputEMA": 2.0, '
                '"updatedAt": 1764079200000}')
CASES += [
    Case("pulsar decide: the hot broker's localData left out of a LoadData",
         ("decide", "{dir}/in.json"), ("in.json", 'brokerData["hot"].localData', "missing required field 'localData'"),
         {"in.json": '{"brokerData": {"hot": {}, "cold": {"localData": ' + _LOCAL + '}}, "bundleData": {}}'}),
    Case("pulsar decide: a LoadData with no broker", ("decide", "{dir}/in.json"), ("in.json", "brokerData", "empty"),
         {"in.json": '{"brokerData": {}, "bundleData": {}}'}),
    Case("pulsar decide: a LoadData without bundleData", ("decide", "{dir}/in.json"),
         ("in.json", "bundleData", "missing required field 'bundleData' of LoadData"),
         {"in.json": '{"brokerData": {"b1": {"localData": ' + _LOCAL + '}}}'}),
    Case("pulsar decide: a LoadData broker without cpu", ("decide", "{dir}/in.json"),
         ("in.json", 'brokerData["b1"].localData.cpu', "missing required field 'cpu'"),
         {"in.json": '{"brokerData": {"b1": {"localData": ' + _LOCAL.replace('"cpu"', '"cpuX"') + '}}, '
                     '"bundleData": {}}'}),
    Case("pulsar decide: a LoadData bundle without shortTermData", ("decide", "{dir}/in.json"),
         ("in.json", 'bundleData["t/ns/0x00000000_0xffffffff"].shortTermData', "missing required field"),
         {"in.json": '{"brokerData": {"b1": {"localData": ' + _LOCAL + '}}, '
                     '"bundleData": {"t/ns/0x00000000_0xffffffff": {"longTermData": {}}}}'}),
    Case("pulsar decide: a load report without cpu", ("decide", "{dir}/report.json"),
         ("report.json", "cpu", "missing required field 'cpu' of LocalBrokerData"),
         {"report.json": _REPORT.replace('"cpu"', '"cpuX"')}),
    Case("pulsar decide: a load report whose memory has no limit", ("decide", "{dir}/report.json"),
         ("report.json", "memory.limit", "missing required field 'limit' of ResourceUsage"),
         {"report.json": _REPORT.replace('"memory": ' + _USAGE, '"memory": {"usage": 10.0}')}),
    Case("pulsar decide: a metadata-store node whose bundle stats lack a rate", ("decide", "{dir}/nodes.json"),
         ("nodes.json", '["/loadbalance/brokers/b1:8080"].lastStats["t/ns/0x00000000_0xffffffff"].msgThroughputIn'),
         {"nodes.json": '{"/loadbalance/brokers/b1:8080": '
                        + _REPORT.replace('"msgThroughputIn": 10240.0, "msgRateOut"', '"msgRateOut"') + "}"}),
    Case("pulsar decide: BrokerLoadData without updatedAt", ("decide", "{dir}/topics.json"),
         ("topics.json", '["loadbalancer-broker-load-data"]["b1:8080"].updatedAt', "missing required field"),
         {"topics.json": '{"loadbalancer-broker-load-data": {"b1:8080": '
                         + _BROKER_LOAD.replace(', "updatedAt": 1764079200000', "") + "}}"}),
    Case("pulsar decide: a TopBundlesLoadData entry without stats", ("decide", "{dir}/topics.json"),
         ("topics.json", "topBundlesLoadData[0].stats", "missing required field 'stats' of BundleLoadData"),
         {"topics.json": '{"loadbalancer-broker-load-data": {"b1:8080": ' + _BROKER_LOAD + '}, '
                         '"non-persistent://pulsar/system/loadbalancer-top-bundles-load-data": {"b1:8080": '
                         '{"topBundlesLoadData": [{"bundleName": "t/ns/0x00000000_0xffffffff"}]}}}'}),
    Case("pulsar decide: a directory that holds no Pulsar dump", ("decide", "{dir}", "--system", "pulsar"),
         ("holds no Pulsar dump",), {"notes.txt": "hello"}),
]


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_exits_2_naming_what_is_wrong_and_changes_nothing(case, tmp_path, capsys):
    for name, content in case.files.items():
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    (tmp_path / "earlier-output.txt").write_text("written before the command ran\n")
    before = _digest(tmp_path)
    argv = [a.format(dir=tmp_path) for a in case.argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    for name in case.names:
        assert name in err, f"{case.id}: {name!r} not in {err!r}"
    assert "Traceback" not in err
    assert _digest(tmp_path) == before, f"{case.id}: files changed"
