"""JSON Lines written straight from columns: each column turned into JSON text at once, the
lines joined by Arrow; no dict per row.

The file is byte for byte what `jsonl.write_jsonl` writes for the same rows (a dict per row, keys
in column order), and as strict: a non-finite number or text that is not UTF-8 fails the write and
leaves any previous file untouched.

- A column of text, numbers, booleans and None is written as one JSON array by one orjson call and
  cut at the array's commas, found with NumPy (those inside strings told apart by the quotes).
- Any other column (lists, maps) is written as one array too, with a mark between the values
  (`split_marked`), and cut where the marks stand.
- One orjson call per value costs far more: each call allocates an output buffer and shrinks it,
  and values kept by the hundred thousand leave the allocator trimming and growing its heap —
  about 2 µs a value (2.1 s of retry's evidence at 10⁶ rows, against 0.7 s in one call and cut),
  and 16 ms for a column of 10⁶ short texts in one call. Only a column one call cannot write
  (below) is written a value at a time.
- orjson writes NaN and ±Infinity as null, so floats are screened: a column of numbers (and None)
  through NumPy, exactly; in any other column, the values whose text holds null through
  `write_jsonl`'s screen.
- A row holding a value orjson refuses (an integer past 64 bits, a key that is not text) is
  written whole as `write_jsonl` writes it, so its other values are spelled as there too.
- A column given `Encoded` is already its values' texts, and is written as it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from rules.common.atomic import atomic_open
from rules.common.collector import cycle_collection_paused
from rules.common.jsonl import WRITE_BATCH, encoded_row, may_hold_non_finite, refuse_non_finite

SLICE_ROWS = 65_536
"""Rows encoded at once: the encoded texts of a slice are alive together, never a whole part's."""

_NUMBERS = frozenset({int, float, bool, type(None)})
_PLAIN = frozenset({str, int, bool, type(None)})
"""Cell types that cannot be or hold a float."""
_SCALARS = _NUMBERS | _PLAIN
"""Cell types written as one array and cut (`split_array`)."""


class Encoded:
    """A column given as each value's JSON text, as orjson writes the value (so holding no NaN or
    ±Infinity and nothing orjson refuses): written as it is, read back (orjson) where a value is
    wanted. Sliced, it stays encoded."""

    def __init__(self, texts: pa.Array):
        self.texts = texts
        """large_binary, a text per value."""

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, key):
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self.texts))
            if step != 1:
                raise ValueError("an encoded column is sliced in steps of one")
            return Encoded(self.texts.slice(start, max(stop - start, 0)))
        return orjson.loads(self.texts[key].as_py())

    def __iter__(self):
        return map(orjson.loads, self.texts.to_pylist())

    def array(self) -> pd.api.extensions.ExtensionArray:
        """The texts as a frame's column holds them (`of` reads them back)."""
        return pd.arrays.ArrowExtensionArray(self.texts)

    @staticmethod
    def of(column: pd.Series) -> Encoded | None:
        """A frame column holding `array()`'s texts as `Encoded`; None for any other column."""
        if column.dtype != _ENCODED:
            return None
        return Encoded(column.array.__arrow_array__().combine_chunks())


_ENCODED = pd.ArrowDtype(pa.large_binary())


def write_jsonl_columns(path: str | Path, parts: Iterable[dict[str, list]]) -> int:
    """Write parts of rows, each given as equally long columns (name → values, in output order), as
    JSON Lines; returns the count of rows."""
    n = 0
    with atomic_open(path, encoding=None) as fh, cycle_collection_paused():
        for columns in parts:
            n += write_columns(fh, columns)
    return n


def write_columns(fh, columns: dict[str, list]) -> int:
    """Write one part's rows to a binary file as JSON Lines; returns the count of rows."""
    rows = len(next(iter(columns.values()), ()))
    for start in range(0, rows, SLICE_ROWS):
        fh.write(jsonl_bytes({name: values[start:start + SLICE_ROWS] for name, values in columns.items()}))
    return rows


