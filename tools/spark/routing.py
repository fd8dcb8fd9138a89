"""Routing decoded events to the computations that need them, as Arrow payloads, with a map-side tally.

An analysis needs every event counted (the *tally*) but each of its figure families (*parts*) reads only a few
kinds and columns. Turning a million wide rows into JVM rows, caching them and shuffling them costs far more
than decoding them, so the Python workers that decode the segments also:

* count every event per (run, kind, agent, key) where the key is a kind-specific string computed by a
  :class:`TallySpec` function (``bundle_unloaded`` by ``reason``, say), with the first and last time, the sum and
  maximum of ``duration_s`` and extra mergeable aggregates — a partial tally per partition;
* project the rows of each :class:`Route` (its kinds, its columns) and serialise them as Arrow IPC streams.

The output has one row per (run, route, chunk): ``_run``, ``_part`` (the route's name, :data:`TALLY` for the
partial tallies, :data:`PROBLEMS` for decoding problems) and ``payload`` (Arrow IPC bytes). Spark shuffles those
few rows by (run, part) and hands each group to the computation of that part (``applyInPandas``), which reads
the payloads back with :func:`payload_table`. The same router takes any Arrow batches with the decoder's
columns, so events stored as Parquet go through the same analysis (:func:`batch_router`).
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .segments import EventSchema, _local_path, _unreadable, decode_segment, segment_files

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: Schema of the routed rows.
ROUTED_DDL = "_run int, _part string, payload binary"
#: Part name of the partial tallies.
TALLY = "_tally"
#: Part name of the decoding problems.
PROBLEMS = "_problems"
#: Rows buffered per (run, route) before they are serialised as one payload.
FLUSH_ROWS = 262_144

#: A tally key function: events of one kind (pandas, the key's columns) → one string (or None) per row.
KeyFunction = Callable[[pd.DataFrame], Sequence[Any]]
#: Mergeable aggregations of the extras.
AGGREGATIONS = ("sum", "min", "max")

_TALLY_SCHEMA = [
    ("kind", pa.string()),
    ("agent", pa.string()),
    ("key", pa.string()),
    ("count", pa.int64()),
    ("first_t", pa.float64()),
    ("last_t", pa.float64()),
    ("duration_total", pa.float64()),
    ("duration_max", pa.float64()),
]


@dataclass(frozen=True)
class Route:
    """A part's rows: the kinds it reads and the columns it keeps (the decoder's column names)."""

    name: str
    kinds: tuple[str, ...]
    columns: tuple[str, ...]


@dataclass(frozen=True)
class Key:
    """How a kind's tally is split: ``function`` maps its events (a pandas frame of ``columns``, plus ``t``,
    ``agent`` and ``kind``) to a string (or None) per event. A module-level function: it is shipped by reference."""

    function: KeyFunction
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class TallySpec:
    """How events are counted: ``keys`` splits some kinds (kind → :class:`Key`); ``extras`` are more
    aggregates, ``name → (column, "sum" | "min" | "max")``."""

    keys: Mapping[str, Key] = field(default_factory=dict)
    extras: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c for k in self.keys.values() for c in k.columns))

    def __post_init__(self) -> None:
        for name, (_col, agg) in self.extras.items():
            if agg not in AGGREGATIONS:
                raise ValueError(f"tally extra {name}: aggregation {agg!r} is not one of {AGGREGATIONS}")


def serialize(table: pa.Table) -> bytes:
    """A table as Arrow IPC stream bytes."""
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def payload_table(payloads: Iterable[bytes]) -> pa.Table | None:
    """The payloads of one (run, part) group as one table (None when there are none), strings plain again."""
    tables = [_plain_strings(pa.ipc.open_stream(bytes(p)).read_all()) for p in payloads]
    if not tables:
        return None
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def _dictionary_strings(table: pa.Table) -> pa.Table:
    """String columns dictionary-encoded: names of agents, kinds, topics and reasons repeat, and the payloads
    that Spark shuffles shrink to about a fifth."""
    for i, f in enumerate(table.schema):
        if pa.types.is_string(f.type):
            table = table.set_column(i, f.name, pc.dictionary_encode(table.column(i)))
    return table


def _plain_strings(table: pa.Table) -> pa.Table:
    for i, f in enumerate(table.schema):
        if pa.types.is_dictionary(f.type):
            table = table.set_column(i, f.name, pc.cast(table.column(i), f.type.value_type))
    return table


class Router:
    """Accumulates projected rows per (run, route) and partial tallies per run; emits payload rows."""

    def __init__(self, routes: Sequence[Route], tally: TallySpec, flush_rows: int = FLUSH_ROWS) -> None:
        self.routes = list(routes)
        self.tally = tally
        self.flush_rows = flush_rows
        self._rows: dict[tuple[int, str], list[pa.RecordBatch]] = {}
        self._held: dict[tuple[int, str], int] = {}
        self._tallies: dict[int, list[pa.Table]] = {}
        # Rows waiting to be tallied, per run and kind: tallying per decoded batch (a few hundred rows of one
        # kind) spent more on Arrow and pandas calls than on counting.
        self._untallied: dict[int, dict[str, list[pa.RecordBatch]]] = {}
        self._untallied_rows = 0
        self._tally_cols = tuple(dict.fromkeys(("t", "agent", "kind", "_n", "duration_s", *tally.columns, *(c for c, _a in tally.extras.values()))))

    def add(self, batch: pa.RecordBatch) -> Iterator[tuple[int, str, bytes]]:
        """Take a batch of decoded rows (any kinds, any runs); yield the payloads that filled up."""
        if batch.num_rows == 0:
            return
        runs = batch.column("_run")
        if pc.min(runs).as_py() != pc.max(runs).as_py():
            for run in pc.unique(runs).to_pylist():
                yield from self.add(batch.filter(pc.equal(runs, run)))
            return
        run = int(runs[0].as_py())
        problems = batch.column("_problem_reason")
        if problems.null_count < batch.num_rows:
            bad = pc.is_valid(problems)
            yield run, PROBLEMS, serialize(pa.Table.from_batches([batch.filter(bad).select(["_problem_file", "_problem_offset", "_problem_reason"])]))
            batch = batch.filter(pc.invert(bad))
            if batch.num_rows == 0:
                return
        kinds = batch.column("kind")
        single = pc.min(kinds).as_py() == pc.max(kinds).as_py()
        self._hold_for_tally(run, batch, kinds[0].as_py() if single else None)
        for route in self.routes:
            if single:
                if kinds[0].as_py() not in route.kinds:
                    continue
                part = batch
            else:
                part = batch.filter(pc.is_in(kinds, value_set=pa.array(list(route.kinds), pa.string())))
                if part.num_rows == 0:
                    continue
            # Tally rows (seq null) count events a part does not read; a part gets events only.
            seq = part.column("seq")
            if seq.null_count:
                part = part.filter(pc.is_valid(seq))
            key = (run, route.name)
            self._rows.setdefault(key, []).append(part.select(list(route.columns)))
            self._held[key] = self._held.get(key, 0) + part.num_rows
            if self._held[key] >= self.flush_rows:
                yield self._flush(key)

    def finish(self) -> Iterator[tuple[int, str, bytes]]:
        """Emit everything still held: the remaining rows and each run's partial tally."""
        for key in list(self._rows):
            if self._rows[key]:
                yield self._flush(key)
        self._tally_held()
        for run, parts in self._tallies.items():
            yield run, TALLY, serialize(merge_tallies(parts, self.tally))
        self._tallies.clear()

    def _flush(self, key: tuple[int, str]) -> tuple[int, str, bytes]:
        batches = self._rows[key]
        self._rows[key] = []
        self._held[key] = 0
        return key[0], key[1], serialize(_dictionary_strings(pa.Table.from_batches(batches)))

    def _hold_for_tally(self, run: int, batch: pa.RecordBatch, kind: str | None) -> None:
        """Keep the tally columns of ``batch`` (``kind`` when it holds one kind only) until enough rows wait."""
        batch = batch.select(list(self._tally_cols))
        by_kind = self._untallied.setdefault(run, {})
        if kind is not None:
            by_kind.setdefault(kind, []).append(batch)
        else:
            kinds = batch.column("kind")
            for k in pc.unique(kinds).to_pylist():
                by_kind.setdefault(k, []).append(batch.filter(pc.equal(kinds, k)))
        self._untallied_rows += batch.num_rows
        if self._untallied_rows >= self.flush_rows:
            self._tally_held()

    def _tally_held(self) -> None:
        """Fold the rows waiting to be tallied into each run's partial tallies."""
        keyed: dict[int, list[pa.Table]] = {}
        for kind in dict.fromkeys(k for by_kind in self._untallied.values() for k in by_kind):
            runs = [(run, pa.Table.from_batches(by_kind[kind])) for run, by_kind in self._untallied.items() if kind in by_kind]
            spec = self.tally.keys.get(kind)
            if spec is None:
                keys = [pa.nulls(t.num_rows, pa.string()) for _run, t in runs]
            else:
                # One call of the key function for the kind's rows of every run: per run, the pandas round trips
                # cost more than the keys (a sweep's partition holds dozens of runs).
                whole = _keys(pa.concat_tables([t for _run, t in runs]), spec)
                starts = np.cumsum([0] + [t.num_rows for _run, t in runs])
                keys = [whole.slice(a, b - a) for a, b in zip(starts[:-1], starts[1:])]
            for (run, table), key in zip(runs, keys):
                keyed.setdefault(run, []).append(table.append_column("key", key))
        for run, tables in keyed.items():
            self._tallies.setdefault(run, []).append(_aggregate(pa.concat_tables(tables), self.tally, first=True))
        self._untallied.clear()
        self._untallied_rows = 0


