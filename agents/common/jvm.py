"""The scenario side of :mod:`clusteremu.emulator.jvm`: a JVM model's ``gc`` table and its JVM fault fields.

Components:

* :func:`gc_table`: the ``gc`` table (young and full collections), with a model's own defaults;
* :data:`JVM_FAULT_FIELDS`: the ``[[faults]]`` fields of the JVM fault kinds (``gc_storm``), for
  :func:`clusteremu.emulator.faults.fault_schema`'s ``extra``;
* :func:`complete_jvm_fault`: fill a JVM fault entry's per-kind defaults and list what it lacks;
* :func:`model_fault_schema`: a model's whole ``[[faults]]`` table (kernel, JVM and model kinds, defaults, checks).
"""
from __future__ import annotations

from dataclasses import fields
from typing import Any, Callable, Mapping

from clusteremu.emulator.jvm import (GC_FIELDS, GC_STORM_FIELDS, JVM_FAULT_DEFAULTS, JVM_FAULT_REQUIRED, JVM_FAULTS,
                                     GcSettings, SettingSpec)
from clusteremu.emulator import faults as kernel_faults
from clusteremu.scenarios.schema import ArrayOf, Field, Table

__all__ = ["JVM_FAULT_FIELDS", "complete_jvm_fault", "gc_table"]


def _field(spec: SettingSpec, default: Any) -> Field:
    return Field(spec.type, default=default, doc=spec.doc, gt=spec.gt, ge=spec.ge)


def gc_table(**defaults: float) -> Table:
    """The ``gc`` table of a JVM model (:class:`~clusteremu.emulator.jvm.GcSettings`); ``defaults`` override
    the settings' own defaults by field name."""
    base = {f.name: f.default for f in fields(GcSettings)}
    unknown = set(defaults) - set(base)
    if unknown:
        raise TypeError(f"gc_table: unknown fields {sorted(unknown)}")
    base.update(defaults)
    return Table({name: _field(spec, base[name]) for name, spec in GC_FIELDS.items()})


#: fields of the JVM fault kinds; their schema default is None (they are per-kind, see :func:`complete_jvm_fault`)
JVM_FAULT_FIELDS: dict[str, Field] = {name: _field(spec, None) for name, spec in GC_STORM_FIELDS.items()}


def complete_jvm_fault(entry: dict[str, Any]) -> list[tuple[str, str]]:
    """Fill the per-kind defaults of a JVM fault ``entry`` (validation output) and return the fields it lacks;
    an entry of another kind is left as it is."""
    kind = entry["kind"]
    if kind not in JVM_FAULTS:
        return []
    for key, value in JVM_FAULT_DEFAULTS.get(kind, {}).items():
        if entry[key] is None:
            entry[key] = value
    return [(k, f"a {kind} fault needs {k}") for k in JVM_FAULT_REQUIRED.get(kind, ()) if entry[k] is None]


def model_fault_schema(
    kinds: tuple[str, ...],
    fields: dict[str, Field],
    *,
    defaults: Mapping[str, Mapping[str, Any]] | None = None,
    required: Mapping[str, tuple[str, ...]] | None = None,
    check: Callable[[dict[str, Any]], list[tuple[str, str]]] | None = None,
) -> ArrayOf:
    """A model's ``[[faults]]`` table: the kernel's fields plus ``fields``, for ``kinds`` (the kernel's, the JVM's
    and the model's). Each entry gets its kind's ``defaults`` (and the JVM kinds' own) filled in, is refused when it
    lacks a field its kind ``required`` s, then meets the model's ``check`` and the kernel's."""
    arr = kernel_faults.fault_schema(kinds, fields)
    kernel_check = arr.item.check

    def complete_and_check(entry: dict[str, Any]) -> list[tuple[str, str]]:
        kind = entry["kind"]
        problems = complete_jvm_fault(entry)
        for key, value in (defaults or {}).get(kind, {}).items():
            if entry[key] is None or entry[key] == []:
                entry[key] = list(value) if isinstance(value, list) else value
        problems += [(k, f"a {kind} fault needs {k}") for k in (required or {}).get(kind, ()) if entry[k] is None]
        if check is not None:
            problems += check(entry)
        return problems + kernel_check(entry)

    arr.item.check = complete_and_check
    return arr
