"""Clean lines read straight into columns by Arrow's JSON reader, with no dict per line.

The gates read each line into a dict (orjson) and then lay the dicts out in columns; for a file
of well-formed lines most of that work is making objects that are thrown away. Arrow's reader
parses the same bytes into typed columns in C++. It is used only where it cannot read a line
differently from `jsonl.read_objects`, and otherwise declines (returns None) and the gates read
the lines as before:

- only a schema whose properties are all text, integers, booleans or lists of texts (each with
  or without null); numbers are left to the dicts (two parsers could round a decimal apart) and
  so are maps;
- only a chunk whose every line starts with `{` and ends with `}`: no blank line, no padding, no
  BOM (which Arrow skips and the gates refuse), no top-level value that is not an object (Arrow
  crashes the process when the first line is just `null`, and reads a later one as a row of nulls);
- the reader is given the schema's types and refuses a field it does not know, a key given
  twice, a number that is not an int64 literal in an integer column (5.0, 1e2, NaN, past int64),
  a value of another JSON type, a lone surrogate escape and anything that is not JSON; any of
  them fails the whole chunk;
- it must find exactly one row per line (`{..}{..}` on one line would be two).

What Arrow cannot tell apart is an absent field from a null one: `read` reports both as null,
and the gates decide a row that way only when the schema gives it the same answer either way.
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from rules.common.bounded_json import DEEP

_TYPES = {"string": pa.large_string(), "integer": pa.int64(), "boolean": pa.bool_()}
_OPEN, _CLOSE = ord("{"), ord("}")
_NEWLINE = pa.scalar("\n", pa.large_string())
_NOTHING = pa.scalar("", pa.large_string())


def _kind(spec) -> str | None:
    """A property's one JSON type besides null; None for none or several."""
    kinds = spec.get("type") if isinstance(spec, dict) else None
    kinds = [kinds] if isinstance(kinds, str) else list(kinds) if isinstance(kinds, list) else []
    kinds = [k for k in kinds if k != "null"]
    return kinds[0] if len(kinds) == 1 and isinstance(kinds[0], str) else None


def _arrow_type(spec) -> pa.DataType | None:
    """The Arrow type of a property whose JSON type is text, an integer, a boolean or a list of texts
    (each with or without null); None for any other."""
    kind = _kind(spec)
    if kind == "array":
        items = spec.get("items")
        plain = isinstance(items, dict) and set(items) <= {"type", "description"} and _kind(items) == "string"
        return pa.list_(pa.large_string()) if plain else None
    return _TYPES.get(kind)


class ColumnReader:
    """Reads a chunk of lines of one dataset into its schema's columns, or declines."""

    def __init__(self, schema: dict):
        props = schema.get("properties") if isinstance(schema, dict) else None
        types = [_arrow_type(spec) for spec in props.values()] if isinstance(props, dict) and props else [None]
        self.names: tuple[str, ...] = tuple(props) if None not in types else ()
        self.usable = bool(self.names)
        self._schema = pa.schema(list(zip(self.names, types))) if self.usable else None

    def read(self, lines: pa.LargeStringArray, share: Callable[[str, np.ndarray], np.ndarray] | None = None
             ) -> tuple[np.ndarray, np.ndarray] | None:
        """(cells, nulls): one object column per name, in order, holding each line's value as
        `read_objects` would give it (str, int, bool), None where the field is null or absent, and
        where that is; or None when the reader declines the chunk (see the module). `share`: what a
        column's distinct texts become (by column name; `SharedValues.distinct`) before they are
        spread over its cells."""
        n = len(lines)
        if not self.usable:
            return None
        table = _table(lines, self._schema, "error")
        if table is None:
            return None
        cells = np.empty((n, len(self.names)), dtype=object)
        nulls = np.zeros((n, len(self.names)), dtype=bool)
        for j, name in enumerate(self.names):
            column = table.column(name).combine_chunks()
            shared = partial(share, name) if share else None
            if column.type == pa.large_string():
                cells[:, j] = _strings(column, shared)
            elif pa.types.is_list(column.type):  # each line's list sliced from one list of every element
                flat = _strings(column.values, shared).tolist()
                bounds = column.offsets.to_numpy()
                cells[:, j] = np.fromiter((flat[a:b] for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())),
                                          dtype=object, count=n)
            else:  # int64 or bool: NumPy's cast to object makes Python ints and bools
                cells[:, j] = column.fill_null(0 if column.type == pa.int64() else False).to_numpy(zero_copy_only=False).astype(object)
            if column.null_count:
                nulls[:, j] = column.is_null().to_numpy(zero_copy_only=False)
                cells[nulls[:, j], j] = None
        return cells, nulls


