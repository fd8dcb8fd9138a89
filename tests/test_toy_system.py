"""A system added from outside the project: a tiny package in a temporary directory, registered through the
``clusteremu.systems`` entry point (a ``*.dist-info/entry_points.txt`` on ``sys.path``, as an installed package
has), driven through ``scenarios``, ``validate``, ``run``, ``analyze``, ``compare`` and ``decide`` with no file of
the project edited. Worker processes find it the same way (the directory is on their ``PYTHONPATH``)."""
from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from clusteremu.cli import main
from clusteremu.emulator import systems

PACKAGE = {
    "toysys/__init__.py": '''
        from clusteremu.emulator.systems import Suite, System

        SYSTEM = System(
            name="toy",
            description="a pinger and a ponger",
            model="toysys.model:MODEL",
            events=("toysys.agents",),
            entity_keys=("pinger",),
            decide="toysys.decide:ADAPTER",
            strategies="toysys.strategies",
            suites="toysys:SUITES",
            library="toysys.library",
        )
        SUITES = {"toy-all": Suite(("toy-ping",), "the toy's only scenario")}
    ''',
    "toysys/agents.py": '''
        from clusteremu.emulator.agent import Agent
        from clusteremu.emulator.trace.kinds import declare

        declare("toy_ping", "A pinger pinged the ponger.", __name__, n="int")
        declare("toy_pong", "The ponger answered `pinger`.", __name__, pinger="str", n="int")


        class Pinger(Agent):
            def on_start(self):
                self.n = 0
                self.executor().schedule_at_fixed_rate(self.ping, 0.5, self.params["every_s"], name="ping")

            def ping(self):
                self.n += 1
                self.emit("toy_ping", n=self.n)
                self.send("ponger", "ping", {"n": self.n})


        class Ponger(Agent):
            def on_message(self, msg):
                self.emit("toy_pong", pinger=msg.src, n=msg.body["n"])
    ''',
    "toysys/model.py": '''
        from clusteremu.emulator import faults
        from clusteremu.emulator.models import AgentSpec
        from clusteremu.scenarios.schema import Field, Table


        class ToyModel:
            name = "toy"
            description = "a pinger and a ponger"
            sections = {
                "cluster": Table({"pingers": Field("int", default=2, ge=1)}),
                "workload": Table({"every_s": Field("float", default=5.0, gt=0)}),
                "strategy": Table({"name": Field("str", default="Loud")}),
                "faults": faults.fault_schema(),
            }

            def agents(self, scenario):
                specs = [AgentSpec(f"pinger-{i + 1}", "toysys.agents:Pinger", {"every_s": scenario["workload"]["every_s"]})
                         for i in range(scenario["cluster"]["pingers"])]
                return specs + [AgentSpec("ponger", "toysys.agents:Ponger")]

            def network_conditions(self, scenario):
                return faults.network_conditions(scenario["faults"])


        MODEL = ToyModel()
    ''',
    "toysys/strategies.py": '''
        NAMES = ("Loud", "org.example.toy.Loud", "Quiet")


        def names():
            return list(NAMES)


        def canonical_name(name):
            return "org.example.toy." + name.rsplit(".", 1)[-1]
    ''',
    "toysys/decide.py": '''
        import json

        from clusteremu.base.errors import InputError
        from clusteremu.cli.decide import read_input


        class ToyDecide:
            summary = "how loudly to answer some pings"

            def add_arguments(self, group):
                group.add_argument("--toy-volume", type=int, default=1)

            def claims(self, path, text):
                try:
                    return "pings" in json.loads(text)
                except ValueError:
                    return False

            def run(self, args, strategy):
                obj = json.loads(read_input(args))
                if not isinstance(obj.get("pings"), int):
                    raise InputError(f"{args.snapshot}: pings", "expected an integer")
                loud = (strategy or "Loud").endswith("Loud")
                print(json.dumps({"answers": obj["pings"] * args.toy_volume * (2 if loud else 1)}))
                return 0


        ADAPTER = ToyDecide()
    ''',
    "toysys/library/toy-ping.toml": '''
        [scenario]
        name = "toy-ping"
        model = "toy"
        duration_s = 60
        description = "two pingers ping a ponger"

        [cluster]
        pingers = 2
    ''',
    "toysys-0.1.dist-info/METADATA": '''
        Metadata-Version: 2.1
        Name: toysys
        Version: 0.1
    ''',
    "toysys-0.1.dist-info/entry_points.txt": '''
        [clusteremu.systems]
        toy = toysys:SYSTEM
    ''',
}


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """The toy package installed by putting its directory on sys.path and the workers' PYTHONPATH."""
    root = tmp_path_factory.mktemp("site")
    for rel, text in PACKAGE.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    sys.path.insert(0, str(root))
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), old]))
    systems.reload()
    yield root
    sys.path.remove(str(root))
    if old is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = old
    for name in [m for m in sys.modules if m == "toysys" or m.startswith("toysys.")]:
        del sys.modules[name]
    systems.reload()


