"""Reading one line of JSON within bounds: an object, every integer within int64, every number finite
once parsed, every string writable as UTF-8, nesting not too deep to read; otherwise the reason code
that names what is wrong and where (`read_object`). The gates read every line of every file through
`read_objects`, the live service's intake through `parse_object`."""

from __future__ import annotations

import json
import math

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa

from rules.common.collector import cycle_collection_paused


TEXT = pd.ArrowDtype(pa.large_string())
"""How a file's lines are held: one Arrow buffer of UTF-8 (see `jsonl.utf8_frame`)."""

INVALID_JSON = "invalid_json"
NOT_UTF8 = "not_utf8"
NON_FINITE = "non_finite_number"
INTEGER_RANGE = "integer_out_of_range"
LONE_SURROGATE = "lone_surrogate"
TOO_DEEP = "too_deep"
"""Reason codes of a line that is not a bounded JSON object (see `read_object`)."""

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class _Unbounded(Exception):
    """A number literal the gates do not let through (raised from inside the JSON parser)."""


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _int64(literal: str) -> int:
    if len(literal) - literal.startswith("-") > 19:  # also spares int() its 4300-digit limit
        raise _Unbounded
    value = int(literal)
    if not INT64_MIN <= value <= INT64_MAX:
        raise _Unbounded
    return value


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):  # 1e400 is a finite literal that parses to infinity
        raise _Unbounded
    return value


_BOUNDED = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_int64, parse_float=_finite)
"""One decoder for every line (json.loads with options would build one per call)."""


def read_object(text: str) -> tuple[dict | None, str | None, str | None]:
    """(object, None, None) for a line that is a bounded JSON object, else (None, reason code, why).

    Bounded: every integer within int64, every number finite once parsed, every string and key
    encodable as UTF-8 (a lone surrogate escape such as "\\ud800" is not). The reason names the field.
    """
    try:
        obj = _BOUNDED.decode(text)
    except _Unbounded:
        obj, problem = _marked(text)
        if problem is not None:
            return None, *problem
    except ValueError as exc:
        return None, INVALID_JSON, f"not JSON: {exc}"
    except RecursionError:
        return None, TOO_DEEP, "nested too deeply to be read"
    if not isinstance(obj, dict):
        return None, INVALID_JSON, f"a JSON {type(obj).__name__}, not an object"
    if "\\u" in text:  # a surrogate can only come from an escape: the line itself is UTF-8
        try:
            found = _find(obj, lambda v: isinstance(v, str) and not encodable(v))
        except RecursionError:
            return None, TOO_DEEP, "nested too deeply to be read"
        if found is not None:
            where = found[0]
            return None, LONE_SURROGATE, f"{where}: holds a lone surrogate escape, which is not text that can be written as UTF-8"
    return obj, None, None


_LONG = 10**18
"""An integer literal of 19 digits or more may lie beyond int64, which orjson reads (as an int up
to 2**64 - 1, as a float beyond) and `read_object` refuses; shorter ones cannot. A line holding a
number of that size, int or float, takes the slower path, to the same result."""


def _holds_long_int(container) -> bool:
    """Whether a parsed object or array holds a number of 19 integer digits or more, at any depth."""
    for v in container.values() if type(container) is dict else container:
        t = type(v)
        if t is int or t is float:
            if v >= _LONG or v <= -_LONG:
                return True
        elif (t is dict or t is list) and _holds_long_int(v):
            return True
    return False


DEEP = 512
"""Openings a line may hold and still be nested shallower than json's recursion limit, which
orjson's own limit (1024) exceeds; a line with more is read by `read_object`."""


def read_objects(texts) -> list[tuple[dict | None, str | None, str | None]]:
    """`read_object` of every line, the same results, most lines read by orjson.

    `texts` is a list of lines, or a file's `text` column as Arrow holds it (`utf8_lines`): those
    lines are read from their UTF-8 bytes as they lie in Arrow's buffer, with no Python string made
    per line (making one decodes the bytes, and orjson then encodes it back: a quarter of the time
    of reading persona's lines).

    orjson refuses everything json.loads does here (NaN, Infinity, 1e400, lone surrogate escapes,
    a BOM, trailing content) and reads duplicate keys as json does (last value, first place); it
    accepts, where `read_object` does not, integers up to 2**64 - 1 and deeper nesting, so lines that
    might hold either, and lines it refuses or that are not objects, are read by `read_object` for
    the exact reason.
    """
    if isinstance(texts, pa.LargeStringArray):
        return _read_utf8(texts)
    loads, slow, long_int = orjson.loads, read_object, _holds_long_int
    out = []
    with cycle_collection_paused():  # a dict and a tuple per line, no cycles
        for text in texts:
            if len(text) < DEEP or text.count("[") + text.count("{") < DEEP:
                try:
                    obj = loads(text)
                except ValueError:
                    obj = None
                if type(obj) is dict and not long_int(obj):
                    out.append((obj, None, None))
                    continue
            out.append(slow(text))
    return out


