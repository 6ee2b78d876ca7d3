"""Evidence rows: `{dataset|source, field, value[, agg]}` citing the rows a verdict rests on."""

from __future__ import annotations

import math

import pandas as pd


def row(key: str, where: str, field: str, value, agg: str | None = None) -> dict:
    """One evidence row; `key` is the domain's name for the cited table ("dataset" or "source")."""
    out = {key: where, "field": field, "value": value}
    if agg is not None:
        out["agg"] = agg
    return out


def plain(v):
    """Plain Python scalars for JSON: numpy ints/bools → int/bool, NA and NaN → None."""
    if v is None or v is pd.NA:
        return None
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def plain_records(frame: pd.DataFrame) -> list[dict]:
    """Frame rows as dicts of plain values (lists and maps untouched)."""
    return [{k: v if isinstance(v, (list, dict)) else plain(v) for k, v in r.items()} for r in frame.to_dict("records")]


def dedupe(rows: list[dict]) -> list[dict]:
    """Drop repeated evidence rows, keeping the first."""
    seen, out = set(), []
    for r in rows:
        key = tuple((k, repr(v)) for k, v in sorted(r.items()))
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out
