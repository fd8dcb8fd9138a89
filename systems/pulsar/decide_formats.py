"""The inputs Pulsar's ``decide`` reads: what a real cluster gives, recognised, checked and turned into the
shedders' inputs.

Formats (the name is what ``decide`` reports):

``load-data``
    The modular leader's in-memory ``LoadData`` envelope ``{"brokerData", "bundleData", "recentlyUnloadedBundles"}``
    (no cluster exports it; the emulator and tests do). Recognised by ``brokerData``.
``load-report``
    ``LocalBrokerData`` as ``pulsar-admin broker-stats load-report`` and ``GET /admin/v2/broker-stats/load-report``
    return it (``"loadReportType": "LocalBrokerData"``, or ``cpu`` with ``lastStats``/``bundles``/``msgRateIn``):
    one report, a JSON list of reports, a map ``{broker: LocalBrokerData}``, or a directory of such files. A report's
    broker is the map key, else the host:port of its ``webServiceUrl`` (the modular load manager's broker id), else
    the file name.
``metadata-store``
    The load balancer's metadata-store nodes as an operator dumps them (``pulsar-shell``/``zkCli.sh get``):
    ``/loadbalance/brokers/<broker>`` (``LocalBrokerData``), ``/loadbalance/bundle-data/<tenant>/<ns>/<range>``
    (``BundleData``) and ``/loadbalance/broker-time-average/<broker>`` (``TimeAverageBrokerData``), as a directory
    tree mirroring the paths (the ``loadbalance`` folder, or a folder holding it; a ``.json`` suffix is allowed), or
    one JSON object keyed by path.
``extensible``
    The extensible load manager's ``BrokerLoadData`` and ``TopBundlesLoadData`` as read from its system topics
    ``non-persistent://pulsar/system/loadbalancer-broker-load-data`` and ``...-top-bundles-load-data`` (message key
    = broker): one JSON object keyed by topic (full or short name) whose values map broker → message value, or a
    directory with one entry per topic (a JSON file of that map, or a folder of one file per broker); or what
    ``pulsar-client consume`` prints for those topics (``----- got message -----`` then
    ``publishTime:[..], eventTime:[..], key:[<broker>], properties:[], content:{..}``, older versions without the
    times): the last message of each broker per kind wins, as in the load manager's table view, and the step's time
    is the newest ``publishTime``.

A **time series** is a JSON list of snapshots of one format (except a list of load reports, which is one snapshot
of several brokers), or a directory whose entries all carry a timestamp in their name (epoch seconds or
milliseconds, or an ISO date-time such as ``2026-11-24T14:05:00Z``): each entry a snapshot file or folder, replayed
in time order.

How a snapshot becomes the leader's ``LoadData`` (load-report, metadata-store), as a newly elected leader's
``ModularLoadManagerImpl.updateAll`` builds it: the brokers' reports are ``brokerData[..].localData``; for every
bundle in a report's ``lastStats`` the leader's bundle history gets one sample — a bundle it has not seen starts
from its ``/loadbalance/bundle-data`` node when the dump has one, else from the default stats (so the first sample
replaces them); bundles no broker reports are dropped; each broker's ``timeAverageData`` is recomputed from the
bundle data (``TimeAverageBrokerData.reset``). Across a series the history is carried (one sample per step: the
real leader folds one on every report of any broker, which a dump cannot tell), and so are
``recentlyUnloadedBundles`` (:mod:`.decide_replay`) — the bundles this replay unloaded within ``loadBalancerSheddingGracePeriodMinutes``
of the step's time (the directory timestamp, else the newest ``lastUpdate``). The extensible snapshot becomes a
``TransferContext`` at ``now`` = the step's time (the timestamp, else the newest ``updatedAt``), with
``availableBrokers`` = the brokers of the load-data store, and the bundles/brokers this replay unloaded as
``recentlyUnloadedBundles``/``recentlyUnloadedBrokers``.

Required fields (missing → :class:`InputError`, exit 2, naming the file and the JSON path): of a ``LocalBrokerData``
the five resources (``cpu``, ``memory``, ``directMemory``, ``bandwidthIn``, ``bandwidthOut``, each with ``usage``
and ``limit``), ``msgRateIn/Out``, ``msgThroughputIn/Out`` and ``lastStats`` (each bundle's four rates); of the
envelope a non-empty ``brokerData``, each broker's ``localData`` with ``cpu`` (the envelope's other resources read
as 0, as before), its rates and ``bundles`` or ``lastStats``, ``bundleData`` and each bundle's ``shortTermData``;
of a ``BrokerLoadData`` ``weightedMaxEMA``, ``msgThroughputIn/Out``, ``msgThroughputEMA``, ``updatedAt``; of a
``TopBundlesLoadData`` ``topBundlesLoadData`` with each entry's ``bundleName`` and ``stats``. What a dump cannot
supply is named in a warning (:attr:`Input.warnings`), never silently assumed.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

from clusteremu.base.errors import InputError
from clusteremu.strategies.pulsar.extensible import BrokerLoadData, TopBundlesLoadData, TransferContext
from clusteremu.strategies.pulsar.json_input import field_path, key_path, read_document, show
from clusteremu.strategies.pulsar.load_data import (
    BrokerData,
    BundleData,
    LoadData,
    LocalBrokerData,
)

from .decide_replay import Replay, Step

__all__ = ["FORMATS", "Input", "Step", "claims", "read"]

#: format name → one line for the help
FORMATS: dict[str, str] = {
    "load-data": "the leader's LoadData envelope {brokerData, bundleData, recentlyUnloadedBundles}",
    "load-report": "LocalBrokerData as `pulsar-admin broker-stats load-report` prints it: one, a JSON list, "
                   "a map {broker: report}, or a directory of files",
    "metadata-store": "/loadbalance/brokers/<broker>, /loadbalance/bundle-data/<tenant>/<ns>/<range>, "
                      "/loadbalance/broker-time-average/<broker>: a directory tree or one JSON object keyed by path",
    "extensible": "BrokerLoadData and TopBundlesLoadData from the topics loadbalancer-broker-load-data and "
                  "loadbalancer-top-bundles-load-data: one JSON object keyed by topic, a directory per topic, or "
                  "`pulsar-client consume` output",
}

BROKER_LOAD_DATA_TOPIC = "non-persistent://pulsar/system/loadbalancer-broker-load-data"
TOP_BUNDLES_LOAD_DATA_TOPIC = "non-persistent://pulsar/system/loadbalancer-top-bundles-load-data"
_TOPIC_SHORT = {BROKER_LOAD_DATA_TOPIC: "loadbalancer-broker-load-data",
                TOP_BUNDLES_LOAD_DATA_TOPIC: "loadbalancer-top-bundles-load-data"}

_RESOURCES = ("cpu", "memory", "directMemory", "bandwidthIn", "bandwidthOut")
_RATES = ("msgRateIn", "msgRateOut", "msgThroughputIn", "msgThroughputOut")
_BROKER_LOAD_DATA_REQUIRED = ("weightedMaxEMA", "msgThroughputIn", "msgThroughputOut", "msgThroughputEMA", "updatedAt")

# Timestamps in names: epoch seconds (10 digits) or milliseconds (13), or an ISO-like date-time.
_EPOCH = re.compile(r"(?<!\d)(\d{13}|\d{10})(?!\d)")
_ISO = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})[T_ ]?(\d{2})[:\-]?(\d{2})[:\-]?(\d{2})(?:[.,](\d+))?")


# --------------------------------------------------------------------------------------------------
# Results


@dataclass
class Input:
    """What was read: the format's name, the steps in time order, and the warnings about what the dump lacks."""

    format: str
    path: str
    steps: list[Step]
    warnings: list[str] = field(default_factory=list)
    #: the leader's memory across the steps of a replay built from dumps; None for the envelope, which carries its own
    replay: Replay | None = None

    @property
    def extensible(self) -> bool:
        """Whether the steps are extensible-load-manager data (TransferShedder's)."""
        return self.format == "extensible"


