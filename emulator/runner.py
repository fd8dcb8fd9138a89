"""Executing a scenario: agents placed on workers, windows run by the coordinator, trace and manifest written.

``execute`` is what ``clusteremu run``, ``replay``, the sweep and the pytest fixtures call.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

from clusteremu.scenarios.loader import MAX_DURATION_S, Scenario

from . import faults
from .coordinator import NETWORK_AGENT, Coordinator, CoordinatorStats, MeshCoordinator, SoleCoordinator
from clusteremu.base.errors import InputError
from .manifest import new_manifest, write_manifest
from .models import AgentSpec, load_model
from .network import Latency, Link, NetworkModel
from .trace.digest import run_digest
from .trace.writer import SegmentWriter
from .transport.inproc import InprocLink
from .transport.launch import ZmqOptions, ZmqWorkers
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
    """``inproc`` (one worker), ``inproc:N`` (N in-process workers), ``procs:N`` (N local worker processes over
    ipc), ``tcp`` (workers that join over tcp; their number is ``--expect``)."""
    kind, _, n = mode.partition(":")
    if kind in ("inproc", "procs") and (n == "" or n.isdigit()):
        workers = int(n) if n else 1
        if workers < 1:
            raise InputError(f"--agents {mode}", "needs at least one worker")
        return kind, workers
    if kind == "tcp" and not n:
        return kind, 0
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


def network_for(data: dict, seed: int, model: Any) -> NetworkModel:
    """The scenario's network model (``data`` is the validated scenario, ``model`` its system's model): the
    coordinator builds it for in-process workers, and every worker process builds its own copy."""
    net = data["network"]
    network = NetworkModel(
        seed,
        Latency.from_spec(net["latency"]),
        [Link(l["from"], l["to"], Latency.from_spec(l["latency"])) for l in net["links"]],
    )
    for cond in model.network_conditions(data):
        network.add_condition(cond)
    return network


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
    transport: ZmqOptions | None = None,
) -> RunResult:
    """Run ``scenario`` into ``run_dir`` (which must not exist or be empty) and return the result.

    ``transport`` sets the ZeroMQ options of ``procs:N`` and ``tcp`` (bind address, expected workers, keys,
    liveness timeouts, frame bound). A failed or interrupted run leaves its manifest marked incomplete.
    """
    kind, n_workers = parse_agents_mode(agents)
    transport = transport or ZmqOptions()
    if kind == "tcp":
        if transport.expect is None or transport.expect < 1:
            raise InputError("--expect", "tcp workers need --expect N (N >= 1 workers to wait for)")
        n_workers = transport.expect
    seed = scenario.seed if seed is None else seed
    until = scenario.duration_s if until is None else until
    if not 0 < until <= MAX_DURATION_S:
        raise InputError("--until", f"must be greater than 0 and at most {MAX_DURATION_S:g} s (a year), got {until}")
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
    seg = data["run"]["segment_bytes"]

    zmq_workers: ZmqWorkers | None = None
    mesh: MeshCoordinator | None = None
    links: list = []
    net_writer: SegmentWriter | None = None
    try:
        boundaries = faults.boundaries(data.get("faults", []))
        if kind == "inproc":
            agent_faults = faults.agent_faults(data.get("faults", []), names)
            network = network_for(data, seed, model)
            for wid, group in enumerate(groups):
                worker = Worker(wid, seed, group, run_dir, seg)
                worker.schedule_faults(agent_faults)
                worker.attach_network(network)
                links.append(InprocLink(worker))
            net_writer = SegmentWriter(run_dir / "events", "net", seg)
            # one worker holds every receiver: its windows need no coordinator round
            coordinator = SoleCoordinator if len(links) == 1 else Coordinator
            stats = coordinator(links, network, until, net_writer, progress, boundaries=boundaries).run()
        else:
            # worker processes run the windows among themselves; each builds its own copy of the network model
            zmq_workers = ZmqWorkers(kind, n_workers, transport)
            common = {"seed": seed, "run_dir": str(run_dir.resolve()), "scenario": data, "segment_bytes": seg,
                      "until": until}
            links = zmq_workers.links([[s.name for s in g] for g in groups], common)
            net_writer = SegmentWriter(run_dir / "events", "net", seg)
            mesh = MeshCoordinator(zmq_workers, until, net_writer, progress, boundaries=boundaries)
            stats = mesh.run()
        # the run reached ``until``: each worker's agents have their last word (Agent.at_end) as it closes
        summaries = [link.finish(until) for link in links] + [net_writer.close()]
        stats.events = sum(s.count for s in summaries)
    except BaseException as err:
        # Failed or interrupted: stop the workers (they flush their segments), close ours, and say why in the
        # manifest, which stays incomplete; what was written so far stays readable.
        if zmq_workers is not None:
            zmq_workers.stop(f"run failed: {type(err).__name__}")
        else:
            for link in links:
                try:
                    link.finish()
                except Exception:  # keep the original error; this is best-effort flushing
                    pass
        if net_writer is not None:
            net_writer.close()
        manifest["failure"] = str(err) or type(err).__name__
        if zmq_workers is not None:
            manifest["transport"] = zmq_workers.report()  # who was refused before the run failed
        write_manifest(run_dir, manifest)
        raise
    finally:
        if zmq_workers is not None:
            zmq_workers.close()
    digests: dict[str, str] = {}
    for s in summaries:
        digests.update(s.agent_digests)
    manifest["complete"] = True
    manifest["events"] = {
        "count": sum(s.count for s in summaries),
        "rows": sum(s.rows for s in summaries),
        "digest": run_digest(digests),
        "writers": {s.writer: {"count": s.count, "segments": s.segments} for s in summaries},
    }
    manifest["stats"] = asdict(stats)
    if zmq_workers is not None:
        manifest["transport"] = zmq_workers.report()
        if mesh is not None:
            manifest["transport"]["mesh"] = mesh.report
    write_manifest(run_dir, manifest)
    return RunResult(run_dir, manifest, stats)