def jsonl_bytes(columns: dict[str, list]) -> bytes | memoryview:
    """The JSON Lines of the rows the columns hold, each line ending in a newline."""
    names = list(columns)
    if not names or not len(columns[names[0]]):
        return b""
    if any(type(name) is not str for name in names):  # keys orjson refuses: every row as write_jsonl writes it
        return b"".join(encoded_row(dict(zip(names, cells))) + b"\n" for cells in zip(*columns.values()))
    texts, refused = [], set()
    for name in names:
        text, rows = json_texts(columns[name])
        texts.append(text)
        refused.update(rows)
    lines = _objects(names, texts, b"}\n")
    if refused:
        out = lines.to_pylist()
        for i in refused:
            out[i] = encoded_row({name: columns[name][i] for name in names}) + b"\n"
        return b"".join(out)
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)[lines.offset:lines.offset + len(lines) + 1]
    return memoryview(lines.buffers()[2])[offsets[0]:offsets[-1]]


def object_texts(columns: dict[str, list], constants: dict | None = None) -> Encoded | None:
    """Each row's JSON object of the columns' values, keys in order, then the `constants` (the same
    for every row), as orjson writes the dict; None when a value is one orjson refuses, whose row a
    writer spells otherwise. Raises ValueError on NaN or ±Infinity, as writing the dicts would."""
    texts = []
    for values in columns.values():
        text, refused = json_texts(values)
        if refused:
            return None
        texts.append(text)
    tail = b"".join(b"," + orjson.dumps(k) + b":" + orjson.dumps(v) for k, v in (constants or {}).items())
    return Encoded(_objects(list(columns), texts, tail + b"}"))


def _objects(names: list[str], texts: list[pa.Array], tail: bytes) -> pa.Array:
    """Each row's `{"name":text,...` of the names and their columns' texts, ending in `tail`."""
    pieces: list = []
    for i, (name, text) in enumerate(zip(names, texts)):
        pieces += [pa.scalar((b"," if i else b"{") + orjson.dumps(name) + b":", pa.large_binary()), text]
    pieces.append(pa.scalar(tail, pa.large_binary()))
    return pc.binary_join_element_wise(*pieces, pa.scalar(b"", pa.large_binary()))


def json_texts(values: list) -> tuple[pa.Array, list[int]]:
    """(each value's JSON text as orjson writes it, the rows holding a value orjson refuses, whose
    text here is only a stand-in). Raises ValueError on NaN or ±Infinity at any depth."""
    if isinstance(values, Encoded):
        return values.texts, []
    kinds = set(map(type, values))
    cleared = _finite_numbers(values, kinds)
    dumps = orjson.dumps
    try:
        texts = split_array(dumps(values), len(values)) if kinds <= _SCALARS else split_marked(values)
    except orjson.JSONEncodeError:  # an integer past 64 bits, a key that is not text, text that is not UTF-8
        texts = None
    refused: list[int] = []
    if texts is None:
        out = []
        for i, v in enumerate(values):
            try:
                out.append(dumps(v))
            except orjson.JSONEncodeError:
                out.append(b"null")
                refused.append(i)
        texts = pa.array(out, type=pa.large_binary())
    if not cleared:
        _refuse_non_finite_where_null(values, texts)
    return texts, refused


def _finite_numbers(values: list, kinds: set) -> bool:
    """Whether the values are known to hold no NaN or ±Infinity: none can be or hold a float, or
    they are numbers (and None) that NumPy found finite."""
    if kinds <= _PLAIN:
        return True
    if not kinds <= _NUMBERS:
        return False
    try:
        numbers = np.array(values, dtype=np.float64)  # None becomes NaN: told apart by counting
    except OverflowError:  # an integer past the float range: not a float, not NaN
        numbers = np.array([v for v in values if type(v) is float], dtype=np.float64)
    bad = int((~np.isfinite(numbers)).sum())
    return bad == (values.count(None) if len(numbers) == len(values) else 0)


