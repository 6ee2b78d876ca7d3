"""ISO-8601 timestamps that keep the form they were written in.

A timestamp without an offset is local time in the configured timezone. Rules compare
absolute instants (epoch nanoseconds); outputs are printed back in the input's form, so a
naive input gives a naive output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

NS_PER_SEC = 1_000_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@lru_cache(maxsize=None)
def zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


@dataclass(frozen=True, slots=True)
class Stamp:
    """A parsed timestamp: the absolute instant and how to print a derived one."""

    ns: int
    """Epoch nanoseconds (UTC)."""
    form: str
    """"" for naive input, "Z", or an offset such as "+09:00"."""


EARLIEST = datetime(1830, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(2110, 1, 1, tzinfo=timezone.utc)
"""Instants the gates let through: [EARLIEST, LATEST). Both lie within ±2**62 ns of the epoch, so
the difference of any two of them, and every window or look-ahead added to one, fits in int64."""

BAD = "bad_timestamp"
OUT_OF_RANGE = "timestamp_out_of_range"
"""Reason codes of `problem`."""

EARLIEST_NS = (EARLIEST - _EPOCH) // timedelta(microseconds=1) * 1_000
LATEST_NS = (LATEST - _EPOCH) // timedelta(microseconds=1) * 1_000
_FRACTION = re.compile(r"(?<=\d\d:\d\d:\d\d)[.,](\d+)")


def wall_clock(ns: int, tz: str, seconds: bool = False) -> str:
    """An instant as people in `tz` read it on a wall clock: ``2026-09-08 21:05 KST`` (``21:05:07`` with seconds)."""
    return datetime.fromtimestamp(int(ns) / 1e9, tz=zone(tz)).strftime("%Y-%m-%d %H:%M:%S %Z" if seconds else "%Y-%m-%d %H:%M %Z")


def parse(text: object, tz: str) -> Stamp | None:
    """Parse an ISO-8601 string; None when it is not one or lies outside [EARLIEST, LATEST)."""
    stamp, _ = read(text, tz)
    return stamp


def problem(text: object, tz: str) -> tuple[str, str] | None:
    """(reason code, why) when `text` is not a timestamp the gates let through; None when it is."""
    return read(text, tz)[1]


def read(text: object, tz: str) -> tuple[Stamp | None, tuple[str, str] | None]:
    """(Stamp, None) for a timestamp the gates let through, else (None, (reason code, why))."""
    if not isinstance(text, str):
        return None, (BAD, "is not a string")
    s = text.strip()
    if len(s) < 10:
        return None, (BAD, "is not ISO-8601")
    if s.endswith("z"):
        s = s[:-1] + "Z"  # RFC 3339 allows either case; fromisoformat only the upper
    # fromisoformat keeps microseconds; nanoseconds are taken from the digits themselves.
    extra_ns = 0
    if "." in s or "," in s:
        fraction = _FRACTION.search(s)
        if fraction:
            digits = fraction.group(1)
            if len(digits) > 9:
                return None, (BAD, "has more than nine fraction digits (finer than a nanosecond)")
            extra_ns = int(digits.ljust(9, "0"))
            s = s[: fraction.start()] + s[fraction.end():]
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        return None, (BAD, "is not ISO-8601")
    if dt.tzinfo is None:
        form = ""
        dt = dt.replace(tzinfo=zone(tz))
    else:
        offset = dt.utcoffset()
        if offset.seconds % 60 or offset.microseconds:
            return None, (BAD, "has a UTC offset with seconds, which ISO-8601 does not write")
        form = "Z" if s.endswith("Z") else _offset_text(offset)
    try:
        delta = dt - _EPOCH
    except OverflowError:  # a wall time at the edge of datetime's range, shifted by its offset
        delta = None
    ns = None if delta is None else (delta.days * 86_400 + delta.seconds) * NS_PER_SEC + delta.microseconds * 1_000 + extra_ns
    if ns is None or not EARLIEST_NS <= ns < LATEST_NS:
        return None, (OUT_OF_RANGE, f"is outside {EARLIEST:%Y-%m-%d}..{LATEST:%Y-%m-%d} (UTC), the instants the rules represent")
    return Stamp(ns=ns, form=form), None


_COMMON = re.compile(r"(?:18[3-9]\d|19\d\d|20\d\d|210\d)-\d\d-\d\dT(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d"
                     r"(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)?", re.ASCII)
"""The forms nearly every line is written in: whole seconds, naive, `Z` or a `±HH:MM` offset, in
years the gates may let through. Only a date that does not exist stands between them and `read`."""


@dataclass(frozen=True)
class Column:
    """A column of values read as timestamps (`read_column`): where `ok`, the instant (`ns`) and
    its `form` (see `Stamp`); elsewhere `ns` is 0, the form None, and `problems` holds the value's
    (reason code, why), keyed by its position."""

    ns: np.ndarray
    ok: np.ndarray
    forms: np.ndarray
    """object: the form text, None where not ok"""
    problems: dict[int, tuple[str, str]]

    def stamps(self) -> list[tuple[Stamp | None, tuple[str, str] | None]]:
        """As `read` answers each value."""
        return [(Stamp(ns=n, form=f), None) if good else (None, self.problems[i])
                for i, (n, f, good) in enumerate(zip(self.ns.tolist(), self.forms.tolist(), self.ok.tolist()))]


def read_column(values: list, tz: str) -> Column:
    """`read` of every value, the same results, as arrays. The common forms are read column-wise:
    a regular expression picks them (`_common_forms`: Arrow's, over a column of text), NumPy parses
    their wall times at once, an offset is worked out once per distinct suffix and a naive time's once
    per hour of wall time (per value in an hour where the zone's offset changes); every other value
    goes to `read`."""
    n = len(values)
    ns = np.zeros(n, dtype=np.int64)
    ok = np.zeros(n, dtype=bool)
    forms = np.full(n, None, dtype=object)
    problems: dict[int, tuple[str, str]] = {}
    at, codes, suffixes = _common_forms(values)
    slow = np.setdiff1d(np.arange(n), at, assume_unique=True).tolist()
    if len(at):
        # the wall time, the first 19 characters; a day that does not exist (02-30) is read alone
        seconds, alone = wall_seconds(np.array([values[i] for i in at.tolist()], dtype="U19"))
        offset_of = [0 if x == "" or x == "Z" else (1 if x[0] == "+" else -1) * (int(x[1:3]) * 3600 + int(x[4:6]) * 60)
                     for x in suffixes]
        form_of = np.array([x if x in ("", "Z") else _offset_text(timedelta(seconds=o)) for x, o in zip(suffixes, offset_of)],
                           dtype=object)
        offsets = np.array(offset_of, dtype=np.int64)[codes]
        naive = np.array([x == "" for x in suffixes], dtype=bool)[codes] & ~alone
        if naive.any():
            hours = seconds[naive] // 3600
            known = {h: _hour_offset(h, tz) for h in np.unique(hours).tolist()}
            hour_offsets = np.array([known[h] for h in hours.tolist()], dtype=object)
            alone[naive] = hour_offsets == None  # noqa: E711 - elementwise: an hour in which the offset changes
            offsets[naive] = np.where(hour_offsets == None, 0, hour_offsets).astype(np.int64)  # noqa: E711
        stamped = (seconds - offsets) * NS_PER_SEC
        alone |= (stamped < EARLIEST_NS) | (stamped >= LATEST_NS)  # `read` words the range
        rows = at
        keep = ~alone
        ns[rows[keep]] = stamped[keep]
        ok[rows[keep]] = True
        forms[rows[keep]] = form_of[codes][keep]
        slow += rows[alone].tolist()
    for i in slow:
        stamp, problem = read(values[i], tz)
        if stamp is None:
            problems[i] = problem
        else:
            ns[i], ok[i], forms[i] = stamp.ns, True, stamp.form
    return Column(ns, ok, forms, problems)


def wall_seconds(walls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(seconds since 1970-01-01T00:00:00, whether the date does not exist) of wall times written
    "YYYY-MM-DDTHH:MM:SS" in ASCII digits (a `U19` array of what `_COMMON` matched), worked out
    in integers: the days from the civil calendar's formula (March-based years of 365 days, a leap
    day every 4 years but 100, but 400), exact; a date that does not exist (02-30, month 13) is
    0 seconds and flagged, for `read` to word."""
    digits = walls.view(np.uint32).reshape(len(walls), 19)

    def number(first: int, last: int) -> np.ndarray:
        out = np.zeros(len(walls), dtype=np.int64)
        for j in range(first, last):
            out = out * 10 + (digits[:, j].astype(np.int64) - 48)
        return out

    year, month, day = number(0, 4), number(5, 7), number(8, 10)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    last_day = _MONTH_DAYS[np.clip(month, 0, 12)] + (leap & (month == 2))
    missing = (month < 1) | (month > 12) | (day < 1) | (day > last_day)
    y = year - (month <= 2)
    era, of_era = y // 400, y % 400
    of_year = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    days = era * 146_097 + of_era * 365 + of_era // 4 - of_era // 100 + of_year - 719_468
    seconds = days * 86_400 + number(11, 13) * 3600 + number(14, 16) * 60 + number(17, 19)
    return np.where(missing, 0, seconds), missing


_MONTH_DAYS = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)
"""Days of each month (1-12) in a common year; 0 stands for no month."""


_COMMON_WHOLE = f"^(?:{_COMMON.pattern})$"
"""`_COMMON` for Arrow's regular expressions (RE2: `\\d` is an ASCII digit, `$` the end of the text)."""


def _common_forms(values: list) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Where `values` hold a common form (`_COMMON`): their positions, and each one's suffix after the
    wall time as a code into the distinct suffixes ("" for a naive time, "Z", or the offset). A column
    of text is matched by Arrow in C; any other (numbers, lists, mixed) one value at a time."""
    text = None
    if pd.api.types.infer_dtype(values, skipna=True) in ("string", "empty"):
        try:
            text = pa.array(values, type=pa.string())
        except (pa.ArrowException, UnicodeEncodeError):  # NaN, a lone surrogate: not text Arrow holds
            text = None
    if text is not None:
        hit = pc.fill_null(pc.match_substring_regex(text, _COMMON_WHOLE), False)
        at = np.flatnonzero(hit.to_numpy(zero_copy_only=False))
        tails = pc.utf8_slice_codeunits(text.take(at), 19).dictionary_encode()
        return at, tails.indices.to_numpy(zero_copy_only=False).astype(np.intp), tails.dictionary.to_pylist()
    match = _COMMON.fullmatch
    found = [match(v) if type(v) is str else None for v in values]
    at = np.array([i for i, m in enumerate(found) if m is not None], dtype=np.intp)
    codes, suffixes = pd.factorize(pd.Series([found[i].group(1) or "" for i in at.tolist()], dtype=object))
    return at, codes.astype(np.intp), [str(x) for x in suffixes]


def stored_column(values: list, tz: str) -> Column:
    """`read_column` of values the gates let through before they were stored (read back to be
    judged): raises ValueError naming the first that is no longer a timestamp."""
    column = read_column(values, tz)
    if not column.ok.all():
        i = int(np.flatnonzero(~column.ok)[0])
        raise ValueError(f"stored timestamp {values[i]!r} {column.problems[i][1]}")
    return column


def read_many(values: list, tz: str) -> list[tuple[Stamp | None, tuple[str, str] | None]]:
    """`read` of every value, the same results (`read_column`, as `read` answers)."""
    return read_column(values, tz).stamps()


def _hour_offset(hour: int, tz: str) -> int | None:
    """The UTC offset (seconds) of every wall time in that hour since the epoch, read as `read`
    reads a naive time; None when it is not the same at both ends of the hour."""
    start = datetime(1970, 1, 1) + timedelta(hours=hour)
    first = start.replace(tzinfo=zone(tz)).utcoffset()
    last = (start + timedelta(seconds=3599)).replace(tzinfo=zone(tz)).utcoffset()
    return int(first.total_seconds()) if first == last else None


def _offset_text(offset: timedelta | None) -> str:
    minutes = int((offset or timedelta()).total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    h, m = divmod(abs(minutes), 60)
    return f"{sign}{h:02d}:{m:02d}"


def to_datetime(ns: int, form: str, tz: str) -> datetime:
    """The wall-clock datetime of an instant in the given form (naive → configured timezone)."""
    utc = _EPOCH + timedelta(microseconds=ns // 1_000)
    if form == "":
        return utc.astimezone(zone(tz)).replace(tzinfo=None)
    if form == "Z":
        return utc
    sign = 1 if form[0] == "+" else -1
    hours, minutes = int(form[1:3]), int(form[4:6])
    return utc.astimezone(timezone(sign * timedelta(hours=hours, minutes=minutes)))


def format_ns(ns: int, form: str, tz: str) -> str:
    """Print an instant in the same form as the input it came from (whole seconds)."""
    dt = to_datetime(ns, form, tz)
    text = dt.replace(tzinfo=None).isoformat(timespec="seconds")
    return text + form if form else text


def local_day(ns: int, tz: str) -> date:
    """The calendar day of an instant in the configured timezone (daily partitions)."""
    return (_EPOCH + timedelta(microseconds=ns // 1_000)).astimezone(zone(tz)).date()


def floor_ns(ns: int, seconds: int) -> int:
    """Start of the tumbling window of the given length that holds the instant.

    Windows are aligned to the epoch; every real-world UTC offset is a whole number of
    minutes, so for windows that divide a minute they are aligned to the wall clock too.
    """
    step = seconds * NS_PER_SEC
    return ns - ns % step
