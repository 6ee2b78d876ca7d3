"""What the gates do to one cell's value, over whole columns: trimming ids and codes of padding,
and integers kept as Python ints; `row_by_row` makes them work cell by cell, the reference the
column-wise forms are held to."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

import pandas as pd

_PADDING_RANGES = (
    (0x9, 0xd), (0x1c, 0x20), (0x85, 0x85), (0xa0, 0xa0), (0xad, 0xad), (0x600, 0x605),
    (0x61c, 0x61c), (0x6dd, 0x6dd), (0x70f, 0x70f), (0x890, 0x891), (0x8e2, 0x8e2), (0x1680, 0x1680),
    (0x180e, 0x180e), (0x2000, 0x200f), (0x2028, 0x202f), (0x205f, 0x2064), (0x2066, 0x206f), (0x3000, 0x3000),
    (0xfeff, 0xfeff), (0xfff9, 0xfffb), (0x110bd, 0x110bd), (0x110cd, 0x110cd), (0x13430, 0x13438), (0x1bca0, 0x1bca3),
    (0x1d173, 0x1d17a), (0xe0001, 0xe0001), (0xe0020, 0xe007f),
)
"""Code point ranges of Unicode whitespace and format characters (zero-width space and joiners,
BOM, bidi marks, tags), Unicode 14.0.0; a test re-derives them from `unicodedata`."""
PADDING = "".join(chr(c) for a, b in _PADDING_RANGES for c in range(a, b + 1))

_ROW_BY_ROW: ContextVar[bool] = ContextVar("row_by_row", default=False)


@contextmanager
def row_by_row() -> Iterator[None]:
    """Screens made inside run every gate line by line, the reference the column-wise gates match."""
    token = _ROW_BY_ROW.set(True)
    try:
        yield
    finally:
        _ROW_BY_ROW.reset(token)


# The ASCII members of PADDING are exactly what `str.strip()` strips (a test holds them equal), while
# `strip(PADDING)` reads PADDING's 360 characters on every call: an ASCII value, as most ids and codes
# are, takes the plain strip, five times faster over a column.
def trim(value: object) -> object:
    """Trim Unicode whitespace and format characters from both ends (ids and codes compare after
    this, case-sensitively): "CH-001\u200b" and "\ufeffCH-001" are the id "CH-001"."""
    if not isinstance(value, str):
        return value
    return value.strip() if value.isascii() else value.strip(PADDING)


def _untrimmed(value: object) -> bool:
    return isinstance(value, str) and trim(value) != value


def trim_column(values: pd.Series) -> pd.Series:
    """`trim` over a whole column in one list pass (no call per cell); `row_by_row` maps `trim`."""
    if _ROW_BY_ROW.get():
        return values.map(trim)
    out = [(v.strip() if v.isascii() else v.strip(PADDING)) if isinstance(v, str) else v for v in values.tolist()]
    return pd.Series(out, index=values.index, dtype=values.dtype if values.dtype == object else None, name=values.name)


def int_or_none(series: pd.Series) -> pd.Series:
    """Python ints with None for missing values (pandas would turn the mix into floats). A column
    already of ints and None (as Arrow's reader gives it) is taken as it is, the types found in C."""
    values = series.to_numpy(dtype=object)
    if set(map(type, values)) <= _INT_OR_NONE:
        return pd.Series(values.copy() if series.dtype == object else values, index=series.index, dtype=object)
    return pd.Series([None if v is None or v is pd.NA or v != v else int(v) for v in values], index=series.index, dtype=object)


_INT_OR_NONE = frozenset({int, type(None)})
