"""Assigning raw lines of a flat dataset file to daily partitions.

A line belongs to the day (in the configured timezone) of its time field. A line whose time
cannot be read (broken JSON, a bad timestamp) goes with the line before it in the file, since
logs are appended in time order; lines before the first readable one go with that one. Every
line thus lands in exactly one partition, where the gates quarantine it with its reason.
"""

from __future__ import annotations

import json

import numpy as np
import orjson
import pandas as pd

from rules.common import timestamps
from rules.common.arrow_json import field_texts
from rules.common.bounded_json import utf8_lines
from rules.common.jsonl import DatasetError

NS_PER_DAY = 86_400 * timestamps.NS_PER_SEC


def line_days(raw: pd.DataFrame, time_field: str, tz: str) -> pd.Series:
    """ISO day (YYYY-MM-DD) of every raw line, index aligned with `raw`.

    The time values are found by Arrow's JSON reader (`time_values`), read column-wise
    (`timestamps.read_column`), and the instants are turned into local days by pandas' time-zone
    conversion, all at once; each distinct day is formatted once."""
    values = time_values(raw["text"], time_field)
    read = timestamps.read_column(values, tz)
    days = np.full(len(values), None, dtype=object)
    if read.ok.any():
        at = np.flatnonzero(read.ok)
        days[at] = iso_days(read.ns[at], tz)
    s = pd.Series(days, index=raw.index, dtype=object)
    if len(s) and s.isna().all():
        file = raw["file"].iloc[0]
        raise DatasetError(raw["dataset"].iloc[0], file, "no line has a readable timestamp to assign days", column=time_field)
    return s.ffill().bfill()


def iso_days(ns: np.ndarray, tz: str) -> np.ndarray:
    """`timestamps.local_day(n, tz).isoformat()` of every instant (epoch nanoseconds), as an object
    array: pandas' time-zone conversion of them all at once, each distinct day formatted once."""
    wall = pd.DatetimeIndex(np.asarray(ns, dtype=np.int64), tz="UTC").tz_convert(timestamps.zone(tz)).tz_localize(None).asi8
    number, where = np.unique(wall // NS_PER_DAY, return_inverse=True)
    names = np.array([timestamps.local_day(int(n) * NS_PER_DAY, "UTC").isoformat() for n in number], dtype=object)
    return names[where.ravel()] if len(names) else np.empty(0, dtype=object)


CHUNK = 50_000
"""Lines handed to Arrow's reader at once (each chunk is copied once, joined by newlines)."""

PARTS = 32
"""A chunk the reader declines is tried again in this many parts; the parts it declines too are read
line by line. A few bad lines in a file cost a few parts; a file of bad lines, two tries."""


def time_values(texts: pd.Series, name: str) -> list:
    """Each line's top-level `name` where it is text (None where absent or null, as `_field`
    reads it; any other value where `_field` reads one), for a file's `text` column.

    Lines held by Arrow (`jsonl.utf8_lines`) are read by Arrow's JSON reader a chunk at a time, no
    dict per line (`arrow_json.field_texts`); the lines of a chunk or part it declines, and lines
    held as Python strings, are read one by one by `_field`. 10⁶ persona turns: 3.3 s one by one."""
    lines = utf8_lines(texts)
    if lines is None:
        return [_field(text, name) for text in texts.tolist()]
    out: list = []
    for start in range(0, len(lines), CHUNK):
        chunk = lines.slice(start, CHUNK)
        found = field_texts(chunk, name)
        if found is None:
            step = -(-len(chunk) // PARTS)
            for at in range(0, len(chunk), step):
                part = chunk.slice(at, step)
                found = field_texts(part, name)
                out += found.tolist() if found is not None else [_field(text, name) for text in part.to_pylist()]
        else:
            out += found.tolist()
    return out


def _field(text: str, name: str):
    """The value of `name` in a line's JSON object, as json.loads reads it; None when the line is
    not an object (or not JSON). Only a string can be a time, and orjson and json.loads read
    every string alike."""
    try:
        obj = orjson.loads(text)
    except orjson.JSONDecodeError:
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            return None
    return obj.get(name) if type(obj) is dict else None


class DaySplit:
    """`line_days` over a file read in blocks (`raw_chunks`): a line whose time cannot be read takes
    the day of the line before it, across blocks; lines before the file's first readable time take
    that time's day (they wait, in memory, until it comes). `lines_of(raw, day)` gives a block's
    lines of one day; `finish()` refuses a file none of whose lines has a readable time, as
    `line_days` does."""

    def __init__(self, time_field: str, tz: str):
        self.time_field, self.tz = time_field, tz
        self.last: str | None = None
        self.waiting: list[pd.DataFrame] = []
        self.first: pd.DataFrame | None = None

    def lines_of(self, raw: pd.DataFrame, day: str) -> pd.DataFrame:
        if self.first is None and len(raw):
            self.first = raw.iloc[:1]
        values = time_values(raw["text"], self.time_field)
        read = timestamps.read_column(values, self.tz)
        days = np.full(len(values), None, dtype=object)
        if read.ok.any():
            at = np.flatnonzero(read.ok)
            days[at] = iso_days(read.ns[at], self.tz)
        s = pd.Series(days, index=raw.index, dtype=object)
        if self.last is None:
            if s.isna().all():
                self.waiting.append(raw)
                return raw.iloc[:0]
            s = s.ffill().bfill()  # as `line_days`: the lines before the first readable time take its day
        else:
            s = s.ffill().fillna(self.last)
        self.last = s.iloc[-1]
        kept = raw[s.to_numpy() == day]
        if self.waiting:  # the lines before the first readable time join that time's day
            lead = pd.concat(self.waiting, ignore_index=True) if s.iloc[0] == day else raw.iloc[:0]
            self.waiting = []
            kept = pd.concat([lead, kept], ignore_index=True) if len(lead) else kept
        return kept.reset_index(drop=True)

    def finish(self) -> None:
        if self.last is None and self.first is not None:
            raise DatasetError(self.first["dataset"].iloc[0], self.first["file"].iloc[0],
                               "no line has a readable timestamp to assign days", column=self.time_field)
