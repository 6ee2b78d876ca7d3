"""ISO-8601 timestamps that keep the form they were written in.

A timestamp without an offset is local time in the configured timezone. Rules compare
absolute instants (epoch nanoseconds); outputs are printed back in the input's form, so a
naive input gives a naive output.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache
from zoneinfo import ZoneInfo

NS_PER_SEC = 1_000_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@lru_cache(maxsize=None)
def zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


@dataclass(frozen=True)
class Stamp:
    """A parsed timestamp: the absolute instant and how to print a derived one."""

    ns: int
    """Epoch nanoseconds (UTC)."""
    form: str
    """"" for naive input, "Z", or an offset such as "+09:00"."""


def parse(text: object, tz: str) -> Stamp | None:
    """Parse an ISO-8601 string; None when it is not one."""
    if not isinstance(text, str):
        return None
    s = text.strip()
    if len(s) < 10:
        return None
    if s.endswith("z"):
        s = s[:-1] + "Z"  # RFC 3339 allows either case; fromisoformat only the upper
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        return None
    if dt.tzinfo is None:
        form = ""
        dt = dt.replace(tzinfo=zone(tz))
    elif s.endswith(("Z", "z")):
        form = "Z"
    else:
        form = _offset_text(dt.utcoffset())
    delta = dt - _EPOCH
    ns = (delta.days * 86_400 + delta.seconds) * NS_PER_SEC + delta.microseconds * 1_000
    return Stamp(ns=ns, form=form)


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