def _warn_once(warnings: list[str], text: str) -> None:
    if text not in warnings:
        warnings.append(text)


# --------------------------------------------------------------------------------------------------
# Recognising a JSON value


def _is_report(obj: Any) -> bool:
    """A ``LocalBrokerData`` (a load report)."""
    if not isinstance(obj, dict):
        return False
    if obj.get("loadReportType") == "LocalBrokerData":
        return True
    return ("cpu" in obj and any(k in obj for k in ("lastStats", "bundles", "msgRateIn")) and "brokerData" not in obj
            and not _is_broker_load_data(obj))


def _is_broker_load_data(obj: Any) -> bool:
    """The extensible load manager's ``BrokerLoadData`` (it has ``weightedMaxEMA``; a ``LocalBrokerData`` has not)."""
    return isinstance(obj, dict) and "weightedMaxEMA" in obj


def _is_path_map(obj: Any) -> bool:
    return isinstance(obj, dict) and bool(obj) and all(
        isinstance(k, str) and k.lstrip("/").startswith("loadbalance/") for k in obj)


def _topic_of(name: str) -> str | None:
    """The system topic a key or file name names (full or short name), if any."""
    stem = _stem(name)
    for topic, short in _TOPIC_SHORT.items():
        if stem in (topic, short) or stem.endswith("/" + short):
            return topic
    return None