def _keys(table: pa.Table, key: Key) -> pa.Array:
    """The key of each row of ``table`` (one kind) as a string array."""
    rows = table.select(list(dict.fromkeys(("t", "agent", "kind", *key.columns)))).to_pandas()
    values = pd.Series(key.function(rows), dtype=object)
    try:
        return pa.array(values, pa.string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in values], pa.string())


def _aggregate(table: pa.Table, spec: TallySpec, *, first: bool) -> pa.Table:
    """Group ``table`` by (kind, agent, key): from decoded rows when ``first``, else from partial tallies."""
    if first:
        aggs = [("_n", "sum"), ("t", "min"), ("t", "max"), ("duration_s", "sum"), ("duration_s", "max")]
        aggs += [(col, agg) for col, agg in spec.extras.values()]
    else:
        aggs = [("count", "sum"), ("first_t", "min"), ("last_t", "max"), ("duration_total", "sum"), ("duration_max", "max")]
        aggs += [(name, agg) for name, (_col, agg) in spec.extras.items()]
    # A group without values (no duration_s, say) sums to null, not 0: Arrow's default min_count is 1.
    grouped = table.group_by(["kind", "agent", "key"], use_threads=False).aggregate(aggs)
    names = ["count", "first_t", "last_t", "duration_total", "duration_max", *spec.extras]
    out = {"kind": grouped.column("kind"), "agent": grouped.column("agent"), "key": grouped.column("key")}
    src = [f"{c}_{a}" for c, a in aggs]
    for name, col in zip(names, src):
        out[name] = grouped.column(col)
    result = pa.table(out)
    return result.set_column(result.schema.get_field_index("count"), "count", pc.cast(result.column("count"), pa.int64()))


