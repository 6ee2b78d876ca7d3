"""The verdict rows a day's report reads: every row, but only the columns it reads of every row.

A report counts, pairs and samples every verdict row, but reads the rest of a row (its evidence,
summary, the fields a wrong case names) only where it shows or explains that row: the wrong cases
(rows with a golden label) and the board's items (a bounded number). The domain names the columns
it reads of every row (`Domain.report_columns`; none named: every column but the evidence), so a
day's rows are read with those alone, as small dicts, and the other columns are filled in for the
rows shown or explained (`fill_whole`), by their key, which the verdict table indexes. A 10⁶-row
live_pick day's rows read whole held 2.6 KB each as Python objects; with seven columns, a few
hundred bytes.

The report made of a day is stored too, whole, beside the day's tables (`store_report`): the admin
pages show a stored day's report from it, whatever became of the raw folder since (`stored_report`).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Iterable

import pandas as pd

from rules.common.distinct import is_text, per_distinct_text
from rules.common.jsonl import parse_json
from rules.common.shared_values import SharedValues

EVIDENCE = "evidence"
CHUNK_ROWS = 50_000
"""Rows made into dicts at a time: the full-width records of a chunk are dropped as it is slimmed."""


def light_columns(c) -> list[str]:
    """The columns read of every row, in output order (the key first)."""
    named = set(c.report_columns) or {col for col in c.output_columns if col != EVIDENCE}
    key = c.output_columns[0]
    return [col for col in c.output_columns if col in named or col == key]


def verdict_rows(c, warehouse, day: str) -> list[dict]:
    """The day's verdict rows as `c.records` makes them, with the light columns alone (the others absent, not null)."""
    columns = light_columns(c)
    if len(columns) == len(c.output_columns):
        return c.records(warehouse.read_partition(c.table("verdicts"), day, c.verdict_json_columns))
    json_columns = tuple(j for j in c.verdict_json_columns if j in columns)
    frame = warehouse.read_rows(c.table("verdicts"), day, columns=columns)  # JSON as stored: parsed once per distinct text
    shared = SharedValues()  # a day's rows repeat their verdicts, windows, characters and sentences
    for col in frame.columns:
        values = frame[col].to_numpy()
        if col in json_columns:
            frame[col] = per_distinct_text(parse_json, values) if values.dtype == object and is_text(values) else values
        elif values.dtype == object:
            frame[col] = shared.array(col, values)
    rows: list[dict] = []
    for start in range(0, len(frame), CHUNK_ROWS):
        # The columns not read hold 0, a value every domain's `records` takes (an integer column
        # refuses null); they are dropped as the row is slimmed.
        chunk = frame.iloc[start:start + CHUNK_ROWS].reindex(columns=c.output_columns, fill_value=0)
        rows += [{col: r[col] for col in columns} for r in c.records(chunk)]
    return rows


def fill_whole(c, warehouse, day: str, rows: Iterable[dict]) -> None:
    """Give each of `rows` read with the light columns alone its every stored column (in place, in output order)."""
    key = c.output_columns[0]
    light = set(light_columns(c))
    others = [col for col in c.output_columns if col not in light]
    wanting = [r for r in rows if any(col not in r for col in others)]
    if not wanting:
        return
    found = c.records(warehouse.read_in(c.table("verdicts"), day, key, [r.get(key) for r in wanting], c.verdict_json_columns))
    by_key = {r.get(key): r for r in found}
    for row in wanting:
        whole = by_key.get(row.get(key))
        if whole is not None:
            row.clear()
            row.update(whole)


def golden_rows(rows: list[dict], golden: list[dict] | None, id_field: str) -> list[dict]:
    """The rows a golden label names: the report explains those it gets wrong with their evidence."""
    if not golden:
        return []
    labelled = {g.get(id_field) for g in golden if isinstance(g, dict) and isinstance(g.get(id_field), (str, int))}
    return [r for r in rows if r.get(id_field) in labelled]



REPORT_KINDS = {"stored_at": "text", "report": "text"}
"""The report is kept as the text `to_dict` makes (JSON), not a JSON column: PostgreSQL's jsonb would
reorder its keys, and the verdict counts are in the domain's order."""


def report_table(domain: str) -> str:
    return f"{domain}_report"


def store_report(warehouse, domain: str, day: str, report) -> str:
    """Replace the day's stored report with `report`; the time it was stored (UTC, ISO-8601) is returned."""
    stored_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    text = json.dumps(report.to_dict(), ensure_ascii=False)
    warehouse.replace_partition(report_table(domain), day, pd.DataFrame([{"stored_at": stored_at, "report": text}]), kinds=REPORT_KINDS)
    return stored_at


def stored_days(warehouse, domain: str) -> list[str]:
    """The days whose report is stored, newest first."""
    table = report_table(domain)
    if not warehouse.has_table(table):
        return []
    return [str(d) for d, in warehouse.query(f'SELECT partition_key FROM "{table}" ORDER BY partition_key DESC')]


def stored_report(warehouse, domain: str, day: str):
    """(the day's stored report, when it was stored), or None when no report of the day is stored."""
    from evals.domains import get as get_domain
    from evals.report import report_from_dict

    table = report_table(domain)
    if not warehouse.has_table(table):
        return None
    found = warehouse.query(f'SELECT stored_at, report FROM "{table}" WHERE partition_key = :p', {"p": day})
    if not found:
        return None
    stored_at, text = found[0]
    get_domain(domain).reporting()  # the domain's own report kind, imported to be read back
    return report_from_dict(json.loads(text)), str(stored_at)
