"""Explaining verdict rows: each row's evidence, summary and hedge, from the builder for its verdict."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from rules.common import evidence
from rules.common.collector import cycle_collection_paused

Explanation = tuple[list[dict], str, str | None]
"""A row's evidence rows, its summary and its hedge (None when there is nothing to hedge)."""


def per_verdict(
    f: pd.DataFrame,
    key: str,
    build: dict[str, Callable[[dict, object], Explanation]],
    config,
    hedge: Callable[[dict, str | None], str | None] | None = None,
    reads: tuple[str, ...] | None = None,
) -> tuple[list, list, list]:
    """Evidence (without repeats), summaries and hedges of the rows, each from `build[row[key]]`.

    `hedge(row, hedge)`, when given, has the last word on each row's hedge. `reads`: the only
    columns the builders read (besides `key`); the rows are made of those alone.
    """
    cited, summaries, hedges = [], [], []
    if reads is not None:
        f = f[[key, *(c for c in reads if c != key)]]
    with cycle_collection_paused():
        for r in evidence.plain_records(f):
            e, s, h = build[r[key]](r, config)
            if hedge is not None:
                h = hedge(r, h)
            cited.append(evidence.dedupe(e))
            summaries.append(s)
            hedges.append(h)
    return cited, summaries, hedges




Columns = dict[str, list]
"""Plain values of some rows, by column name: the rows of one verdict, handed to its builder."""


def column_wise(
    f: pd.DataFrame,
    key: str,
    build: dict[str, Callable[[Columns, object], tuple[list, list, list]]],
    config,
    reads: tuple[str, ...],
) -> tuple[list, list, list]:
    """Evidence, summaries and hedges of the rows, as `per_verdict` gives them, each verdict's rows
    explained together: `build[verdict](columns, config)` gets the plain values of those rows in `key`
    and the `reads` columns and gives one evidence list, summary and hedge per row, in the rows' order.

    No dict per row and no builder call per row; a builder cites only the columns its verdict rests
    on and words a sentence once per distinct value (`each`). It must not repeat an evidence row
    within a row: nothing here removes repeats (`per_verdict` runs `dedupe`)."""
    n = len(f)
    cited: list = [None] * n
    summaries: list = [None] * n
    hedges: list = [None] * n
    if not n:
        return cited, summaries, hedges
    codes = f[key].to_numpy(dtype=object)
    columns = evidence.plain_columns(f[[key, *(c for c in reads if c != key)]])
    with cycle_collection_paused():
        for code in pd.unique(codes):
            if code not in build:
                raise KeyError(code)
            at = np.flatnonzero(codes == code).tolist()
            whole = len(at) == n
            e, s, h = build[code](columns if whole else _Picked(columns, at), config)
            if whole:
                return e, s, h
            for i, ei, si, hi in zip(at, e, s, h):
                cited[i], summaries[i], hedges[i] = ei, si, hi
    return cited, summaries, hedges


class _Picked(dict):
    """Some rows of `columns`: a column's values are picked when a builder first asks for it."""

    def __init__(self, columns: Columns, at: list[int]):
        super().__init__()
        self._columns, self._at = columns, at

    def __missing__(self, name: str) -> list:
        values = self._columns[name]
        picked = self[name] = [values[i] for i in self._at]
        return picked


def each(fn: Callable[[object], object], values: list) -> list:
    """`fn` of every value, called once per distinct value (of a kind: 1 and True apart)."""
    keys = [(type(v), v) for v in values]
    try:
        table = dict.fromkeys(keys)
    except TypeError:  # a list where a scalar belongs
        return [fn(v) for v in values]
    for k in table:
        table[k] = fn(k[1])
    return [table[k] for k in keys]
