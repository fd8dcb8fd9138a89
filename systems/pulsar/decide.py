"""Pulsar's ``decide`` adapter: what would a Pulsar shedding strategy do on this load snapshot (or series)?

Inputs (see :mod:`.decide_formats` for how each is recognised and turned into the strategy's input):

* ``load-data`` — the modular leader's ``LoadData`` envelope (``brokerData``, ``bundleData``,
  ``recentlyUnloadedBundles``), one object or a JSON list of them;
* ``load-report`` — ``LocalBrokerData`` as ``pulsar-admin broker-stats load-report`` /
  ``GET /admin/v2/broker-stats/load-report`` return it: one, a JSON list, a map ``{broker: report}``, or a directory;
* ``metadata-store`` — dumps of ``/loadbalance/brokers/<broker>``, ``/loadbalance/bundle-data/<tenant>/<ns>/<range>``
  and ``/loadbalance/broker-time-average/<broker>``: a directory tree mirroring the paths, or a JSON object keyed by
  path;
* ``extensible`` — the extensible load manager's ``BrokerLoadData`` and ``TopBundlesLoadData`` from its system
  topics (for ``TransferShedder``): a JSON object keyed by topic, a directory per topic, or what
  ``pulsar-client consume`` prints for them;
* a time series of any of them: a JSON list, or a directory of timestamped snapshots, replayed in time order
  (stateful shedders carry their state across steps; ``--state`` carries it across invocations).

The format read is named on stderr (``decide: read <format> from <path>: <n> step(s)``) and in the table's title;
what a dump cannot supply is named in ``warning:`` lines on stderr. Missing required fields are an
:class:`InputError` (exit 2) naming the file and the field.

Configuration: ``--config FILE`` is ``broker.conf`` lines or a JSON object of ServiceConfiguration keys (Pulsar's
names and units; keys the load balancer does not read are ignored, as a pasted ``broker.conf`` is full of them);
``--set key=value`` overrides, and refuses keys it does not know. The strategy defaults to the config's
``loadBalancerLoadSheddingStrategy`` for the modular formats and to ``TransferShedder`` for extensible data (unless
the configured one is an extensible strategy); a modular shedder on extensible data, or ``TransferShedder`` on
modular data, is refused.

``--state FILE`` makes runs resumable (e.g. once per interval from cron): the strategy's carried state and its
random generator are loaded from FILE when it exists and written back after the last snapshot, so two invocations
over halves of a series decide exactly like one over the whole. ``--seed N`` (default 0) keys the strategy's
generator as ``clusteremu.emulator.rng.keyed_rng(N, "decide", "<module>:<Class>")`` (the registry target, so both
spellings of a name draw alike); a state file's saved generator takes precedence.

``--explain`` says why, per step: per broker the figures the strategy computed (usage, history, score, load), the
average and thresholds, and the rule that fired, each with the line Pulsar's class logs there (see
:mod:`clusteremu.strategies.pulsar.explain`; lines Pulsar does not log are marked ``"pulsarLog": false``).

JSON output (``--format json``), a list with one entry per step:

* ``load-data`` (unchanged): each step is a list of ``{"broker", "bundle", "destination"}`` (destination: AvgShedder's
  planned partner, else ``null`` — placement decides later). With ``--explain`` each decision also gets an
  ``"explain"`` key (the records about its broker), and the whole explanation is written to stderr as
  ``explain [step i] ...`` lines.
* the other formats: each step is an object ``{"step": i, "format": "load-report" | "metadata-store" |
  "extensible", "source": file or entry, "time": epoch ms or null, "decisions": [{"broker", "bundle",
  "destination"}, ...]}``; TransferShedder's decisions add ``"reason"``
  (``Overloaded``/``Underloaded``) and the step adds ``"outcome": {"label", "reason"}`` (e.g. ``Skip``/``HitCount``);
  with ``--explain`` the step adds ``"explain": {"records": [{"broker", "rule", "log", "figures", "pulsarLog"}],
  "cluster": {figures}, "brokers": {broker: {"rule", "figures"}}}``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from clusteremu.base.errors import InputError
from clusteremu.cli.decide import read_input
from clusteremu.emulator.rng import keyed_rng
from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar import registry
from clusteremu.strategies.pulsar.config import DEFAULTS, PulsarConfig, convert_value, parse_broker_conf
from clusteremu.strategies.pulsar.explain import Explain
from clusteremu.strategies.pulsar.extensible import UnloadResult

from . import decide_formats
from .decide_explain import StepResult, print_explain_stderr, print_table, step_json
from .decide_replay import Replay

STATE_FORMAT = "clusteremu-decide-state/1"
_TRANSFER_SHEDDER = "TransferShedder"


class PulsarDecide:
    """The adapter ``clusteremu decide`` uses for Pulsar (see :class:`clusteremu.cli.decide.DecideAdapter`)."""

    summary = ("what a Pulsar shedder would unload on a load dump: the leader's LoadData, load reports "
               "(broker-stats load-report), /loadbalance metadata-store nodes, or the extensible load manager's "
               "BrokerLoadData/TopBundlesLoadData; one snapshot, a JSON list or a directory of timestamped ones")

    def add_arguments(self, group: argparse._ArgumentGroup) -> None:
        group.add_argument("--config", metavar="FILE",
                           help="broker.conf lines or a JSON object of ServiceConfiguration keys")
        group.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                           help="override one ServiceConfiguration key (repeatable)")
        group.add_argument("--state", metavar="FILE", help="load the carried state from FILE if it exists; save it after")
        group.add_argument("--seed", type=int, default=0, help="run seed for the strategy's random generator (default 0)")
        try:
            group.add_argument("--explain", action="store_true",
                               help="per step and broker: the figures, average, thresholds and the rule that fired, "
                                    "in the words of Pulsar's log lines")
        except argparse.ArgumentError:  # the generic verb (or another system) offers --explain: it serves us too
            pass
        group.description = ("input formats: " + "; ".join(f"{k}: {v}" for k, v in decide_formats.FORMATS.items())
                             + "; or a time series of one of them (a JSON list, or a directory of timestamped "
                               "snapshots)")

    def claims(self, path: str, text: str | None) -> bool:
        """Pulsar's input: a directory holding Pulsar dumps, or JSON in one of the formats of
        :mod:`.decide_formats` (a LoadData envelope, load reports, metadata-store nodes keyed by path, the
        extensible load manager's topics), or a list of them."""
        if path != "-" and Path(path).is_dir():
            return decide_formats.claims(path, None)
        return decide_formats.claims(path, text)

    def run(self, args: argparse.Namespace, strategy: str | None) -> int:
        return run(args, strategy)


ADAPTER = PulsarDecide()


def run(args: argparse.Namespace, strategy_name: str | None) -> int:
    config = _load_config(args.config, args.overrides)
    name = _check_strategy(strategy_name, config, None)
    data = _read(args)
    name = _check_strategy(strategy_name, config, data)
    explain = bool(getattr(args, "explain", False))

    # keyed by the implementing class, so the simple and the fully-qualified name draw alike
    rng = keyed_rng(args.seed, "decide", registry.target(name))
    strategy = pulsar.create(name, config, rng=rng)
    if args.state:
        _restore_state(Path(args.state), name, strategy, rng, data.replay)

    grace = float(config["loadBalancerSheddingGracePeriodMinutes"])
    results: list[StepResult] = []
    for index, step in enumerate(data.steps):
        if explain:
            strategy.explain = Explain()
        result = StepResult(index, step.source, step.time, data.format)
        if data.extensible:
            assert data.replay is not None
            outcome: UnloadResult = strategy.find_bundles_for_unloading(data.replay.prepare_extensible(step, grace))
            result.time = step.time
            result.outcome = outcome
            result.decisions = [{"broker": d.source_broker, "bundle": d.bundle, "destination": d.destination_broker,
                                 "reason": d.reason.value} for d in outcome.decisions]
            data.replay.recently_unloaded_brokers = dict(outcome.recently_unloaded_brokers)
            data.replay.unloaded(step.time or 0, [(d.source_broker, d.bundle) for d in outcome.decisions])
        else:
            load = step.load if data.replay is None else data.replay.prepare_modular(step, grace)
            result.time = step.time
            pairs = strategy.find_bundles_for_unloading(load)
            planned = getattr(strategy, "planned_destination", None)
            result.decisions = [{"broker": broker, "bundle": bundle,
                                 "destination": planned(bundle) if planned else None} for broker, bundle in pairs]
            if data.replay is not None:
                data.replay.unloaded(step.time or 0, pairs)
        result.explain = strategy.explain if explain else None
        results.append(result)
    if explain:
        strategy.explain = None

    if args.state:
        _save_state(Path(args.state), name, strategy, rng, data.replay)

    print(f"decide: read {data.format} from {data.path}: {len(data.steps)} step(s)", file=sys.stderr)
    for warning in data.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    envelope = data.format == "load-data"
    if args.format == "json":
        if envelope:
            print(json.dumps([step_json(r, envelope=True) for r in results], indent=2))
            if explain:
                print_explain_stderr(results)
        else:
            print(json.dumps([step_json(r, envelope=False) for r in results], indent=2))
    else:
        print_table(results, name, data.format, data.path, explain)
    return 0


# --------------------------------------------------------------------------------------------------


def _modular_shedders() -> list[str]:
    """Shedding strategy names of the modular load manager (the ones that read ``LoadData``)."""
    return [n for n in pulsar.names("shedding") if registry.target(n).startswith("clusteremu.strategies.pulsar.shedding.")]


def _extensible_shedders() -> list[str]:
    """Shedding strategy names of the extensible load manager (the ones that read a ``TransferContext``)."""
    return [n for n in pulsar.names("shedding") if n not in _modular_shedders()]


def _check_strategy(strategy_name: str | None, config: PulsarConfig, data: decide_formats.Input | None) -> str:
    """The strategy to run on ``data`` (``None``: before reading, only check that the name is a shedder)."""
    configured = config["loadBalancerLoadSheddingStrategy"]
    extensible = data is not None and data.extensible
    if strategy_name is None and extensible and configured not in _extensible_shedders():
        return _TRANSFER_SHEDDER  # the extensible load manager's shedder whatever the modular key says
    name = strategy_name or configured
    where = "--strategy" if strategy_name else "loadBalancerLoadSheddingStrategy"
    if name not in pulsar.names("shedding"):
        raise InputError(where, f"unknown shedding strategy {name!r}; known: {', '.join(sorted(_modular_shedders()))}"
                                f" (modular), {', '.join(sorted(_extensible_shedders()))} (extensible)")
    if data is None:
        return name
    if extensible and name not in _extensible_shedders():
        raise InputError(where, f"{name} is a modular load manager's shedder; {data.path} holds the extensible load "
                                f"manager's BrokerLoadData/TopBundlesLoadData (use {_TRANSFER_SHEDDER})")
    if not extensible and name not in _modular_shedders():
        raise InputError(where, f"{name} belongs to the extensible load manager, whose load data "
                                "(BrokerLoadData, TopBundlesLoadData) is not the modular LoadData in "
                                f"{data.path} ({data.format})")
    return name


def _read(args: argparse.Namespace) -> decide_formats.Input:
    """Read the input: a directory here (``read_input`` reads files and stdin only), else its text."""
    path = args.snapshot
    if path != "-" and Path(path).is_dir():
        return decide_formats.read(path, None)
    return decide_formats.read(path, read_input(args))


def _read_text(path: str, what: str) -> str:
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


def _restore_state(path: Path, name: str, strategy: Any, rng: np.random.Generator,
                   replay: Replay | None = None) -> None:
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
        if replay is not None and "replay" in saved:
            replay.set_state(saved["replay"], str(path))
    except (TypeError, ValueError, KeyError, AttributeError) as err:
        raise InputError(str(path), f"invalid saved state: {err}") from None


def _save_state(path: Path, name: str, strategy: Any, rng: np.random.Generator,
                replay: Replay | None = None) -> None:
    payload = {"format": STATE_FORMAT, "strategy": name, "state": strategy.get_state(), "rng": rng.bit_generator.state}
    if replay is not None:  # the leader's memory of a replay built from dumps (bundle history, recent unloads)
        payload["replay"] = replay.get_state()
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)  # never leave a half-written state file behind


