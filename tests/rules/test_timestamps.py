"""ISO-8601 timestamps that keep their form (SPEC §2): naive means local time in the configured zone."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.common.timestamps import NS_PER_SEC, Stamp, floor_ns, format_ns, local_day, parse

SEOUL = "Asia/Seoul"
S = NS_PER_SEC


def epoch_ns(*args, tz=timezone.utc) -> int:
    """Exact epoch nanoseconds of a wall-clock time (integer arithmetic, no float rounding)."""
    dt = datetime(*args, tzinfo=ZoneInfo(tz) if isinstance(tz, str) else tz)
    delta = dt - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * S + delta.microseconds * 1_000


# 2026-09-08T21:14:03 in Seoul = 12:14:03 UTC
INSTANT = epoch_ns(2026, 9, 8, 12, 14, 3)


# -- parse -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "form"),
    [
        ("2026-09-08T21:14:03", ""),
        ("2026-09-08T21:14:03+09:00", "+09:00"),
        ("2026-09-08T12:14:03Z", "Z"),
        ("2026-09-08T12:14:03+00:00", "+00:00"),
        ("2026-09-08T07:14:03-05:00", "-05:00"),
        ("2026-09-08T17:44:03+05:30", "+05:30"),
        ("  2026-09-08T21:14:03 ", ""),
    ],
)
def test_parse_gives_the_instant_and_the_form(text, form):
    assert parse(text, SEOUL) == Stamp(ns=INSTANT, form=form)


def test_naive_is_local_time_in_the_given_zone():
    text = "2026-09-08T21:14:03"
    assert parse(text, "UTC").ns - parse(text, SEOUL).ns == 9 * 3600 * S
    assert parse(text, "UTC").ns == epoch_ns(2026, 9, 8, 21, 14, 3)


def test_an_offset_ignores_the_configured_zone():
    text = "2026-09-08T21:14:03+09:00"
    assert parse(text, "UTC") == parse(text, SEOUL) == parse(text, "America/New_York")


def test_fractional_seconds_are_exact():
    stamp = parse("2026-09-08T21:14:03.123456", SEOUL)
    assert stamp.ns == INSTANT + 123_456_000
    assert type(stamp.ns) is int
    assert parse("2026-09-08T21:14:03.5+09:00", SEOUL).ns == INSTANT + S // 2


@pytest.mark.parametrize(
    "text",
    ["", "   ", "어제 밤 11시쯤", "2026-09-31T10:00:00", "2026-09-08T25:00:00", "2026-13-01", "21:14:03", "2026-09",
     "2026/09/08 21:14:03", None, 1788869643, 1.5, ["2026-09-08T21:14:03"]],
)
def test_parse_rejects_what_is_not_an_iso_timestamp(text):
    assert parse(text, SEOUL) is None


def test_lowercase_z_is_utc():
    # RFC 3339 allows either case.
    stamp = parse("2026-09-08T12:14:03z", SEOUL)
    assert stamp == Stamp(ns=INSTANT, form="Z")
    assert format_ns(stamp.ns, stamp.form, SEOUL) == "2026-09-08T12:14:03Z"


# -- format_ns -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["2026-09-08T21:14:03", "2026-09-08T21:14:03+09:00", "2026-09-08T12:14:03Z", "2026-09-08T12:14:03+00:00",
     "2026-09-08T07:14:03-05:00", "2026-09-08T17:44:03+05:30", "1969-12-31T23:59:59Z"],
)
def test_format_keeps_the_input_form(text):
    stamp = parse(text, SEOUL)
    assert format_ns(stamp.ns, stamp.form, SEOUL) == text


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        ("", "2026-09-08T21:14:00"),
        ("+09:00", "2026-09-08T21:14:00+09:00"),
        ("Z", "2026-09-08T12:14:00Z"),
        ("+01:00", "2026-09-08T13:14:00+01:00"),
        ("-03:30", "2026-09-08T08:44:00-03:30"),
    ],
)
def test_format_prints_a_derived_instant_in_the_given_form(form, expected):
    window = epoch_ns(2026, 9, 8, 12, 14, 0)
    assert format_ns(window, form, SEOUL) == expected


def test_format_naive_uses_the_configured_zone():
    assert format_ns(INSTANT, "", "UTC") == "2026-09-08T12:14:03"
    assert format_ns(INSTANT, "", SEOUL) == "2026-09-08T21:14:03"


def test_format_truncates_to_whole_seconds():
    assert format_ns(INSTANT + 999_999_999, "", SEOUL) == "2026-09-08T21:14:03"
    assert format_ns(INSTANT + 999_000_000, "Z", SEOUL) == "2026-09-08T12:14:03Z"


# -- floor_ns ------------------------------------------------------------------------------------


def test_floor_30_second_windows():
    start = epoch_ns(2026, 9, 8, 12, 14, 0)
    assert floor_ns(start, 30) == start
    assert floor_ns(start + 29 * S + 999_999_999, 30) == start
    assert floor_ns(start + 30 * S, 30) == start + 30 * S
    assert floor_ns(start - 1, 30) == start - 30 * S


def test_floor_is_aligned_to_the_wall_clock_in_seoul_and_other_offsets():
    for text, window in [
        ("2026-09-08T21:14:29.999", "2026-09-08T21:14:00"),
        ("2026-09-08T21:14:30", "2026-09-08T21:14:30"),
        ("2026-09-08T17:44:45+05:30", "2026-09-08T17:44:30+05:30"),
        ("2026-09-08T18:00:15+05:45", "2026-09-08T18:00:00+05:45"),
        ("2026-09-08T00:00:59Z", "2026-09-08T00:00:30Z"),
    ]:
        stamp = parse(text, SEOUL)
        assert format_ns(floor_ns(stamp.ns, 30), stamp.form, SEOUL) == window, text


def test_floor_before_the_epoch_rounds_down():
    assert floor_ns(-1, 30) == -30 * S
    assert floor_ns(-30 * S, 30) == -30 * S


# -- local_day -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tz", "day"),
    [
        ("2026-09-08T14:59:59.999Z", SEOUL, date(2026, 9, 8)),
        ("2026-09-08T15:00:00Z", SEOUL, date(2026, 9, 9)),
        ("2026-09-08T23:59:59+00:00", SEOUL, date(2026, 9, 9)),
        ("2026-09-08T23:59:59", SEOUL, date(2026, 9, 8)),
        ("2026-09-09T00:00:00", SEOUL, date(2026, 9, 9)),
        ("2026-09-09T08:00:00+09:00", "UTC", date(2026, 9, 8)),
    ],
)
def test_local_day(text, tz, day):
    assert local_day(parse(text, SEOUL).ns, tz) == day


# -- properties ----------------------------------------------------------------------------------

FORMS = ["", "Z", "+09:00", "+00:00", "-05:00", "+05:45"]


@settings(max_examples=200, deadline=None)
@given(
    # From 1990: Seoul's 1987-88 daylight saving left wall-clock times that do not exist.
    st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2100, 1, 1)).map(lambda d: d.replace(microsecond=0)),
    st.sampled_from(FORMS),
    st.sampled_from([SEOUL, "UTC"]),
)
def test_whole_second_text_round_trips_in_its_own_form(wall, form, tz):
    text = wall.isoformat(timespec="seconds") + form
    stamp = parse(text, tz)
    assert stamp.form == form
    assert format_ns(stamp.ns, stamp.form, tz) == text


@settings(max_examples=200, deadline=None)
@given(st.integers(-10**18, 4 * 10**18), st.sampled_from([1, 30, 60, 3600]))
def test_floor_is_the_window_start(ns, seconds):
    start = floor_ns(ns, seconds)
    assert start <= ns < start + seconds * S
    assert start % (seconds * S) == 0


@settings(max_examples=200, deadline=None)
@given(st.integers(epoch_ns(1990, 1, 1), epoch_ns(2100, 1, 1)))
def test_local_day_is_the_utc_plus_9_day(ns):
    # Seoul has kept UTC+9 without daylight saving since 1989.
    assert local_day(ns, SEOUL) == date(1970, 1, 1) + timedelta(days=(ns // S + 9 * 3600) // 86_400)


# -- read_many: the column-wise reader against `read`, value by value -----------------------

from rules.common.timestamps import read, read_many  # noqa: E402

_ZONES = ("Asia/Seoul", "UTC", "America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kathmandu")
_EDGES = ["1829-12-31T23:59:59", "1830-01-01T00:00:00Z", "2109-12-31T23:59:59", "2109-12-31T23:59:59-01:00",
          "2026-02-29T00:00:00", "2024-02-29T12:00:00", "2026-04-31T00:00:00", "2026-10-04T09:14:05+24:00",
          "2026-10-04T24:00:00", "2026-10-04T09:60:00", "2026-10-04T09:14:60", "2026-10-04T09:14:05-00:00",
          "2026-10-04T09:14:05z", " 2026-10-04T09:14:05", "2026-10-04 09:14:05", "2026-10-04T09:14:05.5",
          "2026-03-08T02:30:00", "2026-11-01T01:30:00", "2026-03-29T01:30:00", "2026-10-25T01:30:00",
          "1908-04-01T00:10:00", "1954-03-21T00:10:00", "1987-05-10T02:30:00", "1988-10-09T02:30:00",
          "2026-10-04T09:14:05+09:30", "2026-10-04T09:14:05+0900", "0000-01-01T00:00:00", "2026-1-04T09:14:05",
          "２０２６-10-04T09:14:05", None, 5, "", "2026-10-04"]


def _stamp_text(draw_parts):
    y, mo, d, h, mi, s, suffix = draw_parts
    return f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}{suffix}"


_texts = st.tuples(
    st.integers(1820, 2115), st.integers(0, 13), st.integers(0, 32), st.integers(0, 24), st.integers(0, 60),
    st.integers(0, 60), st.sampled_from(["", "", "Z", "+09:00", "-05:00", "+05:45", "-00:00", "+14:00", "+23:59", "z"]),
).map(_stamp_text)


@pytest.mark.parametrize("tz", _ZONES)
def test_read_many_reads_edges_as_read(tz):
    assert read_many(_EDGES, tz) == [read(v, tz) for v in _EDGES]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_texts, st.sampled_from(_EDGES)), max_size=30), st.sampled_from(_ZONES))
def test_read_many_reads_as_read(values, tz):
    assert read_many(values, tz) == [read(v, tz) for v in values]


_TEXT_EDGES = [v for v in _EDGES if isinstance(v, str)] + [
    "2026-10-04T09:14:05\n", "2026-10-04T09:14:05Z\n", "\n2026-10-04T09:14:05", "2026-10-04T09:14:05\x00",
    "2026-10-04T09:14:05+09:00\x00", "2026-10-04T09:14:0５", "2026-10-04T09:14:05+09:00:00", "2026-10-04T09:14:05.123456789+09:00"]


@pytest.mark.parametrize("tz", _ZONES)
def test_a_column_of_text_is_matched_column_wise_as_read_reads_it(tz):
    """Text alone (and nulls) takes Arrow's matcher; a lone surrogate or a number sends the column to Python's."""
    for values in (_TEXT_EDGES, _TEXT_EDGES + [None], _TEXT_EDGES + ["\ud800"], _TEXT_EDGES + [float("nan")], [], [None]):
        assert read_many(values, tz) == [read(v, tz) for v in values]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_texts, st.sampled_from(_TEXT_EDGES), st.text(max_size=26)), max_size=30), st.sampled_from(_ZONES))
def test_read_many_reads_text_as_read(values, tz):
    assert read_many(values, tz) == [read(v, tz) for v in values]


# -- wall_seconds: the wall time of a common form, in integers ------------------------------

from rules.common.timestamps import wall_seconds  # noqa: E402


def test_wall_seconds_are_pythons_for_every_date_written_in_the_common_years():
    """Every month 00-13 and day 00-32 of each year the common forms admit (1830-2109): the seconds
    Python's calendar gives, and a date that does not exist flagged (02-29 outside leap years,
    1900 and 2100 included)."""
    texts, expected = [], []
    for year in range(1830, 2110):
        for month in range(0, 14):
            for day in range(0, 33):
                texts.append(f"{year:04d}-{month:02d}-{day:02d}T23:59:58")
                try:
                    expected.append(int((datetime(year, month, day, 23, 59, 58) - datetime(1970, 1, 1)).total_seconds()))
                except ValueError:
                    expected.append(None)
    seconds, missing = wall_seconds(np.array(texts, dtype="U19"))
    assert [None if m else s for s, m in zip(seconds.tolist(), missing.tolist())] == expected


@settings(max_examples=200, deadline=None)
@given(st.datetimes(min_value=datetime(1830, 1, 1), max_value=datetime(2109, 12, 31, 23, 59, 59)))
def test_wall_seconds_of_any_time_of_day(moment):
    text = moment.replace(microsecond=0).isoformat()
    seconds, missing = wall_seconds(np.array([text, text + "+09:00"], dtype="U19"))
    assert not missing.any() and seconds.tolist() == [(moment.replace(microsecond=0) - datetime(1970, 1, 1)) // timedelta(seconds=1)] * 2


def test_wall_seconds_of_nothing():
    seconds, missing = wall_seconds(np.array([], dtype="U19"))
    assert seconds.shape == missing.shape == (0,)


def test_stored_values_are_read_column_wise_as_one_by_one_and_a_broken_one_is_named():
    from rules.common import timestamps

    values = ["2026-09-08T10:00:00", "2026-09-08T10:00:00.5+09:00", "2026-03-08T02:30:00", " 2026-09-08 01:00:00Z ",
              "2026-02-28T23:59:59-05:00", "1850-06-01T12:00:00"]
    for tz in ("Asia/Seoul", "America/New_York", "UTC"):
        column = timestamps.stored_column(values, tz)
        assert column.ns.tolist() == [timestamps.parse(v, tz).ns for v in values]
        assert column.forms.tolist() == [timestamps.parse(v, tz).form for v in values]
    with pytest.raises(ValueError, match="stored timestamp '2026-02-30T00:00:00' is not ISO-8601"):
        timestamps.stored_column([values[0], "2026-02-30T00:00:00", None], "UTC")
    assert timestamps.stored_column([], "UTC").ns.tolist() == []