def _refuse_non_finite_where_null(values: list, texts: pa.Array) -> None:
    """Raise ValueError, as `json.dumps(allow_nan=False)` does, when a value is or holds NaN or
    ±Infinity. orjson writes those as null, so only a value whose text holds "null" may hold one:
    those values (None inside a list, or "null" inside a text, are the usual ones) go through
    `write_jsonl`'s screen, and the walk where the screen is unsure. retry's evidence holds no
    null, which one search of the texts' bytes finds (in half the time of Arrow's search value by
    value); live_pick's holds one in a third of the rows, persona's in two fifths."""
    data = texts.buffers()[2]
    if data is None or data.to_pybytes().find(b"null") < 0:  # the whole buffer: what every value holds, and more
        return
    at = np.flatnonzero(pc.fill_null(pc.match_substring(texts, "null"), False).to_numpy(zero_copy_only=False))
    if not len(at):
        return
    flagged = [values[i] for i in at.tolist()]
    for start in range(0, len(flagged), WRITE_BATCH):
        batch = flagged[start:start + WRITE_BATCH]
        if may_hold_non_finite(batch):
            refuse_non_finite(batch)


def split_array(text: bytes, n: int) -> pa.Array:
    """The text of each of the `n` values of a JSON array orjson wrote of text, numbers, booleans
    and None (no spaces; in strings, quotes and backslashes escaped): cut at the commas outside strings."""
    if n == 0:
        return pa.array([], type=pa.large_binary())
    buf = np.frombuffer(text, dtype=np.uint8)
    commas = np.flatnonzero(buf == 0x2C)
    if len(commas) != n - 1:  # some text holds a comma: keep those with an even count of quotes before
        quotes = np.flatnonzero(buf == 0x22)
        after_backslash = quotes[buf[quotes - 1] == 0x5C]  # the array opens with "[": never at 0
        if len(after_backslash):  # escaped when an odd run of backslashes stands before it
            escaped = [q for q in after_backslash.tolist() if (q - 1 - _run_start(text, q - 1)) % 2 == 1]
            quotes = np.setdiff1d(quotes, escaped, assume_unique=True)
        commas = commas[np.searchsorted(quotes, commas) % 2 == 0]
    if len(commas) != n - 1:
        raise AssertionError(f"cut a JSON array of {n} values into {len(commas) + 1}")
    return _cut(buf, commas, 1)


_MARK = "\U0010ffff"
"""A text set between values to cut them apart: its last code point's first UTF-8 byte (0xF4) is
rare in any text, so the cuts are found from that byte alone, then checked whole."""
_CUT = np.frombuffer(b"," + orjson.dumps(_MARK) + b",", dtype=np.uint8)


def split_marked(values: list) -> pa.Array | None:
    """The text of each value, of any kind, from one JSON array orjson wrote of the values with
    `_MARK` between them: cut where the mark stands between commas (inside a string a quote is
    escaped, so `,"` is never part of one). None when the cuts found are not one fewer than the
    values: some value holds the mark itself."""
    n = len(values)
    if n == 0:
        return pa.array([], type=pa.large_binary())
    marked = [_MARK] * (2 * n - 1)
    marked[0::2] = values
    buf = np.frombuffer(orjson.dumps(marked), dtype=np.uint8)
    k = len(_CUT)
    at = np.flatnonzero(buf == _CUT[2]) - 2  # where each cut starts
    at = at[(at >= 0) & (at + k <= len(buf))]
    for j in range(k):
        at = at[buf[at + j] == _CUT[j]]
    if len(at) != n - 1:
        return None
    return _cut(buf, at, k)


def _cut(buf: np.ndarray, cuts: np.ndarray, width: int) -> pa.Array:
    """The values of the JSON array `buf` (its brackets at both ends) between the cuts, each `width`
    bytes long and starting at `cuts`: the values' bytes taken out in one copy, their offsets
    worked out from the cuts'."""
    n = len(cuts) + 1
    body = np.delete(buf[1:len(buf) - 1], (cuts[:, None] + np.arange(width)).ravel() - 1)
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = 0
    offsets[1:n] = cuts - 1 - np.arange(n - 1) * width  # a value starts after its cut, less the bracket and the cuts before
    offsets[n] = len(body)
    values = pa.LargeBinaryArray.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(body)])
    values.validate(full=True)  # offsets in order and in bounds (binary: no byte is read), else Arrow reads past the body
    return values


def _run_start(text: bytes, end: int) -> int:
    """The position of the last byte before the run of backslashes that ends at `end`."""
    i = end
    while text[i] == 0x5C:
        i -= 1
    return i
