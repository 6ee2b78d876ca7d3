"""Explaining verdict rows: each row's evidence, summary and hedge, from the builder for its verdict."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Callable, Iterator

import pandas as pd

from rules.common import evidence

Explanation = tuple[list[dict], str, str | None]
"""A row's evidence rows, its summary and its hedge (None when there is nothing to hedge)."""


def per_verdict(
    f: pd.DataFrame,
    key: str,
    build: dict[str, Callable[[dict, object], Explanation]],
    config,
    hedge: Callable[[dict, str | None], str | None] | None = None,
) -> tuple[list, list, list]:
    """Evidence (without repeats), summaries and hedges of the rows, each from `build[row[key]]`.

    `hedge(row, hedge)`, when given, has the last word on each row's hedge.
    """
    cited, summaries, hedges = [], [], []
    with cycle_collection_paused():
        for r in evidence.plain_records(f):
            e, s, h = build[r[key]](r, config)
            if hedge is not None:
                h = hedge(r, h)
            cited.append(evidence.dedupe(e))
            summaries.append(s)
            hedges.append(h)
    return cited, summaries, hedges


@contextmanager
def cycle_collection_paused() -> Iterator[None]:
    """Hold the cycle collector while a block makes a dict or list per row.

    Those containers hold plain values and form no cycles (reference counting frees them), but
    each hundred thousand of them set off collections that walk every live container again:
    about half the time of building a frame's records. The collector's state is restored after.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
