"""The whole-table nightly chain, as the chain ran before days were taken in parts: every table of a
day read, gated, checked by its suite, judged and checked in one piece. Written with the same pure
functions the chain calls, into a warehouse of its own, for tests that hold the chain in parts to
it (`test_day_in_parts`)."""

from __future__ import annotations

from datetime import date, timedelta

import pandas as pd

from assets.common import quality
from assets.common.ingest import RAW_KINDS
from assets.resources.raw_files import RawFilesResource
from assets.resources.warehouse import WarehouseResource
from evals.check_titles import in_korean
from rules.common.normalised import Normalised
from schemas import column_kinds


def store_day(c, raw_files: RawFilesResource, warehouse: WarehouseResource, day: str) -> None:
    """Raw, normalised and quarantine tables of one day, each gated and stored whole."""
    config = c.load_config()
    raw = {d: raw_files.read_partition(c.domain, d, day, c.time_fields.get(d), c.required(d)) for d in c.datasets}
    for d, frame in raw.items():
        warehouse.replace_partition(c.raw_table(d), day, frame, index_columns=("line",), kinds=RAW_KINDS)
    norm = c.normalise({d: warehouse.read_partition(c.raw_table(d), day) for d in c.datasets}, config)
    quarantine = [norm.quarantine]
    for d in c.datasets:
        frame = norm.tables[d]
        outcomes = quality.run_suite(f"{c.domain}.{d}", frame, c.expectations[d]) if len(frame) else []
        kept, q = quality.quarantine_failures(d, frame, outcomes, c.id_fields[d])
        norm.tables[d] = kept
        quarantine.append(q)
    q_frame = pd.concat([q for q in quarantine if not q.empty] or [norm.quarantine], ignore_index=True)
    for d in c.datasets:
        warehouse.replace_partition(c.table(d), day, norm.tables[d][c.stored_columns(d)], c.json_columns,
                                    time_columns=(c.time_fields[d],) if d in c.time_fields else (),
                                    index_columns=(c.id_fields[d],), kinds={**RAW_KINDS, **column_kinds(c.domain, d)})
    warehouse.replace_partition(c.table("quarantine"), day, q_frame, index_columns=("dataset", "id"), kinds=RAW_KINDS)


def judge_day(c, warehouse: WarehouseResource, day: str, stored_days: set[str] | None = None) -> list:
    """The day's verdicts (and a window domain's kept tables) and checks, from its stored tables."""
    config = c.load_config()
    w = c.window
    if w:
        per_day = {}
        for k in range(-w.before, w.after + 1):
            d = (date.fromisoformat(day) + timedelta(days=k)).isoformat()
            if d == day or d in (stored_days or ()):
                per_day[d] = {**c.restore({x: warehouse.read_partition(c.table(x), d, c.json_columns) for x in c.datasets}, config),
                              "quarantine": warehouse.read_partition(c.table("quarantine"), d)}
        tables = w.combine(per_day, day, config)
    else:
        tables = c.restore({d: warehouse.read_partition(c.table(d), day, c.json_columns) for d in c.datasets}, config)
    if c.history:
        tables = c.history(tables, warehouse, config, day)
    verdicts = c.judge(tables, config)
    warehouse.replace_partition(c.table("verdicts"), day, verdicts[c.output_columns], c.verdict_json_columns,
                                index_columns=(c.output_columns[0],), kinds=column_kinds(c.domain, c.output_schema))
    if w:
        for name, frame in w.keep(tables, config).items():
            warehouse.replace_partition(c.table(name), day, frame, kinds=w.kept[name])
    return in_korean(c.domain, c.run_checks(Normalised(tables=tables, quarantine=pd.DataFrame()), c.records(verdicts), config))
