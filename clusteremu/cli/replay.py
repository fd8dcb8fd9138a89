"""``clusteremu replay RUN``: re-execute a run from its manifest and check that the events are identical.

The stored events are first checked against the digest in the manifest (so a tampered event file is caught
even though re-running would reproduce the original), then the run is executed again from the manifest's
scenario, seed and end time, and the two event streams are compared in canonical order. Exit 0 when identical;
exit 1 naming the first differing event otherwise.
"""
from __future__ import annotations

import argparse
import itertools
import shutil
import tempfile
from pathlib import Path

from clusteremu.scenarios.loader import validate_scenario

from clusteremu.base.errors import InputError, RunFailure
from clusteremu.emulator.runner import execute
from clusteremu.emulator.trace import open_run


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="re-execute a run and check its events are identical")
    p.add_argument("run_dir", type=Path, help="the run directory to check")
    p.add_argument("--agents", default=None, help="placement for the re-execution (default: the run's own)")
    p.add_argument("--keep", type=Path, default=None, help="keep the re-executed run in this directory")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        stored = open_run(args.run_dir)
    except FileNotFoundError as err:
        raise InputError(str(args.run_dir), str(err)) from None
    m = stored.manifest
    if not m.get("scenario"):
        raise InputError(f"{args.run_dir}/manifest.json", "missing or unreadable manifest; cannot replay")
    if not m.get("complete"):
        raise InputError(str(args.run_dir), "the manifest says the run did not finish; only a finished run can be replayed")
    scenario = validate_scenario(m["scenario"], m.get("scenario_source", "manifest"))
    recorded = m["events"]["digest"]
    actual = stored.compute_digest()

    out = args.keep
    tmp = None
    if out is None:
        tmp = Path(tempfile.mkdtemp(prefix="clusteremu-replay-"))
        out = tmp / "run"
    try:
        agents = args.agents or m.get("placement", {}).get("mode", "inproc")
        result = execute(scenario, out, seed=m["seed"], until=m["until"], agents=agents)
        diff = first_difference(stored, open_run(out))
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if diff is None and actual == recorded == result.digest:
        print(f"replay identical: {m['events']['count']:,} events, digest {recorded}")
        return 0
    lines = [f"damaged segment: {p}" for p in stored.problems]
    if actual != recorded:
        lines.append(f"stored events do not match the manifest's digest (manifest {recorded}, events {actual})")
    if diff is not None:
        i, a, b = diff
        lines.append(f"first differing event is #{i} in canonical order:\n  stored:   {a!r}\n  replayed: {b!r}")
    elif result.digest != recorded:
        lines.append(f"replayed digest {result.digest} differs from the recorded {recorded}")
    raise RunFailure("\n".join(lines))


def first_difference(a, b):
    """(index, event in a, event in b) of the first difference in canonical order, or None."""
    for i, (x, y) in enumerate(itertools.zip_longest(a.events(), b.events())):
        if x != y:
            return i, x, y
    return None
