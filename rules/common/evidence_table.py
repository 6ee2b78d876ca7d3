"""Evidence as a long table: the values a part's rows cite, slot by slot, made into each row's
evidence list (the dicts a verdict frame holds) or straight into each row's JSON text (for writing).

A slot is one evidence row that a row may cite: the same table, field and agg for every row, its
value from a column, cited where a mask holds. A row's
evidence is its cited slots in slot order. Written as JSON, a slot is its keys' text with each
value's text set in, every value of a column written by one orjson call (`json_columns.json_texts`)
and the pieces joined by Arrow, so no dict is made per row: retry's evidence at 10⁶ rows cost 0.72 s
as dicts and 0.6 s more to write them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from rules.common.collector import cycle_collection_paused
from rules.common.json_columns import Encoded, json_texts


@dataclass(frozen=True)
class Slot:
    """`evidence.row(key, table, field, value, agg)` of each row's value, in the rows citing it."""

    key: str
    """The domain's name for the cited table: "dataset" or "source"."""
    table: str
    field: str
    values: Sequence
    """Each row's value, plain (as `evidence.record_columns` gives it)."""
    where: np.ndarray | None = None
    """The rows citing it (booleans); None: every row."""
    agg: str | None = None

    def rows(self, n: int) -> list[int] | None:
        """The positions of the rows citing it; None: every row."""
        return None if self.where is None else np.flatnonzero(self.where).tolist()

    def cited(self, rows: list[int] | None) -> list:
        """The values of the rows citing it."""
        return self.values if rows is None else list(map(self.values.__getitem__, rows))


@dataclass(frozen=True)
class Cited:
    """What `n` rows cite, as slots: a builder's evidence, made into lists or texts by its caller."""

    slots: Sequence[Slot]
    n: int

    def lists(self) -> list[list[dict]]:
        return lists(self.slots, self.n)

    def texts(self) -> Encoded | None:
        return texts(self.slots, self.n)


def lists(slots: Sequence[Slot], n: int) -> list[list[dict]]:
    """Each row's evidence as a list of dicts, keys in the order written: a slot's dicts made in one
    comprehension; the rows' lists made by zipping the slots every row cites, then the others
    appended to the rows citing them, in C. (An empty list per row appended to slot by slot took
    twice as long: 1.1 s of retry's 10⁶ rows, against 0.5 s this way and 0.5 s written out per row.)"""
    with cycle_collection_paused():
        made = []
        for s in slots:
            rows = s.rows(n)
            key, table, field, agg = s.key, s.table, s.field, s.agg
            if agg is None:
                made.append((rows, [{key: table, "field": field, "value": v} for v in s.cited(rows)]))
            else:
                made.append((rows, [{key: table, "field": field, "value": v, "agg": agg} for v in s.cited(rows)]))
        lead = next((k for k, (rows, _) in enumerate(made) if rows is not None), len(made))
        out = list(map(list, zip(*(m for _, m in made[:lead])))) if lead else [[] for _ in range(n)]
        for rows, m in made[lead:]:
            deque(map(list.append, out if rows is None else map(out.__getitem__, rows), m), maxlen=0)
    return out


_BINARY = pa.large_binary()
_EMPTY, _COMMA = pa.scalar(b"", _BINARY), pa.scalar(b",", _BINARY)
_OPEN, _CLOSE = pa.scalar(b"[", _BINARY), pa.scalar(b"]", _BINARY)


def texts(slots: Sequence[Slot], n: int) -> Encoded | None:
    """Each row's evidence as the JSON text orjson writes of `lists(slots, n)`'s row; None when a
    cited value is one orjson refuses (an integer past 64 bits, text that is not UTF-8), whose row a
    writer spells otherwise (`json_columns`). Raises ValueError on a cited NaN or ±Infinity, as
    writing the lists would."""
    pieces = [_OPEN]
    earlier = np.zeros(n, dtype=bool)  # rows citing an earlier slot: a comma goes before this one
    for s in slots:
        rows = s.rows(n)
        values = s.cited(rows)
        cited, refused = json_texts(values if isinstance(values, list) else list(values))
        if refused:
            return None
        if rows is not None:  # spread to every row, null where the row does not cite it
            at = np.full(n, -1, dtype=np.int64)
            at[rows] = np.arange(len(rows))
            cited = cited.take(pa.array(at, mask=at < 0))
        comma = _COMMA if earlier.all() else _EMPTY if not earlier.any() else pc.if_else(earlier, _COMMA, _EMPTY)
        head = orjson.dumps({s.key: s.table, "field": s.field})[:-1] + b',"value":'
        tail = (b',"agg":' + orjson.dumps(s.agg) if s.agg is not None else b"") + b"}"
        element = pc.binary_join_element_wise(comma, pa.scalar(head, _BINARY), cited, pa.scalar(tail, _BINARY), _EMPTY)
        pieces.append(element if rows is None else pc.fill_null(element, _EMPTY))
        if rows is None:
            earlier[:] = True
        else:
            earlier[rows] = True
    # Arrow's join with nulls skipped drops rows whose values are all null, so absent slots are
    # empty texts and each cited one brings its own comma.
    pieces.append(_CLOSE)
    if len(pieces) == 2:
        return Encoded(pa.array([b"[]"] * n, type=_BINARY))
    return Encoded(pc.binary_join_element_wise(*pieces, _EMPTY))