def utf8_lines(texts: pd.Series) -> pa.LargeStringArray | None:
    """A `text` column made by `utf8_frame` (or a slice of one) as one Arrow array, without a copy;
    None for any other column (lines that arrived as Python strings)."""
    if texts.dtype != TEXT:
        return None
    chunks = texts.array.__arrow_array__()
    lines = chunks.chunk(0) if chunks.num_chunks == 1 else chunks.combine_chunks()
    return lines if lines.null_count == 0 else None


def _read_utf8(lines: pa.LargeStringArray) -> list[tuple[dict | None, str | None, str | None]]:
    """`read_objects` of lines held by Arrow (valid UTF-8, no nulls), each handed to orjson as a
    view of its bytes. A line of fewer than `DEEP` bytes has fewer than `DEEP` openings; only longer
    ones are counted (a bracket is one byte in UTF-8, and no other character holds that byte)."""
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)[lines.offset:lines.offset + len(lines) + 1]
    data = memoryview(lines.buffers()[2])
    starts, ends = offsets[:-1].tolist(), offsets[1:].tolist()
    read = list(zip(starts, ends))
    for i in np.flatnonzero(np.diff(offsets) >= DEEP).tolist():
        line = data[starts[i]:ends[i]].tobytes()
        if line.count(b"[") + line.count(b"{") >= DEEP:
            read[i] = (0, 0)  # nothing for orjson to read: the line goes to `read_object`
    loads, long_int = orjson.loads, _holds_long_int
    out = []
    with cycle_collection_paused():  # a dict and a tuple per line, no cycles
        for start, end in read:
            try:
                obj = loads(data[start:end])
            except ValueError:
                obj = None
            if type(obj) is dict and not long_int(obj):
                out.append((obj, None, None))
            else:
                out.append(None)
        for i in [i for i, got in enumerate(out) if got is None]:
            out[i] = read_object(str(data[starts[i]:ends[i]], "utf-8"))
    return out


class _Mark:
    def __init__(self, code: str, literal: str):
        self.code, self.literal = code, literal


def _marked(text: str) -> tuple[object, tuple[str, str] | None]:
    """A line holding an unbounded number, read again with markers in place of such numbers:
    (None, (reason code, why)) naming the field that holds one; or (the value, None) when no marker
    is left in it, every one having been replaced by a later value of the same key (the value as
    read holds no unbounded number, as orjson reads such a line)."""
    def as_int(s):
        try:
            return _int64(s)
        except _Unbounded:
            return _Mark(INTEGER_RANGE, s)

    def as_float(s):
        try:
            return _finite(s)
        except _Unbounded:
            return _Mark(NON_FINITE, s)

    try:
        obj = json.loads(text, parse_constant=_reject_constant, parse_int=as_int, parse_float=as_float)
        found = _find(obj, lambda v: isinstance(v, _Mark))
    except ValueError as exc:  # the number came first, the line is not JSON further on
        return None, (INVALID_JSON, f"not JSON: {exc}")
    except RecursionError:
        return None, (TOO_DEEP, "nested too deeply to be read")
    if found is None:
        return obj, None
    where, mark = found
    literal = mark.literal if len(mark.literal) <= 40 else f"{mark.literal[:20]}…({len(mark.literal)} characters)"
    if mark.code == INTEGER_RANGE:
        return None, (INTEGER_RANGE, f"{where}: {literal} is outside the 64-bit integer range")
    return None, (NON_FINITE, f"{where}: {literal} is not a finite number once read")


def encodable(text: str) -> bool:
    """Whether text can be written as UTF-8 (a lone surrogate cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _find(value, bad, path: str = ""):
    """(dotted path, value) of the first value or key where `bad` holds, the path written as the schema
    check names fields (keys that are not UTF-8 escaped); None when there is none."""
    if bad(value):
        return path or "(row)", value
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        here = f"{path}.{_printable(key)}" if path else _printable(key)
        if isinstance(key, str) and bad(key):
            return here, key
        found = _find(item, bad, here)
        if found is not None:
            return found
    return None


def _printable(key) -> str:
    return str(key).encode("utf-8", "backslashreplace").decode("utf-8")


def parse_object(text: str) -> dict | None:
    """A line as a bounded JSON object; None for anything else (NaN and Infinity are not JSON)."""
    return read_object(text)[0]


def parse_line(text: str) -> tuple[dict | None, str | None]:
    """(object, None) for a bounded JSON object line, else (None, why not)."""
    obj, _, why = read_object(text)
    return obj, why


def lenient_get(text: str, field: str):
    """A field of a line that is not strict JSON (for naming the row in quarantine)."""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return obj.get(field) if isinstance(obj, dict) else None
