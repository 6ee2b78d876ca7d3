"""A raw dataset file read a block of lines at a time: `jsonl.read_raw`'s rows, in order, without
the whole file in memory at once.

A block ends at a line break, so no line is cut, and its lines keep their numbers in the file.
What `read_raw` decides over the whole file is decided over the blocks the same way: a block that
is not UTF-8 has its lines decoded one by one (the others stay in Arrow), the file is refused as
another encoding when no line with non-ASCII bytes anywhere in it is UTF-8, and a required column
missing from every JSON object refuses the file; those two refusals come once the last block is
read, so a caller writing the rows in one transaction writes none of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
import pandas as pd

from rules.common.jsonl import DatasetError, _decoded_lines, raw_frame, utf8_frame

BLOCK_BYTES = 32 << 20
"""Bytes read at once (about 10⁵ chat lines): the text of one block, never of the file, is held."""
BOM = b"\xef\xbb\xbf"


class RequiredColumns:
    """Whether every required column appears in at least one JSON object of a file, seen a block
    at a time (reading stops once all have been seen)."""

    def __init__(self, dataset: str, file: str, required: tuple[str, ...]):
        self.dataset, self.file, self.required = dataset, file, required
        self.seen: set[str] = set()
        self.objects = 0
        self.lines = 0
        self.done = not required

    def see(self, raw: pd.DataFrame) -> None:
        self.lines += len(raw)
        if self.done:
            return
        for text in raw["text"]:
            try:
                obj = json.loads(text)
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict):
                self.objects += 1
                self.seen.update(obj)
                if self.seen.issuperset(self.required):
                    self.done = True
                    return

    def finish(self) -> None:
        if self.done or self.lines == 0:
            return
        if self.objects == 0:
            raise DatasetError(self.dataset, self.file, "no line is a JSON object; is this a JSON Lines file?")
        missing = [c for c in self.required if c not in self.seen]
        raise DatasetError(self.dataset, self.file, "required column is missing from every row", column=missing[0])


def read_raw_chunks(path: str | Path, dataset: str, required: Iterable[str] = (),
                    block_bytes: int | None = None) -> Iterator[pd.DataFrame]:
    """`read_raw(path, dataset, required)`'s rows, a block of lines at a time (frames in its columns,
    `line` numbering the file's lines)."""
    path = Path(path)
    name = str(path)
    if path.is_dir():
        raise DatasetError(dataset, name, "is a directory, not a JSON Lines file")
    if not path.exists():
        raise DatasetError(dataset, name, "file not found")
    block_bytes = block_bytes or BLOCK_BYTES
    columns = RequiredColumns(dataset, name, tuple(required))
    broken: tuple[int, str] | None = None  # the file's first line that is not UTF-8
    foreign_ok = False  # a line holding non-ASCII bytes that is UTF-8
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise DatasetError(dataset, name, f"cannot be read ({exc.strerror or exc})") from exc
    with fh:
        carry, first_line, start = b"", 1, True
        while True:
            try:
                data = fh.read(block_bytes)
            except OSError as exc:
                raise DatasetError(dataset, name, f"cannot be read ({exc.strerror or exc})") from exc
            if start:
                data, start = (data[3:] if data[:3] == BOM else data), False
            buf = carry + data
            if data:
                cut = buf.rfind(b"\n")
                if cut < 0:
                    carry = buf
                    continue
                block, carry = buf[:cut + 1], buf[cut + 1:]
            else:
                block, carry = buf, b""
            if block:
                array = np.frombuffer(bytearray(block), dtype=np.uint8)  # writable: `utf8_frame` moves the lines inside it
                nonascii = bool((array >= 0x80).any())
                raw = utf8_frame(dataset, name, array)
                if raw is None:
                    lines = [(first_line + i - 1, text, why) for i, text, why in _decoded_lines(block)]
                    broken = broken or next(((i, why) for i, _, why in lines if why), None)
                    foreign_ok = foreign_ok or any(not why and not t.isascii() for _, t, why in lines)
                    raw = raw_frame(dataset, name, lines)
                else:
                    foreign_ok = foreign_ok or nonascii
                    raw["line"] += first_line - 1
                first_line += block.count(b"\n")
                columns.see(raw)
                if len(raw):
                    yield raw
            if not data:
                break
    if broken is not None and not foreign_ok:  # another encoding, not a few damaged lines
        raise DatasetError(dataset, name, f"not UTF-8 text ({broken[1]} on line {broken[0]})")
    columns.finish()
