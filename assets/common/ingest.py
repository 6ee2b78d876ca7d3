"""A day's raw lines into the warehouse, gated, a block at a time.

raw file → raw table, and → gates → normalised table + quarantine, with the Great Expectations
suite on each block. A block of lines is read, stored and gated before the next is read, so the
step holds one block's rows, never a day's (`rules.common.units`). All of a step's tables are
written in one transaction: a run that fails half-way leaves every table as it was.

What one gating of the whole file would decide across blocks is decided across them here too:
an id repeated in a later block is quarantined (`gates.ids_seen_before`), a later dataset's gates
read what `DayParts.learn` kept of an earlier one, and the suite's uniqueness expectations are
asked of the stored table once every block is in (a column-map expectation asked of each block
flags the rows it would flag in the whole table; uniqueness alone looks across blocks).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import pandas as pd

from assets.common import suite_worker
from assets.common.quality import Outcome, quarantine_failures
from assets.resources.raw_files import RawFilesResource
from assets.resources.warehouse import BUCKET_COLUMN, PartitionWrites, WarehouseResource
from rules.common.gates import ids_seen_before
from rules.common.reconcile import QUARANTINE_COLUMNS, empty_quarantine
from schemas import column_kinds

RAW_KINDS = {"line": "integer", "file": "text", "text": "text", "dataset": "text", "not_utf8": "text"}
"""Columns every raw and quarantine table has."""
UNIQUE = "expect_column_values_to_be_unique"
READ_ROWS = 100_000
"""Raw lines read back from a raw table at once, when the day's raw tables were stored by an earlier run."""


@dataclass
class Ingested:
    """What the step stored: raw rows per dataset written now, and each dataset's suite outcomes."""

    raw_rows: dict[str, int] = field(default_factory=dict)
    raw_files: dict[str, list[str]] = field(default_factory=dict)
    suites: dict[str, list[Outcome]] = field(default_factory=dict)
    not_unique: dict[tuple[str, str], set] = field(default_factory=dict)
    """(dataset, column) → values a block's uniqueness expectation flagged."""


def ingest(c, day: str, raw_selected: set[str], normalise: bool, raw_files: RawFilesResource,
           warehouse: WarehouseResource) -> Ingested:
    """Store the raw tables of `raw_selected` datasets and, with `normalise`, gate every dataset
    (reading from the file what is stored now, from the raw table the rest) into its normalised
    table and the quarantine, in one transaction."""
    done = Ingested()
    config = c.load_config()
    parts = c.day_parts
    with warehouse.writes() as writes:
        raw_sinks = {d: writes.table(c.raw_table(d), day, index_columns=("line", ("partition_key", "line")), kinds=RAW_KINDS)
                     for d in raw_selected}

        def blocks(d: str) -> Iterator[pd.DataFrame]:
            """The day's raw lines of `d`, a block at a time, stored as they are read when selected."""
            if d in raw_sinks:
                files = done.raw_files.setdefault(d, [])
                done.raw_rows[d] = 0
                for raw in raw_files.read_partition_chunks(c.domain, d, day, c.time_fields.get(d), c.required(d)):
                    raw_sinks[d].append(raw)
                    done.raw_rows[d] += len(raw)
                    files += [f for f in raw["file"].unique() if f not in files]
                    yield raw
                raw_sinks[d].append(pd.DataFrame({k: pd.Series(dtype=object) for k in RAW_KINDS}))
            else:
                yield from warehouse.iter_rows(c.raw_table(d), day, rows=READ_ROWS)

        if not normalise:
            for d in c.datasets:
                if d in raw_sinks:
                    for _ in blocks(d):
                        pass
            return done
        suite_worker.prepare()  # GX warms in a helper while the raw lines are read and stored
        _gate(c, day, config, parts, blocks, writes, warehouse, done)
    return done


