"""Stable sorts of a frame's rows by several key columns, text keys sorted in C.

pandas sorts a text column by factorizing it with its distinct values sorted by Python string
comparisons (`safe_sort`): 6 s of retry's 10⁶ events sorted by session, time and id. Arrow's
`sort_indices` sorts the same keys in C++, stably. Arrow compares text as UTF-8 bytes, which is
code point order, the order Python's `str` comparisons give; missing values (None, NaN, NA) go
last in either direction, as pandas puts them. Keys of other kinds (mixed, dates) go to pandas.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc


def stable_order(frame: pd.DataFrame, keys: list[str], ascending: bool | list[bool] = True) -> np.ndarray:
    """Row positions that put `frame` in order of `keys`: the order of `frame.sort_values(keys,
    ascending=ascending, kind="stable", na_position="last")`, as positions."""
    return stable_order_and_keys(frame, keys, ascending)[0]


def stable_order_and_keys(frame: pd.DataFrame, keys: list[str],
                          ascending: bool | list[bool] = True) -> tuple[np.ndarray, list[pa.Array] | None]:
    """`stable_order`, and the key columns as the Arrow arrays it sorted (in the frame's order), or
    None when pandas sorted them."""
    directions = [ascending] * len(keys) if isinstance(ascending, bool) else list(ascending)
    columns = [_arrow_key(frame[k]) for k in keys]
    if any(c is None for c in columns):
        return _pandas_order(frame, keys, directions), None
    table = pa.table({f"k{i}": c for i, c in enumerate(columns)})
    order = [(f"k{i}", "ascending" if up else "descending", "at_end") for i, up in enumerate(directions)]
    return pc.sort_indices(table, sort_keys=order).to_numpy().astype(np.int64, copy=False), columns


def runs_start(values: np.ndarray, key: pa.Array | None = None) -> np.ndarray:
    """Where each run of equal neighbours begins (the first value always does), as `!=` between
    neighbours finds it; `key` is the same values as Arrow text, when they are, compared in C++
    rather than object by object (10⁶ room ids: 0.3 s)."""
    opens = np.ones(len(values), dtype=bool)
    if key is not None and pa.types.is_string(key.type) and not key.null_count:
        opens[1:] = pc.not_equal(key[1:], key[:-1]).to_numpy(zero_copy_only=False)
    else:
        opens[1:] = values[1:] != values[:-1]
    return opens


def _pandas_order(frame: pd.DataFrame, keys: list[str], directions: list[bool]) -> np.ndarray:
    positions = frame[keys].reset_index(drop=True)
    return positions.sort_values(keys, ascending=directions, kind="stable", na_position="last").index.to_numpy()


def _arrow_key(column: pd.Series) -> pa.Array | None:
    """The column as an Arrow array that Arrow orders as pandas does (missing values as nulls), or
    None for kinds left to pandas."""
    dtype = column.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iubf":
        # NaN → null; + 0 makes -0.0 the 0.0 it equals (Arrow orders them apart, pandas keeps them tied)
        return pa.array(column.to_numpy() + 0 if dtype.kind == "f" else column.to_numpy(), from_pandas=True)
    if isinstance(column.array, (pd.arrays.IntegerArray, pd.arrays.BooleanArray)):
        return pa.array(column.array)
    if dtype == object:
        values = column.to_numpy()
        try:
            return pa.array(values, type=pa.string(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # not all text
            pass
        # Python ints or bools with missing values (live_pick's donations and questions): ordered as
        # numbers, as pandas compares them; pandas' sort of such a column took 0.6 s of 10⁶ lines.
        kinds = set(map(type, values)) - {type(None), float}
        if kinds in ({int}, {bool}) and _missing_floats_only(values):
            try:
                return pa.array(values, type=pa.int64() if kinds == {int} else pa.bool_(), from_pandas=True)
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):  # an int past 64 bits
                return None
    return None


def _missing_floats_only(values: np.ndarray) -> bool:
    """Whether every float among the values is NaN (a missing value, as None is)."""
    floats = [v for v in values.tolist() if type(v) is float]
    return all(v != v for v in floats)
