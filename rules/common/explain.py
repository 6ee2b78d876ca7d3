"""Explaining verdict rows: each row's evidence, summary and hedge, from the builder for its verdict."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa

from rules.common import evidence
from rules.common.collector import cycle_collection_paused
from rules.common.evidence_table import Cited
from rules.common.json_columns import Encoded, json_texts

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
    build: dict[str, Callable[[Columns, object], tuple[list | Cited, list, list]]],
    config,
    reads: tuple[str, ...],
    encoded: bool = False,
) -> tuple[list | Encoded, list, list]:
    """Evidence, summaries and hedges of the rows, as `per_verdict` gives them, each verdict's rows
    explained together: `build[verdict](columns, config)` gets the plain values of those rows in `key`
    and the `reads` columns and gives one summary and hedge per row, in the rows' order, and their
    evidence as one list per row or as `Cited` slots. `encoded`: evidence given as slots comes back
    as each row's JSON text (`Encoded`), where no cited value needs spelling otherwise.

    No dict per row and no builder call per row; a builder cites only the columns its verdict rests
    on and words a sentence once per distinct value (`each`). It must not repeat an evidence row
    within a row: nothing here removes repeats (`per_verdict` runs `dedupe`)."""
    n = len(f)
    summaries: list = [None] * n
    hedges: list = [None] * n
    if not n:
        return [None] * n, summaries, hedges
    codes = f[key].to_numpy(dtype=object)
    columns = evidence.plain_columns(f[[key, *(c for c in reads if c != key)]])
    made = []  # (rows, evidence) of each verdict
    with cycle_collection_paused():
        for code in pd.unique(codes):
            if code not in build:
                raise KeyError(code)
            at = np.flatnonzero(codes == code)
            whole = len(at) == n
            e, s, h = build[code](columns if whole else _Picked(columns, at.tolist()), config)
            if whole:
                return _evidence([(None, e)], n, encoded), s, h
            made.append((at, e))
            for i, si, hi in zip(at.tolist(), s, h):
                summaries[i], hedges[i] = si, hi
        return _evidence(made, n, encoded), summaries, hedges


def _evidence(made: list[tuple[np.ndarray | None, list | Cited]], n: int, encoded: bool) -> list | Encoded:
    """The rows' evidence from each verdict's (rows, evidence), rows None for every row: texts when
    `encoded` and no cited value needs spelling otherwise (slots joined by `Cited.texts`, lists
    written by `json_texts`), else lists."""
    if encoded:
        texts = [_encoded(e) for _, e in made]
        if None not in texts:
            if made[0][0] is None:
                return texts[0]
            order = np.concatenate([at for at, _ in made])
            back = np.empty(n, dtype=np.int64)
            back[order] = np.arange(n)  # each row's place among the verdicts' texts, one after another
            return Encoded(pa.concat_arrays([t.texts for t in texts]).take(back))
    cited: list = [None] * n
    for at, e in made:
        e = e.lists() if isinstance(e, Cited) else e
        if at is None:
            return e
        for i, ei in zip(at.tolist(), e):
            cited[i] = ei
    return cited


def _encoded(e: list | Cited) -> Encoded | None:
    if isinstance(e, Cited):
        return e.texts()
    texts, refused = json_texts(e)
    return None if refused else Encoded(texts)


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
