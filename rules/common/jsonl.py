"""Reading raw dataset files: JSON Lines, one row per non-blank line."""

from __future__ import annotations

import json
import marshal
import math
import os
from itertools import islice
from pathlib import Path
from typing import Iterable

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa

from rules.common.atomic import atomic_open
from schemas import required_columns

RAW_COLUMNS = ["dataset", "file", "line", "text", "not_utf8"]
"""`not_utf8`: why the line's bytes are not UTF-8 (its `text` then shows them escaped), else None."""


class DatasetError(Exception):
    """A dataset file that cannot be read at all, or lacks a required column.

    The whole file is rejected; the message names the file and, when it applies, the column.
    """

    def __init__(self, dataset: str, file: str, message: str, column: str | None = None):
        self.dataset, self.file, self.column, self.reason = dataset, file, column, message
        where = f"{file}" + (f", column '{column}'" if column else "")
        super().__init__(f"{dataset}: {where}: {message}")


from rules.common.bounded_json import _LONG, NOT_UTF8, TEXT, _holds_long_int, parse_object


def dataset_path(input_dir: str | Path, dataset: str) -> Path:
    return Path(input_dir) / f"{dataset}.jsonl"


def read_raw(path: str | Path, dataset: str, required: Iterable[str] = ()) -> pd.DataFrame:
    """Every non-blank line of a JSON Lines file, untouched, with its 1-based line number.

    Lines are decoded one by one: a line that is not UTF-8 keeps its place, with its bytes
    shown escaped in `text` and `not_utf8` saying why, for the gates to quarantine; the rest of
    the file is read. Raises DatasetError when the path is missing, a directory or unreadable,
    when no line with non-ASCII bytes is UTF-8 (another encoding), or when a required
    column appears in none of its JSON objects (a wrong file rather than a few bad rows).
    """
    path = Path(path)
    name = str(path)
    if path.is_dir():
        raise DatasetError(dataset, name, "is a directory, not a JSON Lines file")
    if not path.exists():
        raise DatasetError(dataset, name, "file not found")
    try:
        data = _file_bytes(path)
    except OSError as exc:
        raise DatasetError(dataset, name, f"cannot be read ({exc.strerror or exc})") from exc
    if data[:3].tobytes() == b"\xef\xbb\xbf":
        data = data[3:]
    raw = utf8_frame(dataset, name, data)  # the lines' text kept in `data`'s own memory
    if raw is None:  # some line is not UTF-8: decoded one by one, the broken ones kept for quarantine
        lines = _decoded_lines(data.tobytes())
        if not any(not why and not t.isascii() for _, t, why in lines):  # another encoding, not a few damaged lines
            i, _, why = next(line for line in lines if line[2])
            raise DatasetError(dataset, name, f"not UTF-8 text ({why} on line {i})") from None
        raw = raw_frame(dataset, name, lines)
    _require_columns(raw, dataset, name, tuple(required))
    return raw


def raw_frame(dataset: str, file: str, lines: Iterable[tuple[int, str, str | None]]) -> pd.DataFrame:
    """Raw lines in the shape every gate reads, from (line number, text, why it is not UTF-8 or None):
    a file's lines, or text that arrived another way (a socket frame), gated the same."""
    lines = list(lines)
    numbers, texts, broken = zip(*lines) if lines else ((), (), ())
    return pd.DataFrame(
        {
            "dataset": dataset,
            "file": file,
            "line": pd.array(list(numbers), dtype="int64"),
            "text": pd.Series(list(texts), dtype=object),
            NOT_UTF8: pd.Series(list(broken), dtype=object),
        },
        columns=RAW_COLUMNS,
    )