def test_the_entry_point_registers_the_toy(toy):
    assert "toy" in systems.systems() and systems.system("toy").library_dir() == toy / "toysys" / "library"


def test_scenarios_lists_it_under_its_system(toy, capsys):
    assert main(["scenarios", "--format", "json"]) == 0
    listed = {s["name"]: s["system"] for s in json.loads(capsys.readouterr().out)}
    assert listed["toy-ping"] == "toy" and listed["kernel-heartbeat"] == "heartbeat"


def test_validate_accepts_it_and_refuses_its_mistakes(toy, tmp_path, capsys):
    assert main(["validate", "toy-ping"]) == 0
    bad = tmp_path / "bad.toml"
    bad.write_text('[scenario]\nname = "b"\nmodel = "toy"\nduration_s = 10\n[cluster]\npingers = 0\n')
    assert main(["validate", str(bad)]) == 2
    assert "cluster.pingers" in capsys.readouterr().err


def test_run_in_process_and_in_two_worker_processes_gives_one_trace(toy, tmp_path):
    from clusteremu.emulator.trace.query import Trace, entity_of

    assert main(["run", "toy-ping", "--out", str(tmp_path / "a"), "--quiet"]) == 0
    assert main(["run", "toy-ping", "--out", str(tmp_path / "b"), "--quiet", "--agents", "procs:2"]) == 0
    a, b = (json.loads((tmp_path / d / "manifest.json").read_text()) for d in "ab")
    assert a["complete"] and a["events"]["digest"] == b["events"]["digest"]
    trace = Trace(tmp_path / "a")
    assert trace.count("toy_ping") == 2 * 12 and trace.count("toy_pong") == 2 * 12
    assert {entity_of(e) for e in trace.select("toy_pong")} == {"pinger-1", "pinger-2"}


@pytest.mark.spark
@pytest.mark.slow
def test_analyze_and_compare_group_it_by_its_strategy(toy, tmp_path, spark, capsys):
    for seed in (1, 2):
        assert main(["run", "toy-ping", "--seed", str(seed), "--out", str(tmp_path / f"s{seed}"), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["analyze", str(tmp_path / "s1"), str(tmp_path / "s2"), "--no-report", "--format", "json"]) == 0
    summaries = json.loads(capsys.readouterr().out)
    assert [s["summary"]["run"]["model"] for s in summaries] == ["toy", "toy"]
    assert summaries[0]["summary"]["figures"]["events"]["total"] > 0
    assert main(["compare", str(tmp_path / "s1"), str(tmp_path / "s2"), "--format", "json"]) == 0
    groups = json.loads(capsys.readouterr().out)["groups"]
    assert [(g["label"], g["runs"]) for g in groups] == [("Loud", 2)]


def test_decide_finds_the_system_by_strategy_or_by_input(toy, tmp_path, capsys):
    snapshot = tmp_path / "pings.json"
    snapshot.write_text('{"pings": 3}')
    assert main(["decide", str(snapshot), "--strategy", "org.example.toy.Loud", "--toy-volume", "2"]) == 0
    assert json.loads(capsys.readouterr().out) == {"answers": 12}
    assert main(["decide", str(snapshot)]) == 0  # no strategy: the toy claims the input
    assert json.loads(capsys.readouterr().out) == {"answers": 6}
    assert main(["decide", str(snapshot), "--strategy", "Quiet"]) == 0
    assert json.loads(capsys.readouterr().out) == {"answers": 3}
    snapshot.write_text('{"pings": "many"}')
    assert main(["decide", str(snapshot)]) == 2
    assert "pings.json: pings: expected an integer" in capsys.readouterr().err


def test_no_file_of_the_project_names_the_toy():
    root = Path(__file__).resolve().parents[1]
    for folder in ("base", "emulator", "strategies", "agents", "scenarios", "tools", "systems", "clusteremu"):
        for path in (root / folder).rglob("*.py"):
            assert "toysys" not in path.read_text(), path
