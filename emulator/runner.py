"""Executing a scenario: agents placed on workers, windows run by the coordinator, trace and manifest written.

``execute`` is what ``clusteremu run``, ``replay``, the sweep and the pytest fixtures call.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from scenarios.loader import Scenario

from . import faults
from .coordinator import NETWORK_AGENT, Coordinator, CoordinatorStats
from .errors import InputError
from .manifest import new_manifest, write_manifest
from .models import AgentSpec, load_model
from .network import Latency, Link, NetworkModel
from .trace.digest import run_digest
from .trace.writer import SegmentWriter
from .transport.inproc import InprocLink
from .worker import Worker


@dataclass
class RunResult:
    run_dir: Path
    manifest: dict
    stats: CoordinatorStats

    @property
    def digest(self) -> str:
        return self.manifest["events"]["digest"]


def parse_agents_mode(mode: str) -> tuple[str, int]:
    """``inproc`` (one worker), ``inproc:N`` (N in-process workers), ``procs:N``, ``tcp``."""
    kind, _, n = mode.partition(":")
    if kind in ("inproc", "procs") and (n == "" or n.isdigit()):
        workers = int(n) if n else 1
        if workers < 1:
            raise InputError(f"--agents {mode}", "needs at least one worker")
        if kind == "procs":
            raise InputError(f"--agents {mode}", "worker processes over ZeroMQ are not built yet (issue 7); use inproc or inproc:N")
        return kind, workers
    if kind == "tcp" and not n:
        raise InputError(f"--agents {mode}", "tcp workers over ZeroMQ are not built yet (issue 7); use inproc or inproc:N")
    raise InputError(f"--agents {mode}", "expected inproc, inproc:N, procs:N or tcp")


def place(specs: list[AgentSpec], workers: int, rule: str) -> list[list[AgentSpec]]:
    """Deterministic placement by name: round robin over sorted names, or a stable hash of the name."""
    groups: list[list[AgentSpec]] = [[] for _ in range(workers)]
    for i, spec in enumerate(sorted(specs, key=lambda s: s.name)):
        if rule == "hash":
            w = int.from_bytes(hashlib.sha256(spec.name.encode()).digest()[:8], "little") % workers
        else:
            w = i % workers
        groups[w].append(spec)
    return groups


def prepare_run_dir(run_dir: Path) -> None:
    if run_dir.exists() and (not run_dir.is_dir() or any(run_dir.iterdir())):
        raise InputError(str(run_dir), "exists and is not empty; choose another --out (nothing is overwritten)")
    run_dir.mkdir(parents=True, exist_ok=True)


def default_run_dir(base: Path, scenario: Scenario, seed: int) -> Path:
    stem = f"{scenario.name}-seed{seed}"
    candidate = base / stem
    n = 1
    while candidate.exists():
        n += 1
        candidate = base / f"{stem}-{n}"
    return candidate


def execute(
    scenario: Scenario,
    run_dir: str | os.PathLike,
    *,
    seed: int | None = None,
    until: float | None = None,
    agents: str = "inproc",
    progress: Callable[[float, CoordinatorStats], None] | None = None,
) -> RunResult:
    """Run ``scenario`` into ``run_dir`` (which must not exist or be empty) and return the result."""
    kind, n_workers = parse_agents_mode(agents)
    seed = scenario.seed if seed is None else seed
    until = scenario.duration_s if until is None else until
    if not until > 0:
        raise InputError("--until", f"must be greater than 0, got {until}")
    data = scenario.data
    model = load_model(scenario.model)
    specs = model.agents(data)
    names = [s.name for s in specs]
    reserved = {NETWORK_AGENT, faults.FAULTS_AGENT} & set(names)
    if len(set(names)) != len(names) or reserved:
        raise InputError(scenario.source, f"agent names must be unique and not {sorted(reserved) or 'reserved'}")

    run_dir = Path(run_dir)
    prepare_run_dir(run_dir)
    placement = {"mode": agents, "workers": n_workers, "rule": data["run"]["placement"]}
    manifest = new_manifest(data, scenario.source, seed, until, placement)
    write_manifest(run_dir, manifest)

    groups = place(specs, n_workers, data["run"]["placement"])
    agent_faults = faults.agent_faults(data.get("faults", []), names)
    seg = data["run"]["segment_bytes"]
    links = []
    for wid, group in enumerate(groups):
        worker = Worker(wid, seed, group, run_dir, seg)
        worker.schedule_faults(agent_faults)
        links.append(InprocLink(worker))
    net = data["network"]
    network = NetworkModel(
        seed,
        Latency.from_spec(net["latency"]),
        [Link(l["from"], l["to"], Latency.from_spec(l["latency"])) for l in net["links"]],
    )
    for cond in model.network_conditions(data):
        network.add_condition(cond)
    net_writer = SegmentWriter(run_dir / "events", "net", seg)
    coordinator = Coordinator(
        links, network, until, net_writer, progress, boundaries=faults.boundaries(data.get("faults", []))
    )
    try:
        stats = coordinator.run()
    finally:
        summaries = [link.finish() for link in links] + [net_writer.close()]
    digests: dict[str, str] = {}
    for s in summaries:
        digests.update(s.agent_digests)
    manifest["complete"] = True
    manifest["events"] = {
        "count": sum(s.count for s in summaries),
        "digest": run_digest(digests),
        "writers": {s.writer: {"count": s.count, "segments": s.segments} for s in summaries},
    }
    manifest["stats"] = asdict(stats)
    write_manifest(run_dir, manifest)
    return RunResult(run_dir, manifest, stats)