def _file_bytes(path: Path) -> np.ndarray:
    """A file's bytes in a writable array, for `utf8_frame` to take its lines' text out in place."""
    with path.open("rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        buf = np.empty(size, dtype=np.uint8)
        got = fh.readinto(memoryview(buf)) if size else 0
        rest = fh.read()  # a file that grew since it was measured
    return np.concatenate((buf[:got], np.frombuffer(rest, dtype=np.uint8))) if rest or got < size else buf


def utf8_frame(dataset: str, file: str, data: bytes | np.ndarray) -> pd.DataFrame | None:
    """`raw_frame` of a file's bytes when they are UTF-8 text, else None; the same lines, found
    column-wise: only \\n ends a JSON line (str.splitlines would also break at U+2028 and U+0085,
    which may sit unescaped inside a JSON string), one \\r before it is dropped, blank lines
    (whitespace alone, as `str.strip` sees it) are skipped.

    `data` given as a writable byte array becomes the text column's buffer: the lines are moved
    together inside it (a file-sized copy is slow to come by: every page of fresh memory is a
    fault), so it no longer holds the file once a frame is returned. Other bytes are copied first.
    When None is returned, `data` is as it was."""
    buf = data if isinstance(data, np.ndarray) and data.flags.writeable else np.frombuffer(data, dtype=np.uint8).copy()
    # Only ASCII bytes (\n, \r, blank lines) stand between the lines, and no UTF-8 sequence holds
    # one: the whole file is UTF-8 exactly when every line is. Checked before anything is moved.
    whole = pa.LargeStringArray.from_buffers(1, pa.py_buffer(np.array([0, len(buf)], dtype=np.int64)), pa.py_buffer(buf))
    try:
        whole.validate(full=True)  # UTF-8, as Python's decoder checks it
    except pa.ArrowInvalid:
        return None
    breaks = _positions(buf, 0x0A)
    starts = np.concatenate(([0], breaks + 1))
    ends = np.concatenate((breaks, [len(buf)]))
    cr = (ends > starts) & (buf[np.maximum(ends - 1, 0)] == 0x0D) if len(buf) else np.zeros(1, dtype=bool)
    ends -= cr
    first = buf[np.minimum(starts, max(len(buf) - 1, 0))] if len(buf) else np.zeros(len(starts), dtype=np.uint8)
    # A line opening with a visible ASCII character is not blank; any other is read as Python reads it.
    unsure = np.flatnonzero((ends <= starts) | (first <= 0x20) | (first >= 0x7F))
    blank = [i for i in unsure if not buf[starts[i]:ends[i]].tobytes().decode("utf-8").strip()]
    keep = np.ones(len(starts), dtype=bool)
    keep[blank] = False
    # When only the breaks, each with the \r dropped before it, stand between kept lines (no blank
    # line holds a space), bytes.replace takes them out in C a piece at a time, without the general
    # case's index arrays as long as the file. A \r ending the file is left past the last line's end.
    only_breaks = not (ends[blank] > starts[blank]).any()
    starts, ends, numbers = starts[keep], ends[keep], np.flatnonzero(keep) + 1
    offsets = np.zeros(len(starts) + 1, dtype=np.int64)
    np.cumsum(ends - starts, out=offsets[1:])
    body = _without_breaks(buf, breaks, bool(cr.any())) if only_breaks else _kept_bytes(buf, starts, ends)
    text = pa.LargeStringArray.from_buffers(len(starts), pa.py_buffer(offsets), pa.py_buffer(body))
    return pd.DataFrame(
        {
            "dataset": dataset,
            "file": file,
            "line": pd.array(numbers, dtype="int64"),
            "text": pd.Series(pd.arrays.ArrowExtensionArray(text), dtype=TEXT),
            NOT_UTF8: pd.Series([None] * len(starts), dtype=object),
        },
        columns=RAW_COLUMNS,
    )


_SCAN = 1 << 22
"""Bytes compared at once when looking for one: a file-sized array of booleans would cost a page
fault per 4 KiB on first touch, more than the comparison itself."""


def _positions(buf: np.ndarray, byte: int) -> np.ndarray:
    """Where `byte` stands in `buf`, found a slice at a time in one reused array."""
    hit = np.empty(min(len(buf), _SCAN), dtype=bool)
    found = [np.flatnonzero(np.equal(buf[at:at + _SCAN], byte, out=hit[:min(_SCAN, len(buf) - at)])) + at
             for at in range(0, len(buf), _SCAN)]
    return np.concatenate(found) if found else np.zeros(0, dtype=np.intp)


def _without_breaks(buf: np.ndarray, breaks: np.ndarray, cr: bool) -> np.ndarray:
    """`buf`'s bytes less every \\n (at `breaks`) and, when `cr`, each \\r just before one, moved
    together at the front of `buf`: a piece of about `_SCAN` bytes ending at a break at a time, taken
    out by bytes.replace (a \\r\\n never spans two pieces) and written back over what was read."""
    last = np.searchsorted(breaks, np.arange(_SCAN, len(buf), _SCAN)) - 1  # the last break before each multiple
    ends = np.unique(np.append(breaks[last[last >= 0]] + 1, len(buf)))
    start = kept = 0
    for end in ends.tolist():
        if end == start:  # an empty file
            continue
        piece = buf[start:end].tobytes()
        piece = (piece.replace(b"\r\n", b"\n") if cr else piece).replace(b"\n", b"")
        buf[kept:kept + len(piece)] = np.frombuffer(piece, dtype=np.uint8)
        start, kept = end, kept + len(piece)
    return buf[:kept]


def _kept_bytes(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The bytes of the kept lines (`starts` to `ends`, in order) in one copy: the bytes between
    them (breaks, a \\r before one, blank lines) taken out."""
    gap_from = np.concatenate(([0], ends))
    gap_to = np.concatenate((starts, [len(buf)]))
    gaps = gap_to - gap_from
    dropped = np.repeat(gap_from - np.concatenate(([0], np.cumsum(gaps)[:-1])), gaps) + np.arange(gaps.sum())
    return np.delete(buf, dropped)


def _decoded_lines(data: bytes) -> list[tuple[int, str, str | None]]:
    """(line number, text, why it is not UTF-8 or None) of every non-blank line, decoded one by one."""
    out = []
    for i, chunk in enumerate(data.split(b"\n"), start=1):
        try:
            text, why = chunk.decode("utf-8"), None
        except UnicodeDecodeError as exc:
            text, why = chunk.decode("utf-8", "backslashreplace"), f"{exc.reason} at byte {exc.start}"
        text = text.removesuffix("\r")
        if text.strip():
            out.append((i, text, why))
    return out


def read_input_dir(input_dir: str | Path, domain: str, datasets: Iterable[str]) -> dict[str, pd.DataFrame]:
    """Raw lines of each of a domain's datasets in a directory (DatasetError names a bad file)."""
    return {name: read_raw(dataset_path(input_dir, name), name, required_columns(domain, name)) for name in datasets}


def _require_columns(raw: pd.DataFrame, dataset: str, name: str, required: tuple[str, ...]) -> None:
    if raw.empty or not required:
        return
    seen: set[str] = set()
    objects = 0
    for text in raw["text"]:
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict):
            objects += 1
            seen.update(obj)
            if seen.issuperset(required):
                return
    if objects == 0:
        raise DatasetError(dataset, name, "no line is a JSON object; is this a JSON Lines file?")
    missing = [c for c in required if c not in seen]
    raise DatasetError(dataset, name, "required column is missing from every row", column=missing[0])


def compact(value) -> str:
    """`value` as compact JSON text (no spaces, UTF-8 characters as they are): orjson's, several
    times faster than json.dumps; json.dumps where orjson refuses (integers past 64 bits,
    non-string keys). For text read back by a JSON parser, not for files whose bytes are fixed."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def compact_texts(values: list) -> list:
    """`compact` of every value, None kept as None, NaN and ±Infinity written as `json.dumps` writes
    them (NaN, Infinity) rather than as orjson's null: a batch the screen (`may_hold_non_finite`)
    cannot clear is written by the stdlib encoder. For a whole column of JSON values (the warehouse's
    verdict evidence), which json.dumps took 4% of a nightly run to write."""
    out = []
    for start in range(0, len(values), WRITE_BATCH):
        batch = values[start:start + WRITE_BATCH]
        encode = _LENIENT.encode if may_hold_non_finite(batch) else compact
        out += [None if v is None else encode(v) for v in batch]
    return out


_LENIENT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""json.dumps' compact form, NaN and ±Infinity written as NaN and Infinity."""


def parse_json(text: str):
    """JSON text as `json.loads` reads it (the same values, of the same kinds), most of it read by
    orjson. orjson refuses what json.loads reads leniently (NaN, Infinity, numbers past the float
    range, lone surrogate escapes) and reads integers past 64 bits as floats: text that holds, or
    may hold, any of those is read by json.loads."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
    kind = type(value)
    if ((kind is dict or kind is list) and _holds_long_int(value)) or ((kind is int or kind is float) and not -_LONG < value < _LONG):
        return json.loads(text)
    return value


def write_jsonl(path: str | Path, rows: Iterable[dict]) -> int:
    """Write rows as UTF-8 JSON Lines, compact (no space after `,` and `:`), Korean kept readable,
    atomically; returns the count. Each line reads back (`json.loads`) as its row.

    Strict JSON only: a non-finite number or text that is not UTF-8 fails the write and leaves
    any previous file at `path` untouched. Lines are made by orjson (the stdlib encoder took 4.2 s
    of live_pick's 10⁵ verdict rows, orjson 0.4 s); what orjson refuses — integers past 64 bits,
    keys that are not text — is written by the stdlib encoder in the same compact form.
    """
    n = 0
    dumps = orjson.dumps
    with atomic_open(path, encoding=None) as fh:
        rows = iter(rows)
        while batch := list(islice(rows, WRITE_BATCH)):
            if may_hold_non_finite(batch):  # orjson would write NaN and ±Infinity as null
                refuse_non_finite(batch)
            try:
                lines = list(map(dumps, batch))
            except orjson.JSONEncodeError:
                lines = [encoded_row(row) for row in batch]
            lines.append(b"")
            fh.write(b"\n".join(lines))
            n += len(batch)
    return n


def encoded_row(row: dict) -> bytes:
    try:
        return orjson.dumps(row)
    except orjson.JSONEncodeError:
        return _COMPACT.encode(row).encode("utf-8")  # a lone surrogate raises UnicodeEncodeError here


_COMPACT = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
"""What orjson does not write: the same compact form, non-finite numbers refused."""

WRITE_BATCH = 4096
"""Lines joined into one write: fewer, larger writes."""

def may_hold_non_finite(batch: list) -> bool:
    """Whether a batch may hold NaN or ±Infinity at any depth, from its `marshal` bytes scanned
    with NumPy: a float there is the type byte `g` (0x67, or 0xe7 when flagged as referenced) and
    its eight IEEE bytes, least significant first; NaN and ±Infinity have every exponent bit set,
    so their last two bytes are 0xf0–0xff and then 0x7f or 0xff. Anything else that looks the same
    (a small negative integer beside a `g`, say), or a value `marshal` cannot write, only costs the
    exact walk of `refuse_non_finite`. live_pick's 10⁵ verdict rows: 0.6 s, against 1.4 s walked."""
    try:
        data = np.frombuffer(marshal.dumps(batch), dtype=np.uint8)
    except ValueError:
        return True
    ends = np.flatnonzero((data[8:] | 0x80) == 0xFF)  # a float's last byte could be at ends + 8
    return bool(((data[ends + 7] >= 0xF0) & ((data[ends] & 0x7F) == 0x67)).any())


def refuse_non_finite(value) -> None:
    """Raise ValueError, as `json.dumps(allow_nan=False)` does, when a float at any depth is NaN or ±Infinity."""
    level = [value]
    while level:
        deeper = []
        for v in level:
            kind = type(v)
            if kind is dict:
                deeper.extend(v.values())
            elif kind is list or kind is tuple:
                deeper.extend(v)
            elif isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"Out of range float values are not JSON compliant: {v!r}")
        level = deeper


def read_jsonl_objects(path: str | Path) -> list[dict | None]:
    """Objects of a JSON Lines file in order; None for a line that is not a bounded JSON object.

    A verdict file is written whole by a program: one that is not UTF-8 raises UnicodeDecodeError."""
    text = Path(path).read_bytes().decode("utf-8-sig")
    return [parse_object(line) for line in text.split("\n") if line.strip()]
