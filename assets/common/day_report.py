"""The verdict rows a day's report reads, without the evidence it does not need.

A report counts, pairs and samples every verdict row, but reads a row's evidence only where it shows
or explains that row: the wrong cases (rows with a golden label) and the board's items (a bounded
number). Evidence is the largest part of a stored verdict row once read back (about half of a
live_pick day's verdict table in memory), so the rows are read without it and it is filled in for
those rows alone (`fill_evidence`), by their key, which the verdict table indexes.
"""

from __future__ import annotations

from typing import Iterable

from rules.common.shared_values import SharedValues

EVIDENCE = "evidence"


def verdict_rows(c, warehouse, day: str) -> list[dict]:
    """The day's verdict rows as `c.records` makes them, every column but the evidence (absent, not null)."""
    if EVIDENCE not in c.output_columns:
        return c.records(warehouse.read_partition(c.table("verdicts"), day, c.verdict_json_columns))
    columns = [col for col in c.output_columns if col != EVIDENCE]
    json_columns = tuple(j for j in c.verdict_json_columns if j != EVIDENCE)
    frame = warehouse.read_rows(c.table("verdicts"), day, json_columns, columns=columns)
    shared = SharedValues()  # a day's rows repeat their verdicts, windows, characters and sentences
    for col in frame.columns:
        if col not in json_columns and frame[col].dtype == object:
            frame[col] = shared.array(col, frame[col].to_numpy())
    frame[EVIDENCE] = None
    rows = c.records(frame[c.output_columns])
    del frame
    for row in rows:
        del row[EVIDENCE]
    return rows


def fill_evidence(c, warehouse, day: str, rows: Iterable[dict]) -> None:
    """Give each of `rows` read without its evidence the evidence stored with it (in place)."""
    key = c.output_columns[0]
    wanting = [r for r in rows if EVIDENCE not in r]
    if not wanting:
        return
    found = warehouse.read_in(c.table("verdicts"), day, key, [r.get(key) for r in wanting], (EVIDENCE,), columns=[key, EVIDENCE])
    by_key = dict(zip(found[key].tolist(), found[EVIDENCE].tolist()))
    for row in wanting:
        row[EVIDENCE] = by_key.get(row.get(key))


def golden_rows(rows: list[dict], golden: list[dict] | None, id_field: str) -> list[dict]:
    """The rows a golden label names: the report explains those it gets wrong with their evidence."""
    if not golden:
        return []
    labelled = {g.get(id_field) for g in golden if isinstance(g, dict) and isinstance(g.get(id_field), (str, int))}
    return [r for r in rows if r.get(id_field) in labelled]
