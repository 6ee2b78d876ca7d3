"""Nullable integer columns (pandas' Int64) made whole, without a Python value per row."""

from __future__ import annotations

import numpy as np
import pandas as pd


def missing_int64(n: int) -> pd.arrays.IntegerArray:
    """`pd.array([pd.NA] * n, dtype="Int64")` made without a list of n NAs (0.17 s at 10⁶ rows): the
    same values under the mask, every one missing."""
    return pd.arrays.IntegerArray(np.ones(n, dtype=np.int64), np.ones(n, dtype=bool))
