"""A function of a text column, called once per distinct value.

Columns of codes, tags and names repeat a few values over many rows: pandas' factorize finds
the distinct ones in C, so Python sees each once rather than once per row.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd


def is_text(values: np.ndarray) -> bool:
    """Whether an object array holds only text and missing values (None, NaN, NA)."""
    return pd.api.types.infer_dtype(values, skipna=True) in ("string", "empty")


def factorize_text(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, distinct values) of a text column (see `is_text`), as `pd.factorize` gives them: codes
    in order of first appearance, -1 for a missing value. pandas' hash table for text reads each
    string only up to its first "\\x00", so "a\\x00b" and "a" share a code there; its answer is
    checked (every value equal to its code's value) and, when wrong, found again exactly."""
    codes, distinct = pd.factorize(values)
    distinct = np.asarray(distinct, dtype=object)
    present = codes >= 0
    if (distinct[codes[present]] == values[present]).all():
        return codes, distinct
    kept = values[present]
    distinct = kept[~pd.Series(kept, dtype=object).duplicated().to_numpy()]  # hashes whole strings
    codes = np.full(len(values), -1, dtype=np.intp)
    codes[present] = pd.Index(distinct, dtype=object).get_indexer(kept)
    return codes, distinct


def per_distinct_text(fn: Callable[[str], object], values: np.ndarray) -> np.ndarray:
    """`fn` of every value of a text column (see `is_text`), as an object array: `fn` is called once
    per distinct value, in order of first appearance; a missing value gives None."""
    codes, distinct = factorize_text(values)  # a missing value is -1: the last slot, left None
    out = np.empty(len(distinct) + 1, dtype=object)
    out[:-1] = [fn(v) for v in distinct.tolist()]
    return out[codes]


def each_value(fn: Callable[[object], object], series: pd.Series) -> pd.Series:
    """`fn` of every value of a column, as an object Series on its index: once per distinct value
    when the column is text (`fn` must then depend on the value alone) and once per missing value
    (None and NaN may differ to `fn`), else once per row."""
    values = series.to_numpy(dtype=object)
    if is_text(values):
        out = per_distinct_text(fn, values)
        missing = np.flatnonzero(pd.isna(values))
        out[missing] = [fn(v) for v in values[missing].tolist()]
    else:
        out = np.empty(len(values), dtype=object)
        out[:] = [fn(v) for v in values.tolist()]
    return pd.Series(out, index=series.index, dtype=object, name=series.name)


def exact_factorize(values) -> tuple[np.ndarray, np.ndarray]:
    """`pd.factorize` of a column or array as (int64 codes, distinct values as an array): codes in
    order of first appearance, -1 for a missing value, exact for text holding NUL (see
    `factorize_text`). Group on these codes, not on the text itself, which pandas' group-by, `unique`
    and `nunique` factorise the same flawed way."""
    values = values.to_numpy(dtype=object) if isinstance(values, pd.Series) else np.asarray(values)
    if values.dtype == object and is_text(values):
        codes, distinct = factorize_text(values)
    else:
        codes, distinct = pd.factorize(values)
    return codes.astype(np.int64, copy=False), np.asarray(distinct)


def exact_duplicated(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """`frame.duplicated(columns)` (every row after the first of its kind) as a boolean array, exact
    for text holding NUL: pandas' duplicates over several columns factorise each the flawed way."""
    codes = pd.DataFrame({i: exact_factorize(frame[c])[0] for i, c in enumerate(columns)}, index=range(len(frame)))
    return codes.duplicated().to_numpy()


def select_labels(conditions: list, labels, default) -> np.ndarray:
    """`np.select(conditions, labels, default)` as an array of the label objects themselves: every
    row of a label holds the one str given, where `np.select` makes a fixed-width text array whose
    cells become a new str per row once in a frame (10⁶ rows, 10⁶ strs held)."""
    choice = np.select(conditions, np.arange(len(labels)), len(labels))
    options = np.empty(len(labels) + 1, dtype=object)
    options[:] = [*labels, default]
    return options[choice]
