"""Explaining verdict rows: each row's evidence, summary and hedge, from the builder for its verdict."""

from __future__ import annotations

from typing import Callable

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