def _is_topic_map(obj: Any) -> bool:
    return isinstance(obj, dict) and bool(obj) and all(isinstance(k, str) and _topic_of(k) for k in obj)


def classify(obj: Any) -> str | None:
    """The format of one snapshot given as a JSON value, or ``None``."""
    if isinstance(obj, dict):
        if "brokerData" in obj:
            return "load-data"
        if _is_path_map(obj):
            return "metadata-store"
        if _is_topic_map(obj):
            return "extensible"
        if _is_report(obj):
            return "load-report"
        if obj and all(_is_report(v) for v in obj.values()):
            return "load-report"
        return None
    if isinstance(obj, list) and obj and all(_is_report(v) for v in obj):
        return "load-report"
    return None


def classify_document(obj: Any) -> tuple[str, bool] | None:
    """``(format, is_series)`` of a whole JSON document, or ``None`` when it is none of Pulsar's."""
    one = classify(obj)
    if one is not None:
        return one, False
    if isinstance(obj, list) and obj:
        kinds = {classify(item) for item in obj}
        if len(kinds) == 1 and None not in kinds:
            return kinds.pop(), True
    return None


def claims(path: str, text: str | None) -> bool:
    """Whether the input is Pulsar's: a directory holding Pulsar dumps, or JSON in one of :data:`FORMATS`."""
    if text is None:
        p = Path(path)
        return p.is_dir() and _classify_dir(p) is not None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        return is_consume_output(text)
    return classify_document(obj) is not None


# --------------------------------------------------------------------------------------------------
# Directories


def timestamp_of(name: str) -> int | None:
    """Epoch ms from a file or folder name (``1732456800000.json``, ``2026-11-24T14:00:00Z``), or ``None``."""
    iso = _ISO.search(name)
    if iso:
        y, mo, d, h, mi, s, frac = iso.groups()
        try:
            when = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), tzinfo=timezone.utc)
            return int(when.timestamp()) * 1000 + int((frac or "0")[:3].ljust(3, "0"))
        except ValueError:
            pass  # digits that are no date (epoch milliseconds): read them as such below
    epoch = _EPOCH.search(name)
    if epoch:
        digits = epoch.group(1)
        return int(digits) if len(digits) == 13 else int(digits) * 1000
    return None


def _entries(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if not p.name.startswith("."))


def _loadbalance_root(directory: Path) -> Path | None:
    if directory.name == "loadbalance" and any((directory / n).is_dir() for n in ("brokers", "bundle-data")):
        return directory
    inner = directory / "loadbalance"
    if inner.is_dir():
        return inner
    return None


def _classify_dir(directory: Path) -> tuple[str, bool] | None:
    """``(format, is_series)`` of a directory, or ``None``."""
    if _loadbalance_root(directory) is not None:
        return "metadata-store", False
    entries = _entries(directory)
    if not entries:
        return None
    if any(_topic_of(p.name) for p in entries):
        return "extensible", False
    if all(timestamp_of(p.name) is not None for p in entries):
        kinds = set()
        for p in entries:
            if p.is_dir():
                inner = _classify_dir(p)
                kinds.add(None if inner is None or inner[1] else inner[0])
            else:
                kinds.add(_classify_file(p))
        if len(kinds) == 1 and None not in kinds:
            kind = kinds.pop()
            # timestamped load reports of one broker each are one snapshot of several brokers, not a series
            if kind != "load-report" or not all(p.is_file() and _single_report_file(p) for p in entries):
                return kind, True
    files = [p for p in entries if p.is_file()]
    if files and all(_single_report_or_set(p) for p in files):
        return "load-report", False
    return None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(str(path), f"cannot read: {err}") from None


def _load_json(path: Path) -> Any:
    text = _read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(str(path), f"not valid JSON: {err}") from None


