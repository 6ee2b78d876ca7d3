"""Where a verdict comes from: the source file and line of every row its evidence cites, and the
conversation around it (the turn's character, the window's chat, the session's events, the room).

Works on the normalised tables the rules judged (each row keeps its `file` and `line`). An
evidence item without `agg` is matched to the first related row whose field holds its value
(equal, an element of a list, or an entry of a map, as SPEC §2 allows); one with `agg` was
counted over several rows and cites no single line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import pandas as pd

from rules.common.cells import trim

@dataclass
class CitedRow:
    """One evidence item with the row it was found in (None: counted over rows, or not found)."""

    dataset: str
    field: str
    value: object
    agg: str | None
    file: str | None = None
    line: int | None = None
    row_id: str | None = None
    note: str = ""


@dataclass
class Transcript:
    title: str
    columns: list[str]
    rows: list[dict]
    """Each row: the shown columns, plus `file`, `line`, `_id` and `_focus` (the item's own row)."""
    verdicts: dict[str, str] = field(default_factory=dict)
    """Verdict of the transcript rows that were judged themselves, by id."""


@dataclass(frozen=True)
class TraceSpec:
    """A domain's part of the trace, declared in its board module (`evals/boards/<d>.py`)."""

    related: Callable[[dict, dict[str, pd.DataFrame]], dict[str, pd.DataFrame]]
    """(verdict row, tables) → per dataset, the rows its evidence may cite."""
    transcript: Callable[[dict, dict[str, pd.DataFrame]], Transcript]
    origins: dict[str, str] = field(default_factory=dict)
    """Evidence that names a `source` rather than a dataset (persona) → the dataset it means."""


def rows_where(frame: pd.DataFrame | None, column: str, values) -> pd.DataFrame:
    if frame is None or column not in frame.columns:
        return pd.DataFrame()
    wanted = {v for v in values if isinstance(v, str)}
    return frame[frame[column].isin(wanted)]


def shown_rows(frame: pd.DataFrame, columns: list[str], id_col: str, focus: set[str]) -> list[dict]:
    out = []
    for r in frame.to_dict("records"):
        item = {c: _plain(r.get(c)) for c in columns}
        item.update(file=r.get("file"), line=_int(r.get("line")), _id=r.get(id_col), _focus=r.get(id_col) in focus)
        out.append(item)
    return out


def _plain(v):
    if isinstance(v, float) and v != v:
        return None
    if hasattr(v, "item") and not isinstance(v, (list, dict, str)):
        return v.item()
    return v


def _int(v) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


# -- matching evidence to rows -------------------------------------------------------------------


def _same(cell, value) -> bool:
    """The cited value is this cell, one element of it (a list) or one entry of it (a map)."""
    if isinstance(cell, (list, tuple)):
        return any(_same(x, value) for x in cell)
    if isinstance(cell, dict):
        return any(_same(x, value) for x in cell.values())
    if cell is None or (isinstance(cell, float) and cell != cell):
        return value is None
    if isinstance(value, bool) or isinstance(cell, bool):
        return bool(cell) == value if isinstance(value, bool) and isinstance(cell, (bool, int)) else False
    if isinstance(value, (int, float)) and isinstance(cell, (int, float)):
        return float(cell) == float(value)
    if hasattr(cell, "item"):
        return _same(cell.item(), value)
    return isinstance(value, str) and trim(str(cell)) == trim(value)


def cited_rows(domain, row: dict, tables: dict[str, pd.DataFrame]) -> list[CitedRow]:
    """Each evidence item of `row` with the source file, line and id of the row it cites (`domain`:
    an `evals.domains.Domain`)."""
    spec, ids = domain.board().trace, domain.spec.id_fields
    related = spec.related(row, tables)
    origins = spec.origins
    out = []
    for item in row.get("evidence") or []:
        if not isinstance(item, dict):
            continue
        origin = item.get("dataset", item.get("source"))
        dataset = origins.get(origin, origin)
        c = CitedRow(str(dataset), str(item.get("field")), item.get("value"), item.get("agg"))
        if c.agg:
            c.note = f"여러 줄에서 센 값({c.agg})이라 한 줄을 가리키지 않습니다"
        else:
            frame = related.get(dataset)
            if frame is None or frame.empty or c.field not in frame.columns:
                c.note = "인용한 행을 입력에서 찾지 못했습니다"
            else:
                hit = next((r for r in frame.to_dict("records") if _same(r.get(c.field), c.value)), None)
                if hit is None:
                    c.note = "관련 행 가운데 이 값을 가진 행이 없습니다"
                else:
                    c.file, c.line = hit.get("file"), _int(hit.get("line"))
                    c.row_id = hit.get(ids.get(dataset, ""))
        out.append(c)
    return out


def transcript(domain, row: dict, tables: dict[str, pd.DataFrame], verdicts: dict[str, str] | None = None) -> Transcript:
    """The conversation around the item, its own row(s) marked; `verdicts` labels rows judged
    themselves (`domain`: an `evals.domains.Domain`)."""
    t = domain.board().trace.transcript(row, tables)
    if verdicts:
        t.verdicts = {r["_id"]: verdicts[r["_id"]] for r in t.rows if r["_id"] in verdicts}
    return t
