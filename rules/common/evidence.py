"""Evidence rows: `{dataset|source, field, value[, agg]}` citing the rows a verdict rests on."""

from __future__ import annotations

import math
from itertools import chain

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionDtype
from pandas.core.dtypes.cast import maybe_box_native  # the boxing DataFrame.to_dict("records") applies

from rules.common.collector import cycle_collection_paused
from rules.common.json_columns import Encoded


def row(key: str, where: str, field: str, value, agg: str | None = None) -> dict:
    """One evidence row; `key` is the domain's name for the cited table ("dataset" or "source")."""
    out = {key: where, "field": field, "value": value}
    if agg is not None:
        out["agg"] = agg
    return out


def plain(v):
    """Plain Python scalars for JSON: numpy ints/bools → int/bool, NA and NaN → None."""
    if v is None or v is pd.NA:
        return None
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


_AS_IS = frozenset({str, int, bool, list, dict, type(None)})
"""Types `plain` (or the list-and-map rule) returns unchanged: most cells, passed without a call."""


_MASKED = (pd.arrays.IntegerArray, pd.arrays.FloatingArray, pd.arrays.BooleanArray)
"""Nullable numbers and booleans: converted whole to Python values with None where missing."""


def _boxed(v):
    """Any other cell of an object or extension column, as a frame's records would give it, made plain."""
    if type(v) is float:
        return None if v != v else v
    v = maybe_box_native(v)
    return v if isinstance(v, (list, dict)) else plain(v)


def _other(v):
    """Any other cell of a NumPy column that is not a number (dates, say), made plain."""
    return v if isinstance(v, (list, dict)) else plain(v)


def plain_values(column: pd.Series) -> list:
    """A column's cells as plain values, the same as `plain` on each of the frame's records
    (lists and maps untouched): numbers and booleans converted at once, other columns walked
    with the common cell types passed through."""
    dtype = column.dtype
    if not isinstance(dtype, ExtensionDtype) and dtype.kind in "iub":
        return column.to_numpy().tolist()
    if not isinstance(dtype, ExtensionDtype) and dtype.kind == "f":
        values = column.to_numpy()
        out = values.tolist()
        for i in np.flatnonzero(np.isnan(values)).tolist():
            out[i] = None
        return out
    convert = _boxed if dtype == object or isinstance(dtype, ExtensionDtype) else _other
    if dtype == object:
        cells = column.to_numpy().tolist()
    elif isinstance(column.array, _MASKED):
        cells = column.to_numpy(dtype=object, na_value=None).tolist()
    else:
        cells = list(column)
    if set(map(type, cells)) <= _AS_IS:  # the types found in C, half the time of the pass below
        return cells
    return [v if type(v) in _AS_IS else convert(v) for v in cells]


def _named(frame: pd.DataFrame, names: list[str] | None) -> list[tuple[str, pd.Series]]:
    """(name, column) of every column of the frame, or of the `names` (each naming one column), read
    in place where `frame[names]` would copy them."""
    if names is not None:
        return [(name, frame[name]) for name in names]
    return [(name, frame.iloc[:, i]) for i, name in enumerate(frame.columns.tolist())]


def plain_columns(frame: pd.DataFrame, names: list[str] | None = None) -> dict[str, list | Encoded]:
    """Each column's cells as plain values (`plain_values`), by column name (`_named`); a column of
    JSON texts stays `Encoded` (its values read back as they are iterated)."""
    out = {}
    for name, column in _named(frame, names):
        encoded = Encoded.of(column)
        out[name] = plain_values(column) if encoded is None else encoded
    return out


def rows_of(columns: dict[str, list]) -> list[dict]:
    """One dict per row from equally long columns, keys in the columns' order."""
    names = list(columns)
    with cycle_collection_paused():
        return [dict(zip(names, cells)) for cells in zip(*columns.values())]


def plain_records(frame: pd.DataFrame) -> list[dict]:
    """Frame rows as dicts of plain values (lists and maps untouched), converted column by column."""
    return rows_of(plain_columns(frame))


_UNBOXED = frozenset({str, int, float, bool, list, dict, type(None)})
"""Cell types `maybe_box_native` gives back as they are (a float as an equal float)."""


def cells(column: pd.Series) -> list:
    """The column's cells as iterating it gives them (a NumPy column's as Python scalars, an extension
    column's own cells), in one list: iterating a NumPy column calls `item` once per cell, `tolist`
    converts them in C (4 columns of 10⁶ cells: 0.6 s against 0.1 s)."""
    values = column._values
    return values.tolist() if isinstance(values, np.ndarray) else list(values)


def record_columns(frame: pd.DataFrame, names: list[str] | None = None) -> dict[str, list]:
    """Each column's cells as `frame.to_dict("records")` gives them, by column name: each column's
    cells are what iterating it gives (NumPy cells as Python scalars, an extension column's own
    cells: NA, Timestamps), and the cells of object and extension columns are boxed as `to_dict`
    boxes them; only cells of other types than the common ones take the call. By column name (`_named`)."""
    out = {}
    for name, column in _named(frame, names):
        values = cells(column)
        if column.dtype == object or isinstance(column.dtype, ExtensionDtype):
            boxed = {kind for kind in set(map(type, values)) - _UNBOXED if _boxes(kind)}
            if boxed:  # a column of Fractions, say, is given back as it is, without a call per cell
                values = [maybe_box_native(v) if type(v) in boxed else v for v in values]
        out[name] = values
    return out


def _boxes(kind: type) -> bool:
    """Whether `maybe_box_native` may change a value of this type: numbers (a subclass of int or
    float becomes the plain one), NumPy scalars and NA. Any other value it gives back as it is."""
    return issubclass(kind, (int, float, np.generic)) or kind is type(pd.NA)


def frame_records(frame: pd.DataFrame) -> list[dict]:
    """`frame.to_dict("records")`: the same dicts, keys, values and value types, made column by
    column (`record_columns`)."""
    return rows_of(record_columns(frame))


_LABEL_TYPES = frozenset({int, str, type(None)})
"""Label parts for which unequal means a different repr (a float may be NaN, which equals nothing;
equal-but-different values such as 1 and True only merge labels, which sends the rows the slow way)."""


def dedupe(rows: list[dict]) -> list[dict]:
    """Drop repeated evidence rows, keeping the first.

    Rows are the same when they hold the same fields with values of the same `repr` (so 1, 1.0
    and True stay apart); the key is built without a Python-level loop over the fields.
    """
    if len(rows) < 2:
        return list(rows)
    # Rows that differ in what they cite (table, field, agg, keys) cannot repeat one another: most
    # rows' evidence is told apart by these labels alone, without a key of every value.
    try:
        labels = {(len(r), r.get("dataset"), r.get("source"), r.get("field"), r.get("agg")) for r in rows}
    except TypeError:  # a list where a name belongs
        labels = set()
    if len(labels) == len(rows) and _LABEL_TYPES.issuperset(map(type, chain.from_iterable(labels))):
        return list(rows)
    seen, out = set(), []
    for r in rows:
        key = frozenset(zip(r, map(repr, r.values())))
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out