def _peek(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def _classify_file(path: Path) -> str | None:
    found = classify_document(_peek(path))
    return None if found is None or found[1] else found[0]


def _single_report_file(path: Path) -> bool:
    return _is_report(_peek(path))


def _single_report_or_set(path: Path) -> bool:
    return classify(_peek(path)) == "load-report"


# --------------------------------------------------------------------------------------------------
# Checking required fields (before the typed readers, which read absent fields as defaults)


def _missing(where: str, path: str, name: str, what: str) -> InputError:
    return InputError(f"{where}: {field_path(path, name)}" if where else field_path(path, name),
                      f"missing required field {name!r} of {what}")


def _require(obj: Any, names: Iterable[str], where: str, path: str, what: str) -> None:
    if not isinstance(obj, dict):
        raise InputError(f"{where}: {path}" if path else where, f"expected {what} object, got {show(obj)}")
    for name in names:
        if obj.get(name) is None:
            raise _missing(where, path, name, what)


def _require_usage(obj: dict[str, Any], name: str, where: str, path: str) -> None:
    _require(obj[name], ("usage", "limit"), where, field_path(path, name), "ResourceUsage")


def check_local_broker_data(obj: Any, where: str, path: str, resources: tuple[str, ...] = _RESOURCES,
                            envelope: bool = False) -> None:
    """A ``LocalBrokerData`` has what the shedders read (see the module docstring)."""
    _require(obj, (*resources, *_RATES), where, path, "LocalBrokerData")
    for name in resources:
        _require_usage(obj, name, where, path)
    if envelope:
        if obj.get("bundles") is None and obj.get("lastStats") is None:
            raise InputError(f"{where}: {path}" if where else path,
                             "missing required field 'bundles' (or 'lastStats') of LocalBrokerData")
        stats = obj.get("lastStats") or {}
    else:
        _require(obj, ("lastStats",), where, path, "LocalBrokerData")
        stats = obj["lastStats"]
    if not isinstance(stats, dict):
        raise InputError(f"{where}: {field_path(path, 'lastStats')}", f"expected an object, got {show(stats)}")
    for bundle, value in stats.items():
        _require(value, _RATES, where, key_path(field_path(path, "lastStats"), bundle), "NamespaceBundleStats")


def check_load_data(obj: Any, where: str, prefix: str = "") -> None:
    """The envelope has what the shedders read: brokers, each with its report, and the bundle data. ``prefix``: the
    JSON path of the envelope in its file (``[2]`` in a series)."""
    _require(obj, ("brokerData", "bundleData"), where, prefix, "LoadData")
    brokers = obj["brokerData"]
    at = field_path(prefix, "brokerData")
    if not isinstance(brokers, dict):
        raise InputError(f"{where}: {at}", f"expected an object, got {show(brokers)}")
    if not brokers:
        raise InputError(f"{where}: {at}", "empty: no broker to decide on")
    for broker, data in brokers.items():
        path = key_path(at, broker)
        _require(data, ("localData",), where, path, "BrokerData")
        check_local_broker_data(data["localData"], where, field_path(path, "localData"), ("cpu",), envelope=True)
    bundles = obj["bundleData"]
    at = field_path(prefix, "bundleData")
    if not isinstance(bundles, dict):
        raise InputError(f"{where}: {at}", f"expected an object, got {show(bundles)}")
    for bundle, data in bundles.items():
        path = key_path(at, bundle)
        _require(data, ("shortTermData",), where, path, "BundleData")
        _require(data["shortTermData"], _RATES, where, field_path(path, "shortTermData"), "TimeAverageMessageData")


def check_broker_load_data(obj: Any, where: str, path: str) -> None:
    _require(obj, _BROKER_LOAD_DATA_REQUIRED, where, path, "BrokerLoadData")


def check_top_bundles(obj: Any, where: str, path: str) -> None:
    _require(obj, ("topBundlesLoadData",), where, path, "TopBundlesLoadData")
    items = obj["topBundlesLoadData"]
    if not isinstance(items, list):
        raise InputError(f"{where}: {field_path(path, 'topBundlesLoadData')}", f"expected a list, got {show(items)}")
    for i, item in enumerate(items):
        item_path = f"{field_path(path, 'topBundlesLoadData')}[{i}]"
        _require(item, ("bundleName", "stats"), where, item_path, "BundleLoadData")
        _require(item["stats"], ("msgThroughputIn", "msgThroughputOut"), where, field_path(item_path, "stats"),
                 "NamespaceBundleStats")


# --------------------------------------------------------------------------------------------------
# Snapshots: raw pieces, each value with the file it came from and its JSON path there


@dataclass
class _Located:
    value: Any
    where: str  # the file (or "-")
    path: str  # the JSON path inside it ("" for the whole file)

    def read(self, reader: Callable[[Any, str], Any]) -> Any:
        return read_document(lambda v: reader(v, self.path), self.value, self.where)


@dataclass
class _ModularSnapshot:
    reports: dict[str, _Located]
    bundle_data: dict[str, _Located] = field(default_factory=dict)
    time_average: dict[str, _Located] = field(default_factory=dict)


@dataclass
class _ExtensibleSnapshot:
    brokers: dict[str, _Located]
    top_bundles: dict[str, _Located]


def broker_of(report: Any, fallback: str) -> str:
    """The modular load manager's broker id for a report: host:port of ``webServiceUrl``, else ``fallback``."""
    if isinstance(report, dict):
        for key in ("webServiceUrl", "webServiceUrlTls"):
            url = report.get(key)
            if isinstance(url, str) and "://" in url:
                return url.split("://", 1)[1].split("/", 1)[0]
    return fallback


def _stem(name: str) -> str:
    for suffix in (".json", ".txt", ".log"):
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


# pulsar-client consume: "key:[k], properties:[..], content:<value>", newer versions with publishTime/eventTime first
_CONSUMED = re.compile(r"^(?:publishTime:\[(?P<publish>-?\d*)\], eventTime:\[[^\]]*\], )?key:\[(?P<key>[^\]]*)\], "
                       r"(?:properties:\[.*?\], )?content:(?P<content>\{.*\})\s*$")
_MESSAGE_BOUNDARY = "----- got message -----"


def is_consume_output(text: str) -> bool:
    """Whether ``text`` is ``pulsar-client consume`` output holding BrokerLoadData or TopBundlesLoadData."""
    return _MESSAGE_BOUNDARY in text and any(
        m and ("weightedMaxEMA" in m.group("content") or "topBundlesLoadData" in m.group("content"))
        for m in map(_CONSUMED.match, text.splitlines()))


def _extensible_from_consume(text: str, where: str, snap: "_ExtensibleSnapshot | None" = None
                             ) -> tuple["_ExtensibleSnapshot", int | None]:
    """The table view at the end of ``pulsar-client consume`` output: the last message per broker and kind."""
    snap = snap if snap is not None else _ExtensibleSnapshot({}, {})
    newest: int | None = None
    for number, line in enumerate(text.splitlines(), 1):
        m = _CONSUMED.match(line)
        if m is None:
            continue
        at = f"line {number}"
        try:
            value = json.loads(m.group("content"))
        except json.JSONDecodeError as err:
            raise InputError(f"{where}: {at}", f"content is not valid JSON: {err}") from None
        key = m.group("key")
        if key in ("", "null"):
            raise InputError(f"{where}: {at}", "a message without a key (the key is the broker)")
        if _is_broker_load_data(value):
            snap.brokers[key] = _Located(value, where, at)
        elif isinstance(value, dict) and "topBundlesLoadData" in value:
            snap.top_bundles[key] = _Located(value, where, at)
        else:
            raise InputError(f"{where}: {at}", "neither a BrokerLoadData nor a TopBundlesLoadData message")
        if m.group("publish"):
            newest = max(newest or 0, int(m.group("publish")))
    return snap, newest


def _reports_from_value(value: Any, where: str, path: str, fallback: str) -> dict[str, _Located]:
    """Load reports from one JSON value: a report, a list of them, or a map broker → report."""
    out: dict[str, _Located] = {}

    def add(broker: str, item: Any, item_path: str) -> None:
        if broker in out:
            raise InputError(f"{where}: {item_path}" if item_path else where,
                             f"broker {broker!r} appears twice in one snapshot (a time series is a list of "
                             "snapshots, or a directory of timestamped ones)")
        out[broker] = _Located(item, where, item_path)

    if _is_report(value):
        add(broker_of(value, fallback), value, path)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            add(broker_of(item, f"{fallback}[{i}]"), item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for broker, item in value.items():
            add(broker, item, key_path(path, broker))
    else:
        raise InputError(f"{where}: {path}" if path else where, f"expected LocalBrokerData, got {show(value)}")
    return out


def _snapshot_from_path_map(obj: dict[str, Any], where: str, path: str) -> _ModularSnapshot:
    snap = _ModularSnapshot({})
    for key, value in obj.items():
        node = key.lstrip("/").split("/")[1:]  # after "loadbalance"
        at = key_path(path, key)
        kind, rest = (node[0], "/".join(node[1:])) if node else ("", "")
        if kind == "brokers" and rest:
            snap.reports[rest] = _Located(value, where, at)
        elif kind == "bundle-data" and rest:
            snap.bundle_data[rest] = _Located(value, where, at)
        elif kind == "broker-time-average" and rest:
            snap.time_average[rest] = _Located(value, where, at)
        # other load-balancer nodes (leader, resource-quota, ...) do not feed the shedders
    return snap


def _snapshot_from_tree(root: Path) -> _ModularSnapshot:
    snap = _ModularSnapshot({})
    for kind, target in (("brokers", snap.reports), ("bundle-data", snap.bundle_data),
                         ("broker-time-average", snap.time_average)):
        base = root / kind
        if not base.is_dir():
            continue
        for file in sorted(p for p in base.rglob("*") if p.is_file() and not p.name.startswith(".")):
            name = _stem(file.relative_to(base).as_posix())
            target[name] = _Located(_load_json(file), str(file), "")
    return snap


def _extensible_from_topic_map(obj: dict[str, Any], where: str, path: str) -> _ExtensibleSnapshot:
    snap = _ExtensibleSnapshot({}, {})
    for key, value in obj.items():
        at = key_path(path, key)
        if not isinstance(value, dict):
            raise InputError(f"{where}: {at}", f"expected an object broker -> message value, got {show(value)}")
        target = snap.brokers if _topic_of(key) == BROKER_LOAD_DATA_TOPIC else snap.top_bundles
        for broker, item in value.items():
            target[broker] = _Located(item, where, key_path(at, broker))
    return snap


def _extensible_from_dir(directory: Path) -> _ExtensibleSnapshot:
    snap = _ExtensibleSnapshot({}, {})
    for entry in _entries(directory):
        topic = _topic_of(entry.name)
        if topic is None:
            continue
        target = snap.brokers if topic == BROKER_LOAD_DATA_TOPIC else snap.top_bundles
        if entry.is_dir():
            for file in _entries(entry):
                if file.is_file():
                    target[_stem(file.name)] = _Located(_load_json(file), str(file), "")
        elif is_consume_output(_read_text(entry)):
            _extensible_from_consume(_read_text(entry), str(entry), snap)
        else:
            obj = _load_json(entry)
            if not isinstance(obj, dict):
                raise InputError(str(entry), f"expected an object broker -> message value, got {show(obj)}")
            for broker, item in obj.items():
                target[broker] = _Located(item, str(entry), key_path("", broker))
    return snap


# --------------------------------------------------------------------------------------------------
# Reading


def read(path: str, text: str | None) -> Input:
    """Read the input at ``path`` (``text``: its contents, ``None`` for a directory) into an :class:`Input`.

    Raises :class:`InputError` for anything not Pulsar's, or a required field missing (naming file and field).
    """
    if text is None:
        return _read_dir(Path(path))
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        if is_consume_output(text):
            snap, newest = _extensible_from_consume(text, path)
            return _build("extensible", path, [(snap, path, newest)])
        raise InputError(path, f"not valid JSON: {err}") from None
    found = classify_document(obj)
    if found is None:
        if isinstance(obj, list) and not obj:
            raise InputError(path, "the snapshot list is empty")
        # a document that names brokerData somewhere in a list: let the envelope reader say what is wrong
        if isinstance(obj, list) and any(isinstance(i, dict) and "brokerData" in i for i in obj):
            found = ("load-data", True)
        elif _is_broker_load_data(obj) or (isinstance(obj, dict) and obj and all(
                _is_broker_load_data(v) for v in obj.values())):
            raise InputError(path, "BrokerLoadData without its topic: give {\"loadbalancer-broker-load-data\": "
                                   "{broker: BrokerLoadData}, \"loadbalancer-top-bundles-load-data\": {broker: "
                                   "TopBundlesLoadData}}, or a directory with one entry per topic")
        else:
            raise InputError(path, "not a Pulsar load snapshot: expected one of " + "; ".join(
                f"{k} ({v})" for k, v in FORMATS.items()))
    kind, series = found
    items = [(f"[{i}]", item) for i, item in enumerate(obj)] if series else [("", obj)]
    return _build(kind, path, [(_located_snapshot(kind, item, path, prefix), f"{path}{prefix}", None)
                               for prefix, item in items])


def _located_snapshot(kind: str, value: Any, where: str, prefix: str) -> Any:
    if kind == "load-data":
        return _Located(value, where, prefix)
    if kind == "load-report":
        return _ModularSnapshot(_reports_from_value(value, where, prefix, Path(where).name))
    if kind == "metadata-store":
        return _snapshot_from_path_map(value, where, prefix)
    return _extensible_from_topic_map(value, where, prefix)


def _read_dir(directory: Path) -> Input:
    found = _classify_dir(directory)
    if found is None:
        raise InputError(str(directory), "a directory that holds no Pulsar dump: expected one of " + "; ".join(
            f"{k} ({v})" for k, v in FORMATS.items()) + ", or timestamped snapshots of one of them")
    kind, series = found
    if not series:
        return _build(kind, str(directory), [(_dir_snapshot(kind, directory), str(directory), None)])
    entries = sorted(_entries(directory), key=lambda p: (timestamp_of(p.name), p.name))
    snapshots = []
    for entry in entries:
        when = timestamp_of(entry.name)
        if entry.is_dir():
            snapshots.append((_dir_snapshot(kind, entry), str(entry), when))
        else:
            snapshots.append((_located_snapshot(kind, _load_json(entry), str(entry), ""), str(entry), when))
    return _build(kind, str(directory), snapshots)


def _dir_snapshot(kind: str, directory: Path) -> Any:
    if kind == "metadata-store":
        root = _loadbalance_root(directory)
        assert root is not None
        return _snapshot_from_tree(root)
    if kind == "extensible":
        return _extensible_from_dir(directory)
    reports: dict[str, _Located] = {}
    for file in _entries(directory):
        if not file.is_file():
            continue
        for broker, located in _reports_from_value(_load_json(file), str(file), "", _stem(file.name)).items():
            if broker in reports:
                raise InputError(str(file), f"broker {broker!r} also reported by {reports[broker].where}")
            reports[broker] = located
    return _ModularSnapshot(reports)


def _build(kind: str, path: str, snapshots: list[tuple[Any, str, int | None]]) -> Input:
    out = Input(kind, path, [])
    if kind == "load-data":
        for located, source, when in snapshots:
            check_load_data(located.value, located.where, located.path)
            out.steps.append(Step(source, _read_envelope(located), when))
        return out
    if kind == "extensible":
        for snap, source, when in snapshots:
            out.steps.append(Step(source, _transfer_context(snap, out.warnings), when))
        _extensible_warnings(out)
        out.replay = Replay()
        return out
    out.replay = Replay()
    for snap, source, when in snapshots:
        reports = _modular_reports(snap, kind, out.warnings)
        stored = {bundle: loc.read(BundleData.from_json) for bundle, loc in snap.bundle_data.items()}
        out.steps.append(Step(source, LoadData(broker_data=reports, bundle_data=stored), when))
    _modular_warnings(out, snapshots)
    return out


def _read_envelope(located: _Located) -> LoadData:
    try:
        return LoadData.from_json(located.value, located.where)
    except InputError as err:
        # LoadData.from_json puts the file in front; the list index goes between the file and the JSON path
        if located.path and err.where.startswith(located.where + ": "):
            inner = err.where[len(located.where) + 2:]
            raise InputError(f"{located.where}: {located.path}.{inner}", err.reason) from None
        if located.path and err.where == located.where:
            raise InputError(f"{located.where}: {located.path}", err.reason) from None
        raise


def _modular_reports(snap: _ModularSnapshot, kind: str, warnings: list[str]) -> dict[str, BrokerData]:
    if not snap.reports:
        where = next(iter(snap.bundle_data.values())).where if snap.bundle_data else "input"
        raise InputError(where, "no broker report (/loadbalance/brokers/<broker>): no broker to decide on"
                         if kind == "metadata-store" else "no load report: no broker to decide on")
    out: dict[str, BrokerData] = {}
    for broker, loc in snap.reports.items():
        check_local_broker_data(loc.value, loc.where, loc.path)
        out[broker] = BrokerData(local_data=loc.read(LocalBrokerData.from_json))
    for broker in snap.time_average:
        if broker not in snap.reports:
            _warn_once(warnings, f"broker {broker} has a /loadbalance/broker-time-average node but no "
                                 "/loadbalance/brokers report: a dead broker, or a report left out of the dump "
                                 "(decided without it)")
    return out


def _modular_warnings(out: Input, snapshots: list[tuple[Any, str, int | None]]) -> None:
    w = out.warnings
    w.append("recentlyUnloadedBundles: not in the dump; taken as empty at the first step, then as the bundles this "
             "replay unloaded within loadBalancerSheddingGracePeriodMinutes (a bundle the real leader unloaded "
             "recently may be chosen again)")
    w.append("preallocatedBundleData: not in the dump; taken as empty (no shedder reads it; placement does)")
    if out.format == "metadata-store":
        w.append("bundle data: /loadbalance/bundle-data holds the leader's last write (every "
                 "loadBalancerResourceQuotaUpdateIntervalMinutes, 15 by default), older than its in-memory "
                 "history; the reports' lastStats are folded in once on top")
        missing_ta = sorted({b for snap, _, _ in snapshots for b in snap.reports if b not in snap.time_average})
        if missing_ta:
            w.append("timeAverageData: no /loadbalance/broker-time-average node for " + ", ".join(missing_ta)
                     + "; recomputed from the bundle data as the leader's updateAll does (no shedder reads it)")
        else:
            w.append("timeAverageData: recomputed from the bundle data as the leader's updateAll does (the "
                     "/loadbalance/broker-time-average nodes are its last write; no shedder reads them)")
        without = sorted({b for snap, _, _ in snapshots for loc in snap.reports.values()
                          for b in (loc.value.get("lastStats") or {}) if b not in snap.bundle_data})
        orphans = sorted({b for snap, _, _ in snapshots for b in snap.bundle_data
                          if not any(b in (loc.value.get("lastStats") or {}) for loc in snap.reports.values())})
        if orphans:
            w.append(f"bundle data: {len(orphans)} /loadbalance/bundle-data node(s) are in no broker's report (e.g. "
                     f"{orphans[0]}): unloaded or deleted bundles, or their owner's report is missing from the dump")
        if without:
            w.append(f"bundle data: {len(without)} reported bundle(s) have no /loadbalance/bundle-data node (e.g. "
                     f"{without[0]}); their history starts from their last reported sample, as the leader's does")
    else:
        w.append("bundle data: a load report carries no bundle history; each bundle's short- and long-term data "
                 "start from its last reported sample (as a new leader that finds no /loadbalance/bundle-data)")
        w.append("timeAverageData: not in a load report; recomputed from the bundle data as the leader's updateAll "
                 "does (no shedder reads it)")
    previous: set[str] | None = None
    for snap, source, _ in snapshots:
        brokers = set(snap.reports)
        if previous is not None and previous - brokers:
            _warn_once(w, f"{source}: broker(s) {', '.join(sorted(previous - brokers))} reported in the previous "
                          "step are missing (a dead broker, or a report left out of the dump)")
        previous = brokers


def _transfer_context(snap: _ExtensibleSnapshot, warnings: list[str]) -> TransferContext:
    if not snap.brokers:
        where = next(iter(snap.top_bundles.values())).where if snap.top_bundles else "input"
        raise InputError(where, f"no BrokerLoadData (topic {BROKER_LOAD_DATA_TOPIC}): no broker to decide on")
    store = {}
    for broker, loc in snap.brokers.items():
        check_broker_load_data(loc.value, loc.where, loc.path)
        store[broker] = loc.read(BrokerLoadData.from_json)
    top = {}
    for broker, loc in snap.top_bundles.items():
        check_top_bundles(loc.value, loc.where, loc.path)
        top[broker] = loc.read(TopBundlesLoadData.from_json)
    for broker in store:
        if broker not in top:
            _warn_once(warnings, f"TopBundlesLoadData: none for broker {broker} (TransferShedder cannot unload "
                                 "from it: NoLoadData)")
    return TransferContext(broker_load_data_store=store, top_bundle_load_data_store=top,
                           available_brokers=list(store), now=0)


def _extensible_warnings(out: Input) -> None:
    w = out.warnings
    w.append("availableBrokers: not in the dump; taken as the brokers of the load-data store")
    w.append("bundleOwners: the service-unit state channel is not in the dump; ownership is not checked")
    w.append("isolation and anti-affinity policies are not in the dump; every bundle counts as transferable")
    w.append("recentlyUnloadedBundles, recentlyUnloadedBrokers: not in the dump; taken as empty at the first step, "
             "then as what this replay unloaded")
    if any(step.time is None for step in out.steps):
        w.append("now: the dump has no time; each step is taken at its newest BrokerLoadData.updatedAt")
