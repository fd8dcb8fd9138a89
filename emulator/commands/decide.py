"""``clusteremu decide``: what would a Pulsar shedding strategy do on this load snapshot?

Reads the leader's ``LoadData`` as JSON with Pulsar's field names (see ``strategies/pulsar/load_data.py``):
one object, or a JSON list of objects — one per shedding interval — over which a stateful strategy
(ThresholdShedder's history, AvgShedder's hit counters) is replayed in order. Prints, per snapshot, the
``(broker, bundle)`` pairs the strategy would unload, in Pulsar's order, and the destination fixed at
shedding time (AvgShedder's planned partner; none for the other shedders, whose destination Pulsar picks
later with its placement strategy).

Configuration: ``--config FILE`` is ``broker.conf`` lines or a JSON object of ServiceConfiguration keys
(Pulsar's names and units; keys the load balancer does not read are ignored, as a pasted ``broker.conf``
is full of them); ``--set key=value`` overrides, and refuses keys it does not know. The strategy defaults
to the config's ``loadBalancerLoadSheddingStrategy``; only the modular load manager's shedders apply
(TransferShedder reads the extensible load manager's data, not ``LoadData``, and is refused).

``--state FILE`` makes runs resumable (e.g. once per interval from cron): the strategy's carried state and
its random generator are loaded from FILE when it exists and written back after the last snapshot, so two
invocations over halves of a series decide exactly like one over the whole. ``--seed N`` (default 0) keys
the strategy's generator as ``clusteremu.emulator.rng.keyed_rng(N, "decide", "<module>:<Class>")`` (the registry
target, so both spellings of a name draw alike); a state file's saved generator takes precedence.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from clusteremu.base.errors import InputError
from clusteremu.emulator.rng import keyed_rng
from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar import registry
from clusteremu.strategies.pulsar.config import DEFAULTS, PulsarConfig, convert_value, parse_broker_conf

STATE_FORMAT = "clusteremu-decide-state/1"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "decide",
        help="show what a Pulsar shedding strategy would unload on a load snapshot (or a series of them)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("snapshot", help="LoadData JSON file (one object, or a list of objects in time order); - for stdin")
    p.add_argument("--config", metavar="FILE", help="broker.conf lines or a JSON object of ServiceConfiguration keys")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override one ServiceConfiguration key (repeatable)")
    p.add_argument("--strategy", metavar="NAME",
                   help="shedding strategy, simple or fully-qualified Java class name "
                        "(default: the config's loadBalancerLoadSheddingStrategy)")
    p.add_argument("--state", metavar="FILE", help="load the carried state from FILE if it exists; save it after")
    p.add_argument("--seed", type=int, default=0, help="run seed for the strategy's random generator (default 0)")
    p.add_argument("--format", choices=("table", "json"), default="table", help="output format (default table)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config = _load_config(args.config, args.overrides)
    name = args.strategy or config["loadBalancerLoadSheddingStrategy"]
    modular = _modular_shedders()
    if name not in modular:
        where = "--strategy" if args.strategy else "loadBalancerLoadSheddingStrategy"
        if name in pulsar.names("shedding"):
            raise InputError(where, f"{name} belongs to the extensible load manager, whose load data is not the "
                                    "modular LoadData that decide reads")
        raise InputError(where, f"unknown shedding strategy {name!r}; known: {', '.join(sorted(modular))}")
    snapshots = _load_snapshots(args.snapshot)

    # keyed by the implementing class, so the simple and the fully-qualified name draw alike
    rng = keyed_rng(args.seed, "decide", registry.target(name))
    strategy = pulsar.create(name, config, rng=rng)
    if args.state:
        _restore_state(Path(args.state), name, strategy, rng)

    steps: list[list[dict[str, Any]]] = []
    for load in snapshots:
        decisions = strategy.find_bundles_for_unloading(load)
        planned = getattr(strategy, "planned_destination", None)
        steps.append(
            [
                {"broker": broker, "bundle": bundle, "destination": planned(bundle) if planned else None}
                for broker, bundle in decisions
            ]
        )

    if args.state:
        _save_state(Path(args.state), name, strategy, rng)

    if args.format == "json":
        print(json.dumps(steps, indent=2))
    else:
        _print_table(steps, name)
    return 0


# --------------------------------------------------------------------------------------------------


def _modular_shedders() -> list[str]:
    """Shedding strategy names of the modular load manager (the ones that read ``LoadData``)."""
    return [n for n in pulsar.names("shedding") if registry.target(n).startswith("clusteremu.strategies.pulsar.shedding.")]


def _read_text(path: str, what: str) -> str:
    if path == "-":
        import sys

        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, f"{what} file not found") from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(path, f"cannot read {what} file: {err}") from None


def _load_config(path: str | None, overrides: list[str]) -> PulsarConfig:
    values: dict[str, Any] = {}
    if path:
        text = _read_text(path, "config")
        if text.lstrip().startswith("{"):
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as err:
                raise InputError(path, f"not valid JSON: {err}") from None
            if not isinstance(obj, dict):
                raise InputError(path, "expected a JSON object of ServiceConfiguration keys")
            values = {k: convert_value(k, v, path) for k, v in obj.items()}
        else:
            values = parse_broker_conf(text.splitlines(), path)
        values = {k: v for k, v in values.items() if k in DEFAULTS}
    for item in overrides:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError("--set", f"expected KEY=VALUE, got {item!r}")
        if key not in DEFAULTS:
            raise InputError("--set", f"unknown ServiceConfiguration key {key!r} (load-balancing keys only)")
        values[key] = convert_value(key, raw, "--set")
    return PulsarConfig(values, where=path or "config")


def _load_snapshots(path: str) -> list[pulsar.LoadData]:
    text = _read_text(path, "snapshot")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(path, f"not valid JSON: {err}") from None
    if isinstance(obj, list):
        if not obj:
            raise InputError(path, "the snapshot list is empty")
        items = [(f"[{i}]", item) for i, item in enumerate(obj)]
    else:
        items = [("", obj)]
    loads = []
    for prefix, item in items:
        try:
            loads.append(pulsar.LoadData.from_json(item))
        except InputError as err:
            json_path = ".".join(part for part in (prefix, err.where) if part)
            raise InputError(f"{path}: {json_path}" if json_path else path, err.reason) from None
    return loads


def _restore_state(path: Path, name: str, strategy: Any, rng: np.random.Generator) -> None:
    if not path.exists():
        return
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(str(path), f"cannot read the state file: {err}") from None
    if not isinstance(saved, dict) or saved.get("format") != STATE_FORMAT:
        raise InputError(str(path), f"not a decide state file (expected \"format\": \"{STATE_FORMAT}\")")
    saved_name = saved.get("strategy")
    if not isinstance(saved_name, str) or saved_name not in registry.names() or (
        registry.target(saved_name) != registry.target(name)
    ):
        raise InputError(str(path), f"state was saved for strategy {saved_name!r}, not {name!r}")
    try:
        strategy.set_state(saved.get("state", {}))
        if "rng" in saved:
            rng.bit_generator.state = saved["rng"]
    except (TypeError, ValueError, KeyError, AttributeError) as err:
        raise InputError(str(path), f"invalid saved state: {err}") from None


def _save_state(path: Path, name: str, strategy: Any, rng: np.random.Generator) -> None:
    payload = {"format": STATE_FORMAT, "strategy": name, "state": strategy.get_state(), "rng": rng.bit_generator.state}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)  # never leave a half-written state file behind


def _print_table(steps: list[list[dict[str, Any]]], name: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{name}: bundles to unload")
    table.add_column("step", justify="right")
    table.add_column("broker")
    table.add_column("bundle")
    table.add_column("destination")
    for index, decisions in enumerate(steps):
        if not decisions:
            table.add_row(str(index), "-", "(nothing to unload)", "-")
        for d in decisions:
            table.add_row(str(index), d["broker"], d["bundle"], d["destination"] or "(placement decides)")
    Console().print(table)
