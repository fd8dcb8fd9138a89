"""The segment decoder on hand-made segments: values and types, tallies, and every kind of damage."""
from __future__ import annotations

import math

import pyarrow as pa
import pytest

from clusteremu.emulator.trace import open_run
from clusteremu.tools.spark.segments import EventSchema, decode_segment, last_event_time

SCHEMA = EventSchema(
    {
        "load_report": {"cpu": "float", "num_bundles": "int", "reason": "str"},
        "bundle_placed": {"broker": "str", "random_fallback": "bool", "scores": "dict"},
        "bundle_split": {"children": "list"},
    }
)


def decode_file(path) -> pa.Table:
    batches = list(decode_segment(path.read_bytes(), file=path.name, run=3, schema=SCHEMA))
    return pa.Table.from_batches(batches, schema=SCHEMA.arrow_schema)


def events_rows(table: pa.Table) -> list[dict]:
    return [r for r in table.to_pylist() if r["seq"] is not None]


def test_decodes_the_kinds_it_reads_and_tallies_the_others(trace):
    b = trace()
    b.event(1.0, "broker-1", "load_report", cpu=12.5, num_bundles=3, reason="periodic")
    b.event(2.0, "broker-1", "load_report", cpu=float("inf"), num_bundles=4, reason="periodic")
    b.event(2.5, "leader", "bundle_placed", broker="broker-1", random_fallback=True, scores={"broker-1": 1, "broker-2": 2.5})
    b.event(3.0, "leader", "bundle_split", children=["a", "b"])
    for t in (4.0, 5.0, 6.0):
        b.event(t, "broker-2", "stw_pause", duration_s=0.1, cause="gc")
    run_dir = b.write()
    table = decode_file(next((run_dir / "events").glob("*.seg")))
    rows = events_rows(table)
    assert [r["kind"] for r in rows] == ["load_report", "load_report", "bundle_placed", "bundle_split"]
    lr = rows[0]
    assert (lr["_run"], lr["t"], lr["agent"], lr["seq"], lr["_n"]) == (3, 1.0, "broker-1", 1, 1)
    assert lr["cpu"] == 12.5 and lr["num_bundles"] == 3 and lr["reason"] == "periodic" and lr["broker"] is None
    assert math.isinf(rows[1]["cpu"])
    assert dict(rows[2]["scores"]) == {"broker-1": 1.0, "broker-2": 2.5} and rows[2]["random_fallback"] is True
    assert rows[3]["children"] == ["a", "b"]
    (tally,) = [r for r in table.to_pylist() if r["seq"] is None]
    assert (tally["kind"], tally["agent"], tally["_n"], tally["t"]) == ("stw_pause", "broker-2", 3, 6.0)
    assert sum(table.column("_n").to_pylist()) == 7


def test_a_value_of_the_wrong_type_is_read_as_null_and_reported(trace):
    b = trace()
    b.event(1.0, "broker-1", "load_report", cpu=10.0, num_bundles=1, reason="periodic")
    b.event(2.0, "broker-1", "load_report", cpu="lots", num_bundles=1, reason="periodic")
    run_dir = b.write()
    seg = next((run_dir / "events").glob("*.seg"))
    table = decode_file(seg)
    assert [r["cpu"] for r in events_rows(table)] == [10.0, None]
    (problem,) = [r for r in table.to_pylist() if r["_problem_reason"]]
    assert "load_report.cpu" in problem["_problem_reason"] and problem["_problem_file"] == seg.name
    # The offset is the second record's, exactly where the reader finds it.
    offsets = [pos for pos, _ in _records(seg)]
    assert problem["_problem_offset"] == offsets[1]


def _records(seg):
    from clusteremu.emulator.trace.framing import iter_payloads, read_header

    buf = seg.read_bytes()
    _meta, off = read_header(buf)
    return list(iter_payloads(buf, off))