def _gate(c, day: str, config, parts, blocks, writes: PartitionWrites, warehouse: WarehouseResource, done: Ingested) -> None:
    bucketed_q = parts.quarantine_bucket is not None
    q_sink = writes.table(c.table("quarantine"), day, index_columns=("dataset", "id", *((("partition_key", BUCKET_COLUMN),) if bucketed_q else ())),
                          kinds={**RAW_KINDS, **({BUCKET_COLUMN: "integer"} if bucketed_q else {})})
    context: dict = {}

    def store_quarantine(q: pd.DataFrame) -> None:
        q = q[QUARANTINE_COLUMNS] if len(q) else empty_quarantine()
        if bucketed_q:
            b = parts.quarantine_bucket(q, context, config) if len(q) else np.zeros(0, dtype=np.int64)
            q = q.assign(**{BUCKET_COLUMN: pd.array([None if x < 0 else int(x) for x in b], dtype="Int64")})
        q_sink.append(q)

    def sink(d: str):
        bucketed = d in parts.chunked and d not in parts.looked_up
        # A part reads a day's rows by bucket, or looks rows up by key: an index over the partition and
        # that column together, or SQLite reads every row of the day for each part.
        keys = [parts.looked_up[d][1]] if d in parts.looked_up else []
        index = (c.id_fields[d], *[("partition_key", BUCKET_COLUMN)] * bucketed, *(("partition_key", k) for k in keys))
        return writes.table(c.table(d), day, json_columns=c.json_columns, index_columns=index,
                            time_columns=(c.time_fields[d],) if d in c.time_fields else (),
                            kinds={**RAW_KINDS, **column_kinds(c.domain, d), **({BUCKET_COLUMN: "integer"} if bucketed else {})})

    whole_raw = {d: _joined(blocks(d)) for d in parts.whole}
    norm = parts.gate_whole(whole_raw, config)
    del whole_raw
    store_quarantine(norm.quarantine)
    for d in parts.whole:
        kept = _suited(c, d, norm.tables[d], 0, done, store_quarantine)
        sink(d).append(kept[c.stored_columns(d)])
    context.update(parts.context(norm, config))
    del norm

    seen: dict[str, dict] = {}
    for d in parts.chunked:
        out, offset = sink(d), 0
        with ids_seen_before(seen):
            for raw in blocks(d):
                gated = parts.gate_chunk(d, raw, context, config)
                rows = gated.tables[d]
                parts.learn(d, rows, context, config)
                store_quarantine(gated.quarantine)
                kept = _suited(c, d, rows, offset, done, store_quarantine)
                offset += len(rows)
                stored = kept[c.stored_columns(d)]
                bucket = parts.bucket(d, kept, context, config)
                if bucket is not None:
                    stored = stored.assign(**{BUCKET_COLUMN: bucket})
                out.append(stored)
        seen.pop(d, None)  # a dataset's ids are not another's
        if not out.rows:
            out.append(pd.DataFrame(columns=[*c.stored_columns(d), *([BUCKET_COLUMN] if d not in parts.looked_up else [])]))
        else:
            _unique_across_blocks(c, d, day, writes, warehouse, done, store_quarantine)
    for d in parts.chunked + parts.whole:
        done.suites.setdefault(d, [])


def _joined(frames: Iterator[pd.DataFrame]) -> pd.DataFrame:
    frames = list(frames)
    if not frames:
        return pd.DataFrame({k: pd.Series(dtype="int64" if k == "line" else object) for k in RAW_KINDS})[
            ["dataset", "file", "line", "text", "not_utf8"]]
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def _suited(c, d: str, rows: pd.DataFrame, offset: int, done: Ingested, store_quarantine) -> pd.DataFrame:
    """The rows the dataset's suite passes (the others to quarantine); the suite's outcomes added to the
    day's, rows named by their place in the day's table (`offset` rows before this block). The values
    a uniqueness expectation flagged are kept (`done.not_unique`): a later block's copy fails too."""
    if not len(rows):
        return rows
    expectations = c.expectations[d]
    outcomes = suite_worker.run_suite(f"{c.domain}.{d}", rows, expectations)
    for o in outcomes:
        if o.expectation == UNIQUE and o.unexpected_index:
            done.not_unique.setdefault((d, o.column), set()).update(rows.loc[o.unexpected_index, o.column].tolist())
    kept, q = quarantine_failures(d, rows, outcomes, c.id_fields[d])
    store_quarantine(q)
    day = done.suites.setdefault(d, [])
    if not day:
        day += [Outcome(o.expectation, o.column, True) for o in outcomes]
    for total, o in zip(day, outcomes):
        total.success = total.success and o.success
        total.unexpected_index += [offset + int(i) for i in o.unexpected_index]
    return kept


def _unique_across_blocks(c, d: str, day: str, writes: PartitionWrites, warehouse: WarehouseResource, done: Ingested,
                          store_quarantine) -> None:
    """Uniqueness over the whole stored table: a value kept in two blocks fails it (both rows leave
    for quarantine, as the suite of the whole table would send them)."""
    table = c.table(d)
    for expectation, kw in c.expectations[d]:
        if expectation != UNIQUE:
            continue
        col = kw["column"]
        repeated = [r[0] for r in warehouse.query(
            f'SELECT "{col}" FROM "{table}" WHERE partition_key = :p AND "{col}" IS NOT NULL GROUP BY "{col}" HAVING COUNT(*) > 1',
            {"p": day}, conn=writes.conn)]
        repeated += sorted(done.not_unique.get((d, col), set()) - set(repeated), key=str)
        rows = warehouse.read_in(table, day, col, repeated, c.json_columns, conn=writes.conn) if repeated else ()
        if not len(rows):
            continue
        q = pd.DataFrame({
            "dataset": d, "file": rows["file"], "line": rows["line"], "id": rows[c.id_fields[d]],
            "reason_code": "expectation", "reason": f"failed {expectation}({col})",
            "raw": rows.drop(columns=["file", "line"]).apply(lambda r: r.to_json(force_ascii=False), axis=1),
        }, columns=QUARANTINE_COLUMNS)
        warehouse.delete_in(table, day, col, repeated, conn=writes.conn)
        store_quarantine(q)
        for o in done.suites.get(d, []):
            if o.expectation == UNIQUE and o.column == col:
                o.success = False
                o.unexpected_index += rows["line"].tolist()
