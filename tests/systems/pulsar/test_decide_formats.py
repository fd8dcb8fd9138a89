"""``clusteremu decide`` on what a real Pulsar cluster gives: load reports, metadata-store dumps, the extensible load
manager's topics, time series of them; required fields, warnings and ``--explain``.

The dumps in ``data/`` are written with Pulsar's field names: ``load_reports/`` (``pulsar-admin broker-stats
load-report`` of three brokers: broker-1 at 85 % CPU with 120 MB/s over four bundles of 40/30/30/20 MB/s, broker-2 at
40 %, broker-3 at 30 %), ``metadata_store/loadbalance/`` (the same reports as ``/loadbalance/brokers`` nodes, bundle
history at 80 % of today's traffic, one bundle without a node, broker-3 without a time-average node, a dead broker-4
with one), ``series/`` (three timestamped snapshots), ``extensible/`` and ``extensible_series/`` (BrokerLoadData at
weightedMaxEMA 0.9/0.3/0.2 and TopBundlesLoadData; four timestamped snapshots). Other forms (lists, maps, JSON keyed by
path or topic) are composed from them in a temporary directory. Commands give ``--system pulsar`` for a directory
(the generic verb reads no directory when it has to ask the adapters) and with ``--strategy``.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clusteremu.cli import main
from clusteremu.systems.pulsar.decide import ADAPTER

DATA = Path(__file__).parent / "data"
MB = 1024 * 1024
B1, B2, B3 = "broker-1:8080", "broker-2:8080", "broker-3:8080"
ORDERS = "tenant-a/orders/"


def decide(argv, capsys, code=0):
    """Run ``clusteremu decide``; return (stdout, stderr) after checking the exit status."""
    assert main(["decide", *map(str, argv)]) == code
    captured = capsys.readouterr()
    return captured.out, captured.err


def decide_json(argv, capsys):
    out, err = decide([*argv, "--format", "json"], capsys)
    return json.loads(out), err


def reports() -> dict[str, dict]:
    return {name: json.loads((DATA / "load_reports" / f"{name}.json").read_text())
            for name in ("broker-1", "broker-2", "broker-3")}


def decisions(steps):
    return [[(d["broker"], d["bundle"], d["destination"]) for d in step["decisions"]] for step in steps]


def path_map(root: Path) -> dict[str, object]:
    """The metadata-store tree as one JSON object keyed by node path."""
    return {"/" + p.relative_to(root).as_posix(): json.loads(p.read_text())
            for p in sorted(root.rglob("*")) if p.is_file()}


# --------------------------------------------------------------------------------------------------
# load reports


def test_one_load_report_is_one_broker_that_sheds_nothing(capsys):
    steps, err = decide_json([DATA / "load_reports" / "broker-1.json"], capsys)
    assert "decide: read load-report" in err
    assert steps == [{"step": 0, "format": "load-report", "source": str(DATA / "load_reports" / "broker-1.json"),
                      "time": 1764079200000, "decisions": []}]


def test_a_directory_of_load_reports_unloads_the_hot_brokers_largest_bundle(capsys):
    # avg = (0.85 + 0.40 + 0.30) / 3; broker-1 must shed 120 MB/s * (0.85 - avg - 0.10 + 0.05) = 34 MB/s: its
    # 40 MB/s bundle is enough (bundle data = the reports' last samples, as a new leader starts)
    steps, err = decide_json([DATA / "load_reports", "--system", "pulsar"], capsys)
    assert decisions(steps) == [[(B1, ORDERS + "0x00000000_0x40000000", None)]]
    assert "decide: read load-report from" in err
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 4
    assert warnings[0].startswith("warning: recentlyUnloadedBundles: not in the dump")
    assert warnings[1].startswith("warning: preallocatedBundleData: not in the dump")
    assert warnings[2].startswith("warning: bundle data: a load report carries no bundle history")
    assert warnings[3].startswith("warning: timeAverageData: not in a load report")


@pytest.mark.parametrize("shape", ["list", "map"])
def test_a_json_list_or_map_of_load_reports_decides_like_the_directory(shape, tmp_path, capsys):
    by_name = reports()
    doc = list(by_name.values()) if shape == "list" else {
        f"{n}:8080": r for n, r in by_name.items()}
    (tmp_path / "reports.json").write_text(json.dumps(doc))
    steps, err = decide_json([tmp_path / "reports.json"], capsys)  # claimed by its content
    assert decisions(steps) == [[(B1, ORDERS + "0x00000000_0x40000000", None)]]
    assert "read load-report" in err


def test_the_same_broker_twice_in_one_list_is_refused(tmp_path, capsys):
    one = reports()["broker-1"]
    (tmp_path / "twice.json").write_text(json.dumps([one, one]))
    _, err = decide([tmp_path / "twice.json"], capsys, code=2)
    assert "twice.json" in err and "broker 'broker-1:8080' appears twice" in err


# --------------------------------------------------------------------------------------------------
# metadata-store dumps


def test_metadata_store_tree_folds_todays_sample_into_the_stored_history(capsys):
    # the stored short-term history is 10 samples at 32 MB/s: one fold of today's 40 gives 32.8 MB/s, less than the
    # 34 MB/s to shed, so the next bundle (24 MB/s stored, 24.6 after the fold) goes too
    steps, err = decide_json([DATA / "metadata_store", "--system", "pulsar"], capsys)
    assert decisions(steps) == [[(B1, ORDERS + "0x00000000_0x40000000", None),
                                 (B1, ORDERS + "0x40000000_0x80000000", None)]]
    assert "decide: read metadata-store" in err
    assert "broker-4:8080 has a /loadbalance/broker-time-average node but no /loadbalance/brokers report" in err
    assert "no /loadbalance/broker-time-average node for broker-3:8080" in err
    assert "tenant-b/events/0x80000000_0xffffffff" in err  # a reported bundle without a bundle-data node
    assert "loadBalancerResourceQuotaUpdateIntervalMinutes" in err  # the stored history lags the leader's
    assert "bundle-data node(s) are in no broker's report" not in err


def test_bundle_data_that_no_report_claims_hints_at_a_missing_report(tmp_path, capsys):
    nodes = path_map(DATA / "metadata_store")
    del nodes[f"/loadbalance/brokers/{B3}"]  # the report of broker-3 left out: its bundle-data nodes stay
    (tmp_path / "nodes.json").write_text(json.dumps(nodes))
    _, err = decide_json([tmp_path / "nodes.json"], capsys)
    assert "1 /loadbalance/bundle-data node(s) are in no broker's report (e.g. tenant-b/events/0x00000000_0x80000000)" \
        in err


def test_the_loadbalance_folder_itself_and_a_json_object_keyed_by_path_read_alike(tmp_path, capsys):
    whole, _ = decide_json([DATA / "metadata_store", "--system", "pulsar"], capsys)
    inner, _ = decide_json([DATA / "metadata_store" / "loadbalance", "--system", "pulsar"], capsys)
    (tmp_path / "nodes.json").write_text(json.dumps(path_map(DATA / "metadata_store")))
    keyed, err = decide_json([tmp_path / "nodes.json"], capsys)
    assert "read metadata-store" in err
    assert decisions(whole) == decisions(inner) == decisions(keyed)


def test_a_report_node_without_cpu_names_the_node_file_and_the_field(tmp_path, capsys):
    shutil.copytree(DATA / "metadata_store", tmp_path / "dump")
    node = tmp_path / "dump" / "loadbalance" / "brokers" / B1
    report = json.loads(node.read_text())
    del report["cpu"]
    node.write_text(json.dumps(report))
    _, err = decide([tmp_path / "dump", "--system", "pulsar"], capsys, code=2)
    assert f"{node}: cpu" in err and "missing required field 'cpu' of LocalBrokerData" in err


def test_a_path_keyed_dump_without_the_hot_brokers_lastStats_names_the_node(tmp_path, capsys):
    nodes = path_map(DATA / "metadata_store")
    del nodes[f"/loadbalance/brokers/{B1}"]["lastStats"]
    (tmp_path / "nodes.json").write_text(json.dumps(nodes))
    _, err = decide([tmp_path / "nodes.json"], capsys, code=2)
    assert f'nodes.json: ["/loadbalance/brokers/{B1}"].lastStats' in err


# --------------------------------------------------------------------------------------------------
# time series


def test_a_directory_of_timestamped_snapshots_replays_in_time_order_with_history_and_recent_unloads(capsys):
    steps, err = decide_json([DATA / "series", "--system", "pulsar", "--explain"], capsys)
    assert [s["time"] for s in steps] == [1764079200000, 1764079260000, 1764079320000]
    assert [Path(s["source"]).name for s in steps] == [
        "2025-11-25T14:00:00Z.json", "2025-11-25T14:01:00Z.json", "2025-11-25T14:02:00Z.json"]
    picked = decisions(steps)
    assert picked[0] == [(B1, ORDERS + "0x00000000_0x40000000", None)]
    # the bundle unloaded a minute ago is within loadBalancerSheddingGracePeriodMinutes: not picked again
    assert picked[1] and all(bundle != ORDERS + "0x00000000_0x40000000" for _, bundle, _ in picked[1])
    # ThresholdShedder's history is carried: step 1 starts from step 0's usage
    load0 = {r["broker"]: r["figures"] for r in steps[0]["explain"]["records"] if r["rule"] == "load"}
    load1 = {r["broker"]: r["figures"] for r in steps[1]["explain"]["records"] if r["rule"] == "load"}
    assert load0[B1]["historyUsage"] is None
    assert load1[B1]["historyUsage"] == pytest.approx(load0[B1]["resourceUsage"])
    assert "read load-report from" in err and "3 step(s)" in err


def test_a_json_list_of_snapshots_equals_the_directory(tmp_path, capsys):
    files = sorted((DATA / "series").iterdir())
    (tmp_path / "series.json").write_text(json.dumps([json.loads(f.read_text()) for f in files]))
    from_dir, _ = decide_json([DATA / "series", "--system", "pulsar"], capsys)
    from_list, _ = decide_json([tmp_path / "series.json"], capsys)
    assert decisions(from_list) == decisions(from_dir)


def test_state_file_carries_the_replay_so_halves_equal_the_whole(tmp_path, capsys):
    files = sorted((DATA / "series").iterdir())
    for half, chosen in (("a", files[:2]), ("b", files[2:])):
        (tmp_path / half).mkdir()
        for f in chosen:
            shutil.copy(f, tmp_path / half / f.name)
    whole, _ = decide_json([DATA / "series", "--system", "pulsar"], capsys)
    state = tmp_path / "state.json"
    first, _ = decide_json([tmp_path / "a", "--system", "pulsar", "--state", state], capsys)
    saved = json.loads(state.read_text())
    assert ORDERS + "0x00000000_0x40000000" in saved["replay"]["recentlyUnloadedBundles"]
    assert saved["state"]["brokerAvgResourceUsage"][B1] > 0
    second, _ = decide_json([tmp_path / "b", "--system", "pulsar", "--state", state], capsys)
    assert decisions(first) + decisions(second) == decisions(whole)


def test_a_broker_missing_from_a_later_step_is_warned(tmp_path, capsys):
    files = sorted((DATA / "series").iterdir())
    later = json.loads(files[1].read_text())
    del later[B3]
    (tmp_path / "series.json").write_text(json.dumps([json.loads(files[0].read_text()), later]))
    _, err = decide_json([tmp_path / "series.json"], capsys)
    assert "broker(s) broker-3:8080 reported in the previous step are missing" in err


# --------------------------------------------------------------------------------------------------
# extensible load manager: TransferShedder


def test_transfer_shedder_on_one_snapshot_waits_for_the_hit_count_and_says_so(capsys):
    steps, err = decide_json([DATA / "extensible", "--system", "pulsar", "--explain"], capsys)
    assert "decide: read extensible" in err
    for named in ("availableBrokers", "bundleOwners", "anti-affinity", "recentlyUnloadedBrokers", "now:"):
        assert named in err
    (step,) = steps
    assert step["decisions"] == [] and step["outcome"] == {"label": "Skip", "reason": "HitCount"}
    logs = [r["log"] for r in step["explain"]["records"]]
    assert "Can't continue the unload cycle. Shedding condition hit count:1 is less than or equal to the " \
           "threshold:3." in logs
    assert step["time"] == 1764079195000  # no timestamp in the dump: the newest updatedAt


def test_transfer_shedder_moves_the_two_smallest_top_bundles_to_the_min_broker(tmp_path, capsys):
    # offload = (0.9 - 0.2) / 2 of broker-1's 100 MB/s / 0.9 = 38.9 MB/s: its 10 and 20 MB/s bundles fit, the 30 MB/s
    # one would overshoot and no swap with broker-3's 5 and 8 MB/s bundles makes it fit
    argv = ["--set", "loadBalancerSheddingConditionHitCountThreshold=0"]
    steps, _ = decide_json([DATA / "extensible", "--system", "pulsar", *argv], capsys)
    expected = [(B1, ORDERS + "0x00000000_0x40000000", B3), (B1, ORDERS + "0x40000000_0x80000000", B3)]
    assert decisions(steps) == [expected]
    assert {d["reason"] for d in steps[0]["decisions"]} == {"Overloaded"}
    assert steps[0]["outcome"] == {"label": "Success", "reason": None}
    # the same messages as one JSON object keyed by topic
    topics = {}
    for topic_dir in (DATA / "extensible").iterdir():
        topics[f"non-persistent://pulsar/system/{topic_dir.name}"] = {
            f.name[:-5]: json.loads(f.read_text()) for f in sorted(topic_dir.iterdir())}
    (tmp_path / "topics.json").write_text(json.dumps(topics))
    keyed, err = decide_json([tmp_path / "topics.json", *argv], capsys)
    assert "read extensible" in err and decisions(keyed) == [expected]


def test_pulsar_client_consume_output_is_the_table_view_at_its_end(tmp_path, capsys):
    # extensible_consume.txt: what `pulsar-client consume` printed for both topics; broker-1's first message (0.5)
    # is superseded by its later one (0.9), so the decision is the directory's
    argv = ["--set", "loadBalancerSheddingConditionHitCountThreshold=0"]
    steps, err = decide_json([DATA / "extensible_consume.txt", *argv], capsys)  # claimed by its content
    assert "read extensible" in err and "now:" not in err  # the time is the newest publishTime
    assert steps[0]["time"] == 1764079196000
    from_dir, _ = decide_json([DATA / "extensible", "--system", "pulsar", *argv], capsys)
    assert decisions(steps) == decisions(from_dir)
    broken = (DATA / "extensible_consume.txt").read_text().replace('content:{"cpu"', 'content:{"cpu" x', 1)
    (tmp_path / "consumed.txt").write_text(broken)
    _, err = decide([tmp_path / "consumed.txt"], capsys, code=2)
    assert "consumed.txt: line 2" in err and "not valid JSON" in err


def test_transfer_shedder_series_acts_on_the_fourth_consecutive_hit_and_state_splits_it(tmp_path, capsys):
    steps, _ = decide_json([DATA / "extensible_series", "--system", "pulsar"], capsys)
    assert [s["outcome"]["reason"] for s in steps] == ["HitCount", "HitCount", "HitCount", None]
    assert [len(s["decisions"]) for s in steps] == [0, 0, 0, 2]
    entries = sorted((DATA / "extensible_series").iterdir())
    for half, chosen in (("a", entries[:3]), ("b", entries[3:])):
        for e in chosen:
            shutil.copytree(e, tmp_path / half / e.name)
    state = tmp_path / "state.json"
    first, _ = decide_json([tmp_path / "a", "--system", "pulsar", "--state", state], capsys)
    assert json.loads(state.read_text())["state"]["unloadConditionHitCount"] == 3
    second, _ = decide_json([tmp_path / "b", "--system", "pulsar", "--state", state], capsys)
    assert decisions(first) + decisions(second) == decisions(steps)


def test_a_modular_shedder_on_extensible_data_and_transfer_shedder_on_reports_are_refused(capsys):
    _, err = decide([DATA / "extensible", "--system", "pulsar", "--strategy", "ThresholdShedder"], capsys, code=2)
    assert "modular load manager's shedder" in err and "TransferShedder" in err
    _, err = decide([DATA / "load_reports", "--system", "pulsar", "--strategy", "TransferShedder"], capsys, code=2)
    assert "extensible load manager" in err and "load-report" in err


def test_broker_load_data_without_weighted_max_ema_names_the_file(tmp_path, capsys):
    shutil.copytree(DATA / "extensible", tmp_path / "ext")
    file = tmp_path / "ext" / "loadbalancer-broker-load-data" / f"{B1}.json"
    data = json.loads(file.read_text())
    del data["weightedMaxEMA"]
    file.write_text(json.dumps(data))
    _, err = decide([tmp_path / "ext", "--system", "pulsar"], capsys, code=2)
    assert f"{file}: weightedMaxEMA" in err and "missing required field 'weightedMaxEMA' of BrokerLoadData" in err


def test_a_broker_without_top_bundles_is_warned(tmp_path, capsys):
    shutil.copytree(DATA / "extensible", tmp_path / "ext")
    (tmp_path / "ext" / "loadbalancer-top-bundles-load-data" / f"{B2}.json").unlink()
    _, err = decide_json([tmp_path / "ext", "--system", "pulsar"], capsys)
    assert "TopBundlesLoadData: none for broker broker-2:8080" in err


# --------------------------------------------------------------------------------------------------
# --explain, one per shedder


def explain_records(steps, index=0):
    return steps[index]["explain"]["records"]


def test_explain_threshold_shedder_in_pulsar_words(capsys):
    steps, _ = decide_json([DATA / "load_reports", "--system", "pulsar", "--explain"], capsys)
    summary = steps[0]["explain"]
    avg = summary["cluster"]["avgUsage"]
    assert avg == pytest.approx((0.85 + 0.40 + 0.30) / 3, abs=1e-6)
    assert summary["cluster"]["threshold"] == pytest.approx(0.10)
    assert summary["brokers"][B1]["rule"] == "overloaded"
    assert summary["brokers"][B2]["rule"] == summary["brokers"][B3]["rule"] == "not-overloaded"
    assert summary["brokers"][B1]["figures"]["minimumThroughputToOffload"] == pytest.approx(
        120 * MB * (0.85 - avg - 0.10 + 0.05), rel=1e-6)
    logs = [r["log"] for r in explain_records(steps)]
    assert any(line.startswith(f"Attempting to shed load on {B1}, which has max resource usage above avgUsage  and "
                               "threshold 85.") for line in logs)
    assert "brokers' resource avgUsage:51%" in logs
    assert f"[{B3}] broker is not overloaded, ignoring at this point, currentUsage:30%" in logs
    assert f"{B2} broker load: historyUsage=0%, resourceUsage=40%" in logs


def test_explain_overload_shedder(capsys):
    steps, _ = decide_json([DATA / "load_reports", "--system", "pulsar", "--strategy", "OverloadShedder", "--set",
                            "loadBalancerBrokerOverloadedThresholdPercentage=80", "--explain"], capsys)
    assert decisions(steps) == [[(B1, ORDERS + "0x00000000_0x40000000", None)]]
    brokers = steps[0]["explain"]["brokers"]
    assert brokers[B1]["rule"] == "overloaded" and brokers[B2]["rule"] == "not-overloaded"
    logs = [r["log"] for r in explain_records(steps)]
    assert any(line.startswith(f"Attempting to shed load on {B1}, which has resource usage 85.") and
               "above threshold 80.0% -- Offloading at least" in line and "(cpu: 85.00%, memory: 25.00%" in line
               for line in logs)
    assert any(line.startswith(f"[{B3}] Broker is not overloaded, ignoring at this point (cpu: 30.00%")
               for line in logs)


def test_explain_uniform_load_shedder(capsys):
    steps, _ = decide_json([DATA / "load_reports", "--system", "pulsar", "--strategy", "UniformLoadShedder",
                            "--explain"], capsys)
    summary = steps[0]["explain"]
    # msg rates: 120 MB/s of 1 KiB messages on broker-1, 20 MB/s on broker-3 (the minimum): +500 % > 50 %
    assert summary["cluster"]["msgRateDifferencePercentage"] == pytest.approx(500.0)
    assert summary["brokers"][B1]["rule"] == "msg-rate-overloaded"
    logs = [r["log"] for r in explain_records(steps)]
    assert any(line.startswith(f"Found bundles for uniform load balancing. msgRate overloaded broker: {B1} with "
                               f"msgRate: 122880.0, msgRate underloaded broker: {B3} with msgRate: 20480.0")
               for line in logs)
    taken = [line for line in logs if line.startswith(f"Found bundle to unload from {B1} with msgRate ")]
    assert len(taken) == len(steps[0]["decisions"]) > 0


def test_explain_avg_shedder_keeps_the_envelopes_json_shape(capsys):
    argv = [DATA / "avg_high_hits.json", "--config", DATA / "avgshedder.conf", "--format", "json"]
    plain, _ = decide(argv, capsys)
    explained, err = decide([*argv, "--explain"], capsys)
    plain, explained = json.loads(plain), json.loads(explained)
    assert all(isinstance(step, list) for step in explained)  # still a list of steps of decisions
    assert [[{k: d[k] for k in ("broker", "bundle", "destination")} for d in s] for s in explained] == plain
    assert all(set(d) == {"broker", "bundle", "destination"} for s in plain for d in s)
    moved = explained[1][0]["explain"]
    assert any(r["rule"] == "shed" and r["log"].startswith(
        "broker:[broker-1] is planning to shed bundles to broker:[broker-2]. maxBroker stat:scores:90.0")
        for r in moved)
    assert "explain [step 0] broker-2 score: Broker score broker=broker-2 score=40.0" in err
    assert "explain [step 0] (cluster) hit-counts: Broker hit counts brokerHitCountForHigh=" in err


def test_explain_transfer_shedder_table_names_the_rule_and_pulsar_line(capsys):
    out, _ = decide([DATA / "extensible", "--system", "pulsar", "--explain", "--set",
                     "loadBalancerSheddingConditionHitCountThreshold=0"], capsys)
    assert "TransferShedder on extensible" in out
    assert "brokers' load stats:sum:1.40, sqSum:0.94, avg:0.47, std:0.31, totalBrokers:3" in out
    assert "Attempting to shed load from broker:broker-1:8080 to broker:broker-3:8080, which has the max" in out
    assert "rule that fired" in out and "shed" in out


def test_table_output_names_the_format_and_the_explanation(capsys):
    out, err = decide([DATA / "metadata_store", "--system", "pulsar", "--explain"], capsys)
    assert "ThresholdShedder on metadata-store" in out
    assert "Attempting to shed load on broker-1:8080" in out
    assert "why, per broker" in out
    assert "warning: recentlyUnloadedBundles" in err


# --------------------------------------------------------------------------------------------------
# recognising inputs


@pytest.mark.parametrize("name", ["load_reports", "metadata_store", "metadata_store/loadbalance", "series",
                                  "extensible", "extensible_series"])
def test_claims_directories_holding_pulsar_dumps(name):
    assert ADAPTER.claims(str(DATA / name), None)


def test_claims_json_forms_and_not_others(tmp_path):
    for name in ("avg_high_hits.json", "load_reports/broker-1.json", "series/2025-11-25T14:00:00Z.json",
                 "extensible_consume.txt"):
        path = DATA / name
        assert ADAPTER.claims(str(path), path.read_text()), name
    assert ADAPTER.claims("x.json", json.dumps({f"/loadbalance/brokers/{B1}": reports()["broker-1"]}))
    assert ADAPTER.claims("x.json", json.dumps({"loadbalancer-broker-load-data": {}}))
    assert not ADAPTER.claims("x.json", '{"something": 1}')
    assert not ADAPTER.claims("x.json", "[1, 2]")
    (tmp_path / "notes.txt").write_text("hello")
    assert not ADAPTER.claims(str(tmp_path), None)


@pytest.mark.parametrize("name, millis", [
    ("1764079200000", 1764079200000), ("1764079200.json", 1764079200000),
    ("2025-11-25T14:00:00Z.json", 1764079200000), ("snap-2025-11-25_14-00-00", 1764079200000),
    ("2025-11-25T14:00:00.250Z", 1764079200250), ("broker-1.json", None), ("10.0.0.12:8080.json", None)])
def test_timestamps_in_names(name, millis):
    from clusteremu.systems.pulsar.decide_formats import timestamp_of

    assert timestamp_of(name) == millis
