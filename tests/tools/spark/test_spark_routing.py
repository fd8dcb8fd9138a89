"""The router: each part gets its kinds and columns, the tally counts everything, problems go apart."""
from __future__ import annotations

import pandas as pd

from clusteremu.tools.spark.routing import PROBLEMS, TALLY, Key, Route, Router, TallySpec, file_groups, merge_tallies, payload_table
from clusteremu.tools.spark.segments import EventSchema, decode_segment

SCHEMA = EventSchema(
    {
        "bundle_unloaded": {"bundle": "str", "reason": "str"},
        "lookup_hop": {"hop": "int", "response": "str"},
        "stw_pause": {"duration_s": "float", "cause": "str"},
    }
)


def by_reason(rows: pd.DataFrame) -> pd.Series:
    return rows["reason"]


def hop_key(rows: pd.DataFrame) -> pd.Series:
    return rows["response"] + ":" + rows["hop"].astype(int).astype(str)


TALLY_SPEC = TallySpec(
    keys={"bundle_unloaded": Key(by_reason, ("reason",)), "lookup_hop": Key(hop_key, ("response", "hop"))},
    extras={"max_hop": ("hop", "max")},
)


def route_run(run_dir, routes, flush_rows=1_000_000):
    router = Router(routes, TALLY_SPEC, flush_rows=flush_rows)
    out = []
    for seg in sorted((run_dir / "events").glob("*.seg")):
        for batch in decode_segment(seg.read_bytes(), file=seg.name, run=0, schema=SCHEMA):
            out += list(router.add(batch))
    out += list(router.finish())
    grouped: dict[str, list[bytes]] = {}
    for run, part, payload in out:
        assert run == 0
        grouped.setdefault(part, []).append(payload)
    return {part: payload_table(p) for part, p in grouped.items()}


def test_parts_get_their_kinds_and_columns_and_the_tally_counts_all(trace):
    b = trace()
    b.event(1.0, "broker-1", "bundle_unloaded", bundle="b1", reason="shedding")
    b.event(2.0, "broker-1", "bundle_unloaded", bundle="b2", reason="shedding")
    b.event(3.0, "broker-2", "bundle_unloaded", bundle="b3", reason="shutdown")
    b.event(4.0, "client-1", "lookup_hop", hop=1, response="redirect")
    b.event(4.1, "client-1", "lookup_hop", hop=2, response="connect")
    b.event(5.0, "broker-2", "stw_pause", duration_s=0.5, cause="gc")
    b.event(6.0, "broker-2", "stw_pause", duration_s=1.5, cause="gc")
    b.event(7.0, "client-1", "topic_connected", topic="t", broker="broker-1", hops=2, unavailable_s=0.0)
    run_dir = b.write(writers=2, segment_bytes=4096)
    routes = [Route("unloads", ("bundle_unloaded",), ("t", "agent", "bundle")), Route("pauses", ("stw_pause",), ("t", "duration_s"))]
    parts = route_run(run_dir, routes, flush_rows=1)
    unloads = parts["unloads"].to_pandas().sort_values("t")
    assert list(unloads.columns) == ["t", "agent", "bundle"] and list(unloads["bundle"]) == ["b1", "b2", "b3"]
    assert sorted(parts["pauses"].column("duration_s").to_pylist()) == [0.5, 1.5]
    counts = merge_tallies([parts[TALLY]], TALLY_SPEC).to_pandas().sort_values(["kind", "agent", "key"])
    got = {(r.kind, r.agent, r.key): r.count for r in counts.itertuples()}
    assert got == {
        ("bundle_unloaded", "broker-1", "shedding"): 2,
        ("bundle_unloaded", "broker-2", "shutdown"): 1,
        ("lookup_hop", "client-1", "redirect:1"): 1,
        ("lookup_hop", "client-1", "connect:2"): 1,
        ("stw_pause", "broker-2", None): 2,
        ("topic_connected", "client-1", None): 1,  # not in the schema: tallied by the decoder
    }
    pauses = counts[counts["kind"] == "stw_pause"].iloc[0]
    assert (pauses["first_t"], pauses["last_t"], pauses["duration_total"], pauses["duration_max"]) == (5.0, 6.0, 2.0, 1.5)
    assert counts[counts["kind"] == "lookup_hop"]["max_hop"].max() == 2
    assert PROBLEMS not in parts


