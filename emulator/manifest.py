"""The run manifest (``RUN/manifest.json``): what was run, with what, and whether it finished.

Written with ``complete: false`` before the first event and replaced atomically (write + rename) at the end, so a
killed run is always recognisably incomplete and its manifest is never half-written.
"""
from __future__ import annotations

import json
import os
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

from .trace.kinds import EVENT_SCHEMA_VERSION

FORMAT = "clusteremu-run/1"


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("clusteremu", "simpy", "numpy", "msgpack", "pyzmq"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "unknown"
    return out


def new_manifest(scenario: dict[str, Any], source: str, seed: int, until: float, placement: dict) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "complete": False,
        "scenario": scenario,
        "scenario_source": source,
        "seed": seed,
        "until": until,
        "versions": versions(),
        "event_schema_version": EVENT_SCHEMA_VERSION,
        "placement": placement,
        "events": {"count": 0, "rows": 0, "digest": None, "writers": {}},
        "stats": {},
    }


def write_manifest(run_dir: str | Path, manifest: dict[str, Any]) -> None:
    path = Path(run_dir) / "manifest.json"
    tmp = path.with_suffix(".json.tmp")
    with open(tmp, "w") as fh:
        json.dump(manifest, fh, indent=2, sort_keys=False, allow_nan=True)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
