"""Rows of a frame taken into a frame of its own, copied once.

`reset_index(drop=True)` copies every column (pandas copies unless copy-on-write is on), so
`frame.take(order).reset_index(drop=True)` copied a million rows twice: 0.27 s for ten text
columns. A frame that `take` or `copy` has just made is its own, and its index can be set in place.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def renumbered(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame of one's own, given the index 0…n-1 in place: `reset_index(drop=True)` without its copy."""
    frame.index = pd.RangeIndex(len(frame))
    return frame


def taken(frame: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """`frame.take(rows).reset_index(drop=True)`, or of the rows where a boolean mask holds, with one
    copy of the columns, each column taken from its own array and the frame left unmerged (retry's
    10⁶ events put in session order this way, rather than by the frame's `take`: 3–9% off its judge
    in four pairs side by side)."""
    rows = np.asarray(rows)
    if rows.dtype == bool:
        rows = np.flatnonzero(rows)
    if frame.columns.has_duplicates:
        return renumbered(frame.take(rows))
    return pd.DataFrame({name: frame[name]._values.take(rows) for name in frame.columns},
                        index=pd.RangeIndex(len(rows)), columns=frame.columns, copy=False)


def columns_of(frame: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """`frame[names]` over the same column arrays, where `frame[names]` copies them all: the
    columns can be read, and new ones set, but not written in place."""
    return pd.DataFrame({name: frame[name]._values for name in names}, index=frame.index, columns=names, copy=False)