def test_problems_go_to_their_own_part_and_partial_tallies_merge(trace):
    b = trace()
    for i in range(20):
        b.event(float(i), "broker-1", "bundle_unloaded", bundle=f"b{i}", reason="shedding")
    run_dir = b.write()
    seg = next((run_dir / "events").glob("*.seg"))
    seg.write_bytes(seg.read_bytes()[:-3])
    parts = route_run(run_dir, [])
    (problem,) = parts[PROBLEMS].to_pylist()
    assert problem["_problem_file"] == seg.name
    assert "truncated" in problem["_problem_reason"]
    # Two partial tallies of the same key add up.
    half = merge_tallies([parts[TALLY]], TALLY_SPEC)
    both = merge_tallies([half, half], TALLY_SPEC).to_pylist()
    assert [(r["key"], r["count"]) for r in both] == [("shedding", 38)]


def test_runs_tallied_together_get_the_tallies_they_get_alone(trace, tmp_path):
    """The router computes a kind's tally keys for all its runs in one call; each run's tally is its own."""
    dirs = []
    for n, (reasons, hops) in enumerate([(["shedding", "shedding", "shutdown"], [1, 2]), (["admin"], [3, 3, 1])]):
        b = trace(f"run-{n}")
        for i, reason in enumerate(reasons):
            b.event(float(i), f"broker-{i % 2}", "bundle_unloaded", bundle=f"b{i}", reason=reason)
        for i, hop in enumerate(hops):
            b.event(10.0 + i, "client-1", "lookup_hop", hop=hop, response="redirect")
        b.event(20.0, "broker-0", "stw_pause", duration_s=0.25 * (n + 1), cause="gc")
        dirs.append(b.write())

    def tallies(runs):
        router = Router([], TALLY_SPEC)
        out = []
        for run, run_dir in runs:
            for seg in sorted((run_dir / "events").glob("*.seg")):
                for batch in decode_segment(seg.read_bytes(), file=seg.name, run=run, schema=SCHEMA):
                    out += list(router.add(batch))
        out += list(router.finish())
        return {run: merge_tallies([payload_table([p])], TALLY_SPEC).to_pandas().sort_values(["kind", "agent", "key"]).reset_index(drop=True)
                for run, part, p in out if part == TALLY}

    together = tallies([(0, dirs[0]), (1, dirs[1])])
    for run in (0, 1):
        alone = tallies([(run, dirs[run])])[run]
        pd.testing.assert_frame_equal(together[run], alone)
    keys = set(together[1]["key"].dropna())
    assert keys == {"admin", "redirect:3", "redirect:1"}


def test_file_groups_keep_runs_whole_when_there_are_enough_and_balance_bytes(tmp_path):
    def files(run, sizes):
        out = []
        for i, size in enumerate(sizes):
            f = tmp_path / f"run{run}" / "events" / f"w000-{i:05d}.seg"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(b"x" * size)
            out.append(f)
        return out

    runs = [files(0, [500, 400]), files(1, [300]), files(2, [200, 100]), files(3, [50])]
    groups = file_groups(runs, 2)
    assert groups == file_groups(runs, 2)  # deterministic
    # Whole runs, largest first onto the lighter group: run 0 (900) | run 1 (300) + run 2 (300) + run 3 (50).
    assert groups == [[str(f) for f in runs[0]], [str(f) for f in runs[1] + runs[2] + runs[3]]]
    # Fewer runs than tasks: the files are spread one by one.
    spread = file_groups([runs[0], runs[2]], 4)
    assert sorted(len(g) for g in spread) == [1, 1, 1, 1] and sorted(f for g in spread for f in g) == sorted(str(f) for f in runs[0] + runs[2])
    assert file_groups([[], []], 2) == []
