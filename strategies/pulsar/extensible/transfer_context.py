"""``TransferContext``: everything ``TransferShedder`` decides from, as plain data (Pulsar's
``LoadManagerContext`` plus the scheduler's maps), and its JSON form for recorded stores.

Fields (Python name / JSON name — units):

* ``broker_load_data_store`` / ``brokerLoadDataStore`` — broker → :class:`.BrokerLoadData`.
* ``top_bundle_load_data_store`` / ``topBundlesLoadDataStore`` — broker → its reported top bundles, ascending:
  a :class:`.TopBundlesLoadData` or a list of ``(bundle, NamespaceBundleStats)`` pairs
  (JSON: Pulsar's ``{"topBundlesLoadData": [{"bundleName", "stats"}]}`` or the bare list).
* ``available_brokers`` / ``availableBrokers`` — the registry's live brokers; ``None`` (JSON ``null``)
  models a failed registry lookup (the cycle then fails with ``Unknown``). JSON default when the key is
  absent: the brokers of ``brokerLoadDataStore``.
* ``now`` / ``now`` — epoch milliseconds (Pulsar reads the clock; strategies here are pure).
* ``bundle_owners`` / ``bundleOwners`` — bundle → owning broker, from the service-unit state channel; a
  bundle is skipped unless the max broker owns it. ``None`` (absent) = no channel: ownership is not checked
  (what Pulsar does when the shedder has no channel, as in its unit tests).
* ``recently_unloaded_bundles`` / ``recentlyUnloadedBundles`` — bundle → epoch ms of its last unload.
* ``recently_unloaded_brokers`` / ``recentlyUnloadedBrokers`` — broker → epoch ms of its last unload.
* ``transferable`` — predicate ``(bundle, source_broker, destination_broker) -> bool`` standing in for
  Pulsar's ``isTransferable`` (isolation and anti-affinity policies unless
  ``loadBalancerSheddingBundlesWithPoliciesEnabled``, then the broker-filter pipeline, then "is the
  destination still a candidate"). Pulsar passes the min broker as destination even when transfer is
  disabled, and so does the shedder here. A predicate that raises counts as "not transferable", as a
  failing broker filter does in Pulsar. ``None`` = everything is transferable. JSON: ``nonTransferable``,
  a list of ``{"bundle", "sourceBroker"?, "destinationBroker"?}`` rules (a missing broker matches any).
* ``config`` / ``config`` — optional ServiceConfiguration keys that override the strategy's own config for
  this call (Pulsar's strategies read ``context.brokerConfiguration()``).
* ``load_data_order`` / ``loadDataOrder`` — how the load-data store is iterated, which decides float
  summation order and tie-breaks. Pulsar's store is a table view backed by a ``ConcurrentHashMap``
  (``"concurrent"``, the default; Pulsar's unit tests use a ``HashMap``: ``"hashmap"``); the mapping's
  order is taken as the insertion history and the keys are iterated as that Java map would
  (:mod:`clusteremu.base.java`). ``"given"`` iterates the mapping as given.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Literal, Mapping, NamedTuple, Sequence

from clusteremu.base.errors import InputError
from clusteremu.base.java import java_order

from ..config import PulsarConfig, as_config
from ..json_input import (
    as_integer,
    key_path,
    read_document,
    read_integer,
    read_object,
    read_string,
    read_string_list,
    show,
)
from .broker_load_data import BrokerLoadData
from .top_k_bundles import BundleLoadData, TopBundlesLoadData

__all__ = ["LoadDataOrder", "NonTransferableRule", "NonTransferableRules", "TransferContext", "TransferPredicate"]

LoadDataOrder = Literal["concurrent", "hashmap", "given"]
TransferPredicate = Callable[[str, str, str], bool]

_ORDERS: tuple[str, ...] = ("concurrent", "hashmap", "given")
_FIELDS = (
    "now",
    "brokerLoadDataStore",
    "topBundlesLoadDataStore",
    "availableBrokers",
    "bundleOwners",
    "recentlyUnloadedBundles",
    "recentlyUnloadedBrokers",
    "nonTransferable",
    "config",
    "loadDataOrder",
)


class NonTransferableRule(NamedTuple):
    """``bundle`` may not move from ``source_broker`` to ``destination_broker`` (``None`` = any broker)."""

    bundle: str
    source_broker: str | None = None
    destination_broker: str | None = None

    def matches(self, bundle: str, source: str, destination: str) -> bool:
        """Whether this rule forbids moving ``bundle`` from ``source`` to ``destination``."""
        return (
            self.bundle == bundle
            and (self.source_broker is None or self.source_broker == source)
            and (self.destination_broker is None or self.destination_broker == destination)
        )


class NonTransferableRules:
    """A transfer predicate built from :class:`NonTransferableRule` entries: transferable unless a rule
    matches. Callable as ``rules(bundle, source_broker, destination_broker)``."""

    def __init__(self, rules: Sequence[NonTransferableRule] = ()) -> None:
        self.rules = list(rules)

    def __call__(self, bundle: str, source: str, destination: str) -> bool:
        return not any(rule.matches(bundle, source, destination) for rule in self.rules)

    def to_json(self) -> list[dict[str, str]]:
        """The ``nonTransferable`` JSON list."""
        out = []
        for rule in self.rules:
            entry = {"bundle": rule.bundle}
            if rule.source_broker is not None:
                entry["sourceBroker"] = rule.source_broker
            if rule.destination_broker is not None:
                entry["destinationBroker"] = rule.destination_broker
            out.append(entry)
        return out


def _top_bundle_list(value: TopBundlesLoadData | Sequence[Any]) -> list[BundleLoadData]:
    entries = value.top_bundles_load_data if isinstance(value, TopBundlesLoadData) else value
    return [entry if isinstance(entry, BundleLoadData) else BundleLoadData(*entry) for entry in entries]


@dataclass
class TransferContext:
    """Inputs of one ``TransferShedder`` cycle (see the module docstring for each field)."""

    broker_load_data_store: Mapping[str, BrokerLoadData]
    top_bundle_load_data_store: Mapping[str, TopBundlesLoadData | Sequence[Any]]
    available_brokers: Collection[str] | None
    now: int
    bundle_owners: Mapping[str, str] | None = None
    recently_unloaded_bundles: Mapping[str, int] = field(default_factory=dict)
    recently_unloaded_brokers: Mapping[str, int] = field(default_factory=dict)
    transferable: TransferPredicate | None = None
    config: Mapping[str, Any] | PulsarConfig | None = None
    load_data_order: LoadDataOrder = "concurrent"

    def __post_init__(self) -> None:
        if self.load_data_order not in _ORDERS:
            raise ValueError(f"load_data_order must be one of {_ORDERS}, got {self.load_data_order!r}")

    # --- what the shedder reads
    def load_data_entries(self) -> list[tuple[str, BrokerLoadData]]:
        """``brokerLoadDataStore().entrySet()`` in the iteration order chosen by :attr:`load_data_order`."""
        store = self.broker_load_data_store
        if self.load_data_order == "given":
            return list(store.items())
        return [(broker, store[broker]) for broker in java_order(store, self.load_data_order)]

    def top_bundles(self, broker: str) -> list[BundleLoadData] | None:
        """``broker``'s reported top bundles (ascending), or ``None`` when the store has no entry."""
        value = self.top_bundle_load_data_store.get(broker)
        return None if value is None else _top_bundle_list(value)

    def is_owner(self, bundle: str, broker: str) -> bool:
        """Whether ``broker`` owns ``bundle`` (always true when :attr:`bundle_owners` is ``None``)."""
        return self.bundle_owners is None or self.bundle_owners.get(bundle) == broker

    def is_transferable(self, bundle: str, source: str, destination: str) -> bool:
        """The :attr:`transferable` predicate; a predicate that raises means "not transferable"."""
        if self.transferable is None:
            return True
        try:
            return bool(self.transferable(bundle, source, destination))
        except Exception:  # noqa: BLE001 - a failing broker filter makes Pulsar answer "not transferable"
            return False

    # --- JSON
    def to_json(self) -> dict[str, Any]:
        """The JSON form read by :meth:`from_json`. ``ValueError`` if :attr:`transferable` is an arbitrary
        callable (only :class:`NonTransferableRules` can be written)."""
        out: dict[str, Any] = {
            "now": self.now,
            "brokerLoadDataStore": {b: d.to_json() for b, d in self.broker_load_data_store.items()},
            "topBundlesLoadDataStore": {
                b: TopBundlesLoadData(_top_bundle_list(v)).to_json()
                for b, v in self.top_bundle_load_data_store.items()
            },
            "availableBrokers": None if self.available_brokers is None else list(self.available_brokers),
            "recentlyUnloadedBundles": dict(self.recently_unloaded_bundles),
            "recentlyUnloadedBrokers": dict(self.recently_unloaded_brokers),
            "loadDataOrder": self.load_data_order,
        }
        if self.bundle_owners is not None:
            out["bundleOwners"] = dict(self.bundle_owners)
        if isinstance(self.transferable, NonTransferableRules):
            out["nonTransferable"] = self.transferable.to_json()
        elif self.transferable is not None:
            raise ValueError("only a NonTransferableRules predicate has a JSON form")
        if self.config is not None:
            conf = as_config(self.config)
            out["config"] = {
                k: (sorted(v) if isinstance(v, frozenset) else v) for k, v in conf.to_dict().items() if conf.is_set(k)
            }
        return out

    @classmethod
    def from_json(cls, obj: Any, where: str = "") -> "TransferContext":
        """Validate and build from the JSON form (see the module docstring for the field names).

        Raises :class:`clusteremu.base.errors.InputError` whose ``where`` is ``where`` followed by the JSON path
        of the bad value (e.g. ``ctx.json: brokerLoadDataStore["b1:8080"].updatedAt``).
        """
        return read_document(cls._from_json, obj, where)

    @classmethod
    def _from_json(cls, obj: Any) -> "TransferContext":
        data = read_object(obj, "", "a TransferContext object")
        for key in data:
            if key not in _FIELDS:
                raise InputError(key, f"unknown TransferContext field (expected one of {', '.join(_FIELDS)})")
        if "now" not in data:
            raise InputError("now", "missing: the cycle's time in epoch milliseconds")
        now = read_integer(data, "now", "", 0)
        if "brokerLoadDataStore" not in data:
            raise InputError("brokerLoadDataStore", "missing: broker -> BrokerLoadData")
        raw_store = read_object(data["brokerLoadDataStore"], "brokerLoadDataStore")
        store = {
            broker: BrokerLoadData.from_json(value, key_path("brokerLoadDataStore", broker))
            for broker, value in raw_store.items()
        }
        raw_top = read_object(data.get("topBundlesLoadDataStore") or {}, "topBundlesLoadDataStore")
        top = {
            broker: TopBundlesLoadData.from_json(value, key_path("topBundlesLoadDataStore", broker))
            for broker, value in raw_top.items()
        }
        if "availableBrokers" in data:
            raw_available = data["availableBrokers"]
            available = None if raw_available is None else read_string_list(raw_available, "availableBrokers")
        else:
            available = list(store)
        owners = None
        if data.get("bundleOwners") is not None:
            raw_owners = read_object(data["bundleOwners"], "bundleOwners")
            owners = {b: read_string(o, key_path("bundleOwners", b)) for b, o in raw_owners.items()}
        bundles = cls._timestamps(data, "recentlyUnloadedBundles")
        brokers = cls._timestamps(data, "recentlyUnloadedBrokers")
        rules = None
        if data.get("nonTransferable") is not None:
            raw_rules = data["nonTransferable"]
            if not isinstance(raw_rules, list):
                raise InputError("nonTransferable", f"expected a list of rules, got {show(raw_rules)}")
            parsed = []
            for i, raw in enumerate(raw_rules):
                path = f"nonTransferable[{i}]"
                rule = read_object(raw, path, 'a {"bundle", "sourceBroker"?, "destinationBroker"?} object')
                for key in rule:
                    if key not in ("bundle", "sourceBroker", "destinationBroker"):
                        raise InputError(f"{path}.{key}", "unknown rule field")
                parsed.append(
                    NonTransferableRule(
                        read_string(rule.get("bundle"), f"{path}.bundle"),
                        cls._optional_broker(rule, "sourceBroker", path),
                        cls._optional_broker(rule, "destinationBroker", path),
                    )
                )
            rules = NonTransferableRules(parsed)
        config = None
        if data.get("config") is not None:
            config = PulsarConfig(read_object(data["config"], "config"), where="config")
        order = data.get("loadDataOrder", "concurrent")
        if order not in _ORDERS:
            raise InputError("loadDataOrder", f"expected one of {', '.join(_ORDERS)}, got {show(order)}")
        return cls(
            broker_load_data_store=store,
            top_bundle_load_data_store=top,
            available_brokers=available,
            now=now,
            bundle_owners=owners,
            recently_unloaded_bundles=bundles,
            recently_unloaded_brokers=brokers,
            transferable=rules,
            config=config,
            load_data_order=order,
        )

    @staticmethod
    def _optional_broker(rule: Mapping[str, Any], name: str, path: str) -> str | None:
        value = rule.get(name)
        return None if value is None else read_string(value, f"{path}.{name}")

    @staticmethod
    def _timestamps(data: Mapping[str, Any], name: str) -> dict[str, int]:
        raw = read_object(data.get(name) or {}, name)
        return {key: as_integer(value, key_path(name, key)) for key, value in raw.items()}