@pytest.mark.parametrize("damage", ["truncate", "flip", "header"])
def test_damage_is_reported_where_the_kernel_reader_reports_it(trace, damage):
    b = trace()
    for i in range(40):
        b.event(float(i), "broker-1", "load_report", cpu=float(i), num_bundles=1, reason="periodic")
    run_dir = b.write()
    seg = next((run_dir / "events").glob("*.seg"))
    data = bytearray(seg.read_bytes())
    if damage == "truncate":
        data = data[:-7]
    elif damage == "flip":
        data[len(data) // 2] ^= 0xFF
    else:
        data[:4] = b"JUNK"
    seg.write_bytes(bytes(data))
    table = decode_file(seg)
    problems = [(r["_problem_file"], r["_problem_offset"]) for r in table.to_pylist() if r["_problem_reason"]]
    reader = open_run(run_dir)
    kernel_events = list(reader.events())
    assert problems == [(p.file.split("/")[-1], p.offset) for p in reader.problems]
    assert len(events_rows(table)) == len(kernel_events) < 40


def test_schema_refuses_clashing_or_reserved_field_names():
    with pytest.raises(ValueError, match="reserved"):
        EventSchema({"x": {"t": "float"}})
    with pytest.raises(ValueError, match="reserved"):
        EventSchema({"x": {"_hidden": "float"}})
    with pytest.raises(ValueError, match="float in a but str in b"):
        EventSchema({"a": {"v": "float"}, "b": {"v": "str"}})
    with pytest.raises(ValueError, match="unknown field type"):
        EventSchema({"a": {"v": "decimal"}})
    merged = EventSchema({"a": {"v": "float"}}).merged(EventSchema({"a": {"w": "int"}, "b": {}}))
    assert merged.kinds == {"a": {"v": "float", "w": "int"}, "b": {}}
    assert "`scores` map<string, double>" in SCHEMA.spark_ddl


def test_last_event_time_of_a_run_follows_damage(trace):
    b = trace()
    for i in range(30):
        b.event(float(i), f"broker-{i % 2}", "stw_pause", duration_s=0.1, cause="gc")
    run_dir = b.write(writers=2, segment_bytes=4096)
    assert last_event_time(run_dir) == 29.0
    last = sorted((run_dir / "events").glob("w001-*.seg"))[-1]
    data = last.read_bytes()
    last.write_bytes(data[:-5])  # broker-1's last event (t=29) is cut
    assert last_event_time(run_dir) == 28.0
    assert max(e.t for e in open_run(run_dir).events()) == 28.0


PAIRS = EventSchema({"consume_progress": {"queue": "str", "ranges": "pairs"}})


def test_a_list_of_pairs_is_read_as_lists_of_two_doubles_and_a_malformed_one_as_null(trace):
    b = trace()
    b.event(1.0, "consumer-1", "consume_progress", queue="T/broker-a/0", ranges=[[0, 12.5], [20.0, 30]])
    b.event(2.0, "consumer-1", "consume_progress", queue="T/broker-a/1", ranges=[])
    b.event(3.0, "consumer-1", "consume_progress", queue="T/broker-a/2", ranges=[[1.0, 2.0, 3.0]])
    b.event(4.0, "consumer-1", "consume_progress", queue="T/broker-a/3", ranges=[[1.0, "x"]])
    b.event(5.0, "consumer-1", "consume_progress", queue="T/broker-a/4", ranges="0-10")
    run_dir = b.write()
    seg = next((run_dir / "events").glob("*.seg"))
    table = pa.Table.from_batches(list(decode_segment(seg.read_bytes(), file=seg.name, run=0, schema=PAIRS)),
                                  schema=PAIRS.arrow_schema)
    rows = events_rows(table)
    assert [r["ranges"] for r in rows] == [[[0.0, 12.5], [20.0, 30.0]], [], None, None, None]
    (problem,) = [r for r in table.to_pylist() if r["_problem_reason"]]
    assert "consume_progress.ranges: 3 value(s)" in problem["_problem_reason"]
    assert problem["_problem_offset"] == [pos for pos, _ in _records(seg)][2]
    assert PAIRS.spark_ddl.count("array<array<double>>") == 1


def test_a_record_written_in_rows_is_a_row_a_row_tallied_by_rows_and_bad_rows_are_damage(trace):
    from clusteremu.emulator.trace.kinds import ROWS_KEY

    b = trace()
    b.event(1.0, "consumer-1", "consume_progress", cid="c1", reason="interval", **{ROWS_KEY: {
        "queue": ["T/broker-a/0", "T/broker-a/1"], "ranges": [[[0, 12.5]], []]}})
    b.event(2.0, "consumer-1", "stw_pause", duration_s=0.1, cause="gc")
    b.event(3.0, "broker-a", "queue_stats", max_offset=9.0,
            **{ROWS_KEY: {"queue": ["a", "b", "c"], "lag": [1, 2, 3]}})
    b.event(4.0, "consumer-1", "consume_progress", cid="c1", reason="stop",
            **{ROWS_KEY: {"queue": ["x"], "ranges": []}})
    b.event(5.0, "consumer-1", "consume_progress", cid="c1", reason="stop",
            **{ROWS_KEY: {"queue": ["y"], "ranges": [[]]}})
    run_dir = b.write()
    seg = next((run_dir / "events").glob("*.seg"))
    table = pa.Table.from_batches(list(decode_segment(seg.read_bytes(), file=seg.name, run=0, schema=PAIRS)),
                                  schema=PAIRS.arrow_schema)
    rows = events_rows(table)
    assert [(r["t"], r["seq"], r["queue"], r["ranges"], r["_n"]) for r in rows] == [
        (1.0, 1, "T/broker-a/0", [[0.0, 12.5]], 1), (1.0, 1, "T/broker-a/1", [], 1)]
    tallies = {r["kind"]: r["_n"] for r in table.to_pylist() if r["seq"] is None and r["kind"]}
    assert tallies == {"stw_pause": 1, "queue_stats": 3}  # a row counts as an event
    (problem,) = [r for r in table.to_pylist() if r["_problem_reason"]]
    assert "rows of unequal lengths: queue 1, ranges 0" in problem["_problem_reason"]
    assert problem["_problem_offset"] == [pos for pos, _ in _records(seg)][3]
