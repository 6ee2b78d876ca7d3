"""One object for the many equal strings a column reads from its lines.

A JSON parser makes a new string for every value it reads, so a million lines naming seven
characters hold a million copies of seven ids, and a tag list per line holds its own copies of
tags every other line repeats. `SharedValues` hands back the first copy of each string it has
seen in a column (and in the string elements of a column's lists), so the table holds one per
distinct value. Strings are immutable, so which equal copy a cell holds changes nothing a rule
or a writer can see; lists are rebuilt, never shared between cells.

A column that turns out to hold mostly distinct values (ids, free text) stops being looked up
once `LIMIT` distinct strings have been seen in it: the table would save little, and the lookup
table would cost more than it saves.

`array` does the same for a column held as an object array: a column of strings (and nulls) is
factorised by pandas in C, so only its distinct values pass through Python; a column of numbers
or booleans alone has nothing to share; any other (lists, mixed kinds) takes `column`'s path.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rules.common.distinct import per_distinct_text

LIMIT = 1 << 15
"""Distinct strings a column may show before its values are left as read."""


class SharedValues:
    """Per column, the first copy of each string seen; shared by the chunks of one dataset."""

    def __init__(self) -> None:
        self._seen: dict[str, dict | None] = {}

    def column(self, name: str, values: list) -> list:
        """`values` with every string (top-level, or an element of a list) replaced by the first
        equal string this column has shown; returns `values` itself once the column stopped looking."""
        seen = self._seen.setdefault(name, {})
        if seen is None:
            return values
        get = seen.setdefault
        out = [get(v, v) if type(v) is str else [get(t, t) if type(t) is str else t for t in v] if type(v) is list else v
               for v in values]
        if len(seen) > LIMIT:
            self._seen[name] = None
        return out

    def array(self, name: str, values: np.ndarray) -> np.ndarray:
        """`column` of an object array, returned as an object array (`values` itself when nothing
        in it is shared)."""
        seen = self._seen.setdefault(name, {})
        if seen is None:
            return values
        kind = pd.api.types.infer_dtype(values, skipna=True)
        if kind in _NOTHING_TO_SHARE:
            return values
        if kind != "string":
            out = np.empty(len(values), dtype=object)
            out[:] = self.column(name, values.tolist())
            return out
        get = seen.setdefault
        out = per_distinct_text(lambda v: get(v, v), values)
        if len(seen) > LIMIT:
            self._seen[name] = None
        return out


    def distinct(self, name: str, texts: np.ndarray) -> np.ndarray:
        """`array` of a column's distinct values (strings, or None), such as a dictionary Arrow made
        of a chunk's cells: spread over the cells by index, they share as `array` would share them."""
        seen = self._seen.setdefault(name, {})
        if seen is None:
            return texts
        get = seen.setdefault
        out = np.empty(len(texts), dtype=object)
        out[:] = [get(v, v) if type(v) is str else v for v in texts.tolist()]
        if len(seen) > LIMIT:
            self._seen[name] = None
        return out


_NOTHING_TO_SHARE = frozenset({"empty", "integer", "floating", "mixed-integer-float", "boolean", "decimal"})
"""`infer_dtype` kinds of a column holding no string and no list."""