def merge_tallies(parts: Sequence[pa.Table], spec: TallySpec) -> pa.Table:
    """Partial tallies merged into one (counts and sums added, first/last times and min/max combined)."""
    tables = [p for p in parts if p.num_rows]
    if not tables:
        return pa.table({name: pa.array([], ty) for name, ty in _TALLY_SCHEMA} | {n: pa.array([], pa.float64()) for n in spec.extras})
    table = pa.concat_tables(tables, promote_options="permissive")
    return _aggregate(table, spec, first=False)


def routed_decoder(
    schema: EventSchema, routes: Sequence[Route], tally: TallySpec, runs: Mapping[str, int]
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The ``mapInArrow`` function: rows with a ``path`` column (plain paths or ``binaryFile`` URIs) → routed rows
    (see the module docs)."""

    def decode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        router = Router(routes, tally)
        for batch in batches:
            for uri in batch.column("path").to_pylist():
                path = Path(_local_path(uri))
                run = runs.get(str(path.parent.parent), -1)
                name = f"{path.parent.name}/{path.name}"
                try:
                    data = path.read_bytes()
                except OSError as err:
                    yield _rows(router.add(_unreadable(schema, name, run, err)))
                    continue
                for decoded in decode_segment(data, file=name, run=run, schema=schema):
                    out = list(router.add(decoded))
                    if out:
                        yield _rows(out)
        yield _rows(router.finish())

    return decode


def grouped_decoder(
    schema: EventSchema, routes: Sequence[Route], tally: TallySpec, runs: Mapping[str, int], groups: Sequence[Sequence[str]]
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The ``mapInArrow`` function over rows of group numbers (``group``): decodes the files of each group
    given (see :func:`file_groups`) exactly as :func:`routed_decoder` decodes ``binaryFile`` rows."""
    decode = routed_decoder(schema, routes, tally, runs)

    def decode_groups(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        paths = (pa.array([p for g in batch.column("group").to_pylist() for p in groups[g]], pa.string()) for batch in batches)
        yield from decode(pa.RecordBatch.from_arrays([p], names=["path"]) for p in paths)

    return decode_groups


def batch_router(routes: Sequence[Route], tally: TallySpec) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The ``mapInArrow`` function that routes already-decoded rows (e.g. events stored as Parquet)."""

    def route(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        router = Router(routes, tally)
        for batch in batches:
            out = list(router.add(batch))
            if out:
                yield _rows(out)
        yield _rows(router.finish())

    return route


def _rows(items: Iterable[tuple[int, str, bytes]]) -> pa.RecordBatch:
    items = list(items)
    return pa.RecordBatch.from_arrays(
        [
            pa.array([i[0] for i in items], pa.int32()),
            pa.array([i[1] for i in items], pa.string()),
            pa.array([i[2] for i in items], pa.binary()),
        ],
        names=["_run", "_part", "payload"],
    )


def read_routed(
    spark: "SparkSession",
    run_dirs: Sequence[str | Path],
    schema: EventSchema,
    routes: Sequence[Route],
    tally: TallySpec,
    events: "DataFrame | None" = None,
) -> "DataFrame":
    """The routed rows of ``run_dirs`` (``_run`` = index in ``run_dirs``), decoded in the executors; or, with
    ``events`` (a DataFrame with the decoder's columns), of those events."""
    if events is not None:
        cols = [name for name, _ty in schema.columns]
        return events.select(*cols).mapInArrow(batch_router(routes, tally), ROUTED_DDL)
    dirs = [Path(d).absolute() for d in run_dirs]
    index = {str(d): i for i, d in enumerate(dirs)}
    groups = file_groups([segment_files(d) for d in dirs], TASKS_PER_CORE * spark.sparkContext.defaultParallelism)
    if not groups:
        return spark.createDataFrame([], ROUTED_DDL)
    # One row per group, each in its own partition: the task of group g decodes the files of groups[g]. Spark's
    # file sources would list the files first — a distributed job of its own once there are more than 32 —
    # and pack them by size alone, splitting runs across tasks.
    ids = spark.range(len(groups), numPartitions=len(groups)).withColumnRenamed("id", "group")
    return ids.mapInArrow(grouped_decoder(schema, routes, tally, index, groups), ROUTED_DDL)


#: Decoding tasks per core of the session: a few more tasks than cores even out runs of unequal size.
TASKS_PER_CORE = 2


def file_groups(run_files: Sequence[Sequence[Path]], tasks: int) -> list[list[str]]:
    """The segment files of each run (``run_files[i]`` are run i's) split into at most ``tasks`` groups of about
    equal bytes, largest first onto the lightest group. A run stays whole in one group when there are enough
    runs to keep every task busy (its tally and rows then leave the task once); with fewer runs than tasks, the
    files are spread one by one. Deterministic: the same files give the same groups."""
    sized = [[(str(f), _size(f)) for f in files] for files in run_files]
    sized = [files for files in sized if files]
    if not sized:
        return []
    if len(sized) >= tasks:
        units = [(sum(n for _f, n in files), [f for f, _n in files]) for files in sized]
    else:
        units = [(n, [f]) for files in sized for f, n in files]
    count = max(1, min(tasks, len(units)))
    load = [0] * count
    groups: list[list[str]] = [[] for _ in range(count)]
    # Largest first, ties in input order (sort is stable); each unit onto the group with the fewest bytes so far.
    for size, files in sorted(units, key=lambda u: -u[0]):
        g = min(range(count), key=lambda i: (load[i], i))
        load[g] += size
        groups[g] += files
    return [g for g in groups if g]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # unreadable: the decoder reports it; it weighs nothing here
        return 0
