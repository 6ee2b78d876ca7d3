"""Nullable integer columns made whole (`rules.common.nullable`)."""

from __future__ import annotations

import pandas as pd
import pytest

from rules.common.nullable import missing_int64


@pytest.mark.parametrize("n", [0, 1, 5, 1000])
def test_missing_int64_is_the_array_of_n_nas(n):
    made, expected = missing_int64(n), pd.array([pd.NA] * n, dtype="Int64")
    assert made.dtype == expected.dtype and len(made) == n
    assert made.isna().all() and made.equals(expected)
    assert (made._data == expected._data).all()  # the values under the mask too
    column = pd.Series(made)
    column.iloc[:1] = 7  # a column of its own, filled in later as the engines do
    assert column.tolist() == ([7] if n else []) + [pd.NA] * max(n - 1, 0)