def field_texts(lines: pa.LargeStringArray, name: str) -> np.ndarray | None:
    """Each line's top-level field `name` as `json.loads` reads it, where that is text: an object
    array of strings, None where the field is absent or null; or None when the reader declines. The
    other fields are parsed (the line must be JSON) and let be, whatever they hold.

    Besides what `ColumnReader` declines (a line that is not one `{...}`, anything Arrow cannot read,
    two objects on one line), it declines `name` given twice or holding anything but text or null,
    and a line with `DEEP` openings or more, which `json.loads` may refuse as too deep for it while
    Arrow reads it."""
    found = fields_texts(lines, (name,))
    return None if found is None else found[0]


def fields_texts(lines: pa.LargeStringArray, names: tuple[str, ...]) -> list[np.ndarray] | None:
    """`field_texts` of each of the names, the lines read once; None when the reader declines any."""
    offsets = _offsets(lines)
    if len(lines) and lines.null_count == 0:
        data = lines.buffers()[2]
        for i in np.flatnonzero(np.diff(offsets) >= DEEP).tolist():  # a shorter line has fewer openings
            line = data[int(offsets[i]):int(offsets[i + 1])].to_pybytes()
            if line.count(b"[") + line.count(b"{") >= DEEP:
                return None
    table = _table(lines, pa.schema([(name, pa.large_string()) for name in names]), "ignore")
    return None if table is None else [column.combine_chunks().to_numpy(zero_copy_only=False) for column in table.columns]


def _offsets(lines: pa.LargeStringArray) -> np.ndarray:
    """Where each line starts in the data buffer, and where the last one ends."""
    return np.frombuffer(lines.buffers()[1], dtype=np.int64)[lines.offset:lines.offset + len(lines) + 1]


def _table(lines: pa.LargeStringArray, schema: pa.Schema, unexpected: str) -> pa.Table | None:
    """The lines read by Arrow into `schema`'s columns (fields it does not name met with
    `unexpected`: "error" or "ignore"); None unless every line is one `{...}` that Arrow reads."""
    n = len(lines)
    if n == 0 or lines.null_count:
        return None
    offsets = _offsets(lines)
    data = np.frombuffer(lines.buffers()[2], dtype=np.uint8)
    starts, ends = offsets[:-1], offsets[1:]
    if (ends <= starts).any() or (data[starts] != _OPEN).any() or (data[ends - 1] != _CLOSE).any():
        return None
    joined = pc.binary_join_element_wise(lines, _NEWLINE, _NOTHING)  # each line and a newline, in one buffer
    size = int(np.frombuffer(joined.buffers()[1], dtype=np.int64)[joined.offset + n])
    try:
        table = pj.read_json(
            pa.BufferReader(joined.buffers()[2][:size]),
            read_options=pj.ReadOptions(use_threads=True),  # a chunk's 1 MiB blocks parsed side by side, rows kept in order
            parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior=unexpected,
                                          newlines_in_values=False),
        )
    except (pa.ArrowException, ValueError):  # anything it cannot read: the dicts will say what
        return None
    return table if table.num_rows == n else None


def _strings(column: pa.Array, share: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    """A text column as an object array of Python strings, None where null: each distinct text made
    into a string once (Arrow's dictionary encoding, in C++) and repeated by reference; `share`
    makes each distinct text the object other chunks hold for it, so no cell needs looking up
    again. 10⁶ persona turns' text columns: 0.52 s made one string per cell, 0.22 s this way."""
    encoded = pc.dictionary_encode(column)
    texts = encoded.dictionary.to_numpy(zero_copy_only=False)
    if share is not None:
        texts = share(texts)
    if not encoded.null_count:
        return texts[encoded.indices.to_numpy()]
    return np.append(texts, None)[encoded.indices.fill_null(-1).to_numpy()]  # -1 picks the None
