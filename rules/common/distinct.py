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


def per_distinct_text(fn: Callable[[str], object], values: np.ndarray) -> np.ndarray:
    """`fn` of every value of a text column (see `is_text`), as an object array: `fn` is called once
    per distinct value, in order of first appearance; a missing value gives None."""
    codes, distinct = pd.factorize(values)  # a missing value is -1: the last slot, left None
    out = np.empty(len(distinct) + 1, dtype=object)
    out[:-1] = [fn(v) for v in distinct.tolist()]
    return out[codes]
