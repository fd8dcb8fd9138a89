"""``clusteremu decide`` on recorded snapshot series (data/), driven through its own argparse parser."""
import argparse
import json
from pathlib import Path

import pytest

from clusteremu.cli import decide
from clusteremu.base.errors import InputError

DATA = Path(__file__).parent / "data"


def parse(argv):
    parser = argparse.ArgumentParser()
    decide.add_parser(parser.add_subparsers())
    return parser.parse_args(["decide", *argv])


def run_json(argv, capsys):
    assert decide.run(parse([*argv, "--format", "json"])) == 0
    return json.loads(capsys.readouterr().out)


def test_avg_shedder_waits_for_the_eighth_low_hit_then_evens_the_pair(capsys):
    steps = run_json([str(DATA / "avg_low_hits.json"), "--config", str(DATA / "avgshedder.conf")], capsys)
    assert len(steps) == 8
    assert steps[:7] == [[]] * 7
    moved = steps[7]
    assert moved and {d["broker"] for d in moved} == {"broker-1"}
    assert {d["destination"] for d in moved} == {"broker-2"}
    snapshot = json.loads((DATA / "avg_low_hits.json").read_text())[7]
    rate = {b: v["localData"]["msgRateIn"] + v["localData"]["msgRateOut"] for b, v in snapshot["brokerData"].items()}
    bundle_rate = {b: v["shortTermData"]["msgRateIn"] + v["shortTermData"]["msgRateOut"]
                   for b, v in snapshot["bundleData"].items()}
    shifted = sum(bundle_rate[d["bundle"]] for d in moved)
    assert rate["broker-1"] - shifted == rate["broker-2"] + shifted  # maxUnloadPercentage=0.5: even traffic


def test_avg_shedder_acts_on_the_second_high_hit(capsys):
    steps = run_json([str(DATA / "avg_high_hits.json"), "--config", str(DATA / "avgshedder.conf")], capsys)
    assert steps[0] == [] and steps[1]
    assert {d["destination"] for d in steps[1]} == {"broker-2"}


def test_state_file_round_trip_equals_one_run_over_the_whole_series(tmp_path, capsys):
    series = json.loads((DATA / "avg_low_hits.json").read_text())
    whole = run_json([str(DATA / "avg_low_hits.json"), "--strategy", "AvgShedder", "--set", "maxUnloadPercentage=0.5"],
                     capsys)
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    first.write_text(json.dumps(series[:5]))
    second.write_text(json.dumps(series[5:]))
    state = tmp_path / "avg.state"
    common = ["--strategy", "AvgShedder", "--set", "maxUnloadPercentage=0.5", "--state", str(state)]
    part1 = run_json([str(first), *common], capsys)
    saved = json.loads(state.read_text())
    assert saved["strategy"] == "AvgShedder" and saved["state"]["brokerHitCountForLow"]["broker-1"] == 5
    part2 = run_json([str(second), *common], capsys)
    assert part1 + part2 == whole
    assert whole[7]  # the split really spans the trigger


def test_a_single_snapshot_object_is_one_step(tmp_path, capsys):
    one = tmp_path / "one.json"
    one.write_text(json.dumps(json.loads((DATA / "avg_high_hits.json").read_text())[0]))
    assert run_json([str(one), "--strategy", "AvgShedder"], capsys) == [[]]


def test_bad_snapshot_names_the_file_and_json_path():
    path = str(DATA / "bad_snapshot.json")
    with pytest.raises(InputError) as err:
        decide.run(parse([path, "--strategy", "AvgShedder"]))
    assert err.value.where == f'{path}: [2].brokerData["broker-1"].localData.cpu.usage'
    assert err.value.reason == 'expected a number, got "high"'


def test_unknown_strategy_and_unknown_set_key_are_input_errors():
    path = str(DATA / "avg_high_hits.json")
    with pytest.raises(InputError, match="LeastLongTermMessageRate"):
        decide.run(parse([path, "--strategy", "LeastLongTermMessageRate"]))
    with pytest.raises(InputError, match="extensible"):
        decide.run(parse([path, "--strategy", "TransferShedder"]))
    with pytest.raises(InputError, match="maxUnloadPercentag"):
        decide.run(parse([path, "--set", "maxUnloadPercentag=0.5"]))
    with pytest.raises(InputError, match="not found"):
        decide.run(parse([str(DATA / "missing.json")]))


def test_default_strategy_is_the_configured_threshold_shedder(capsys):
    # ThresholdShedder (Pulsar's default) fixes no destination: placement decides later
    steps = run_json([str(DATA / "avg_high_hits.json"), "--set", "loadBalancerBrokerThresholdShedderPercentage=5",
                      "--set", "loadBalancerBundleUnloadMinThroughputThreshold=0"], capsys)
    assert steps[0] and all(d["destination"] is None for step in steps for d in step)


def test_json_config_and_state_for_another_strategy_is_refused(tmp_path, capsys):
    config = tmp_path / "conf.json"
    config.write_text(json.dumps({"loadBalancerLoadSheddingStrategy": "AvgShedder", "maxUnloadPercentage": 0.5}))
    state = tmp_path / "s.json"
    run_json([str(DATA / "avg_high_hits.json"), "--config", str(config), "--state", str(state)], capsys)
    with pytest.raises(InputError, match="saved for strategy"):
        decide.run(parse([str(DATA / "avg_high_hits.json"), "--strategy", "ThresholdShedder", "--state", str(state)]))


def test_table_output(capsys):
    assert decide.run(parse([str(DATA / "avg_high_hits.json"), "--config", str(DATA / "avgshedder.conf")])) == 0
    out = capsys.readouterr().out
    assert "broker-1" in out and "broker-2" in out and "nothing to unload" in out
