"""`line_days` reads its lines column-wise; held here to the row-by-row reading it replaced
(json.loads, then each line's timestamp and local day on its own) over nasty lines and zones
with daylight saving, half-hour and historical offsets."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rules.common import timestamps
from rules.common import days
from rules.common.days import line_days
from rules.common.bounded_json import encodable, utf8_lines
from rules.common.jsonl import DatasetError, utf8_frame

ZONES = ["Asia/Seoul", "UTC", "America/New_York", "Europe/London", "Asia/Kolkata", "Asia/Kathmandu",
         "Australia/Lord_Howe", "America/St_Johns", "Pacific/Chatham"]


def reference(raw: pd.DataFrame, time_field: str, tz: str) -> pd.Series:
    days = []
    for text in raw["text"].tolist():
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            obj = None
        stamp = timestamps.parse(obj.get(time_field), tz) if isinstance(obj, dict) else None
        days.append(timestamps.local_day(stamp.ns, tz).isoformat() if stamp else None)
    return pd.Series(days, index=raw.index, dtype=object).ffill().bfill()


instants = st.integers(timestamps.EARLIEST_NS // 10**9 - 86_400, timestamps.LATEST_NS // 10**9 + 86_400)
offsets = st.sampled_from(["", "Z", "z", "+09:00", "-05:00", "+05:45", "+00:00", "-03:30", "+14:00", "+0900"])
fractions = st.sampled_from(["", ".5", ".123456", ".123456789", ".1234567891"])


@st.composite
def stamp_texts(draw) -> object:
    seconds = draw(instants)
    wall = (pd.Timestamp("1970-01-01") + pd.Timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")
    kind = draw(st.sampled_from(["common", "common", "common", "spaced", "date", "junk", "number", "null"]))
    if kind == "common":
        return wall + draw(fractions) + draw(offsets)
    if kind == "spaced":
        return " " + wall.replace("T", " ") + draw(offsets) + " "
    if kind == "date":
        return wall[:10]
    if kind == "number":
        return seconds
    if kind == "null":
        return None
    return draw(st.sampled_from(["어제", "2026-02-30T10:00:00", "2026-13-01T00:00:00", "", "2026-09-08T24:00:00"]))


@st.composite
def lines(draw) -> str:
    kind = draw(st.sampled_from(["object", "object", "object", "object", "missing", "broken", "array", "nan", "dup"]))
    if kind == "broken":
        return draw(st.sampled_from(["{", "", "not json", '{"sent_at": "2026-09-08T00:00:00"']))
    if kind == "array":
        return json.dumps([draw(stamp_texts())])
    if kind == "missing":
        return json.dumps({"other": draw(stamp_texts())})
    if kind == "nan":  # json.loads reads NaN; orjson does not
        return '{"n": NaN, "sent_at": ' + json.dumps(draw(stamp_texts())) + "}"
    if kind == "dup":  # the last of a repeated key stands
        return '{"sent_at": "junk", "sent_at": ' + json.dumps(draw(stamp_texts())) + "}"
    return json.dumps({"msg_id": "M", "sent_at": draw(stamp_texts())}, ensure_ascii=draw(st.booleans()))


def _raw(texts: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"dataset": "live_chat", "file": "live_chat.jsonl", "line": range(1, len(texts) + 1), "text": texts})


@settings(max_examples=300, deadline=None)
@given(st.lists(lines(), min_size=1, max_size=40), st.sampled_from(ZONES))
def test_line_days_read_as_the_row_by_row_reference(texts, tz):
    raw = _raw(texts)
    expected = reference(raw, "sent_at", tz)
    if expected.isna().all():
        with pytest.raises(DatasetError):
            line_days(raw, "sent_at", tz)
        return
    pd.testing.assert_series_equal(line_days(raw, "sent_at", tz), expected)

def test_days_around_daylight_saving_and_midnight():
    texts = [json.dumps({"sent_at": t}) for t in (
        "2026-03-08T01:59:59", "2026-03-08T03:00:00",  # New York springs forward
        "2026-11-01T01:30:00", "2026-11-01T05:59:59Z", "2026-11-01T04:00:00Z",  # and falls back
        "2026-11-02T04:59:59Z", "2026-11-02T05:00:00Z",  # midnight EST
        "1850-06-01T12:00:00",  # before standard time: local mean time
    )]
    raw = _raw(texts)
    pd.testing.assert_series_equal(line_days(raw, "sent_at", "America/New_York"), reference(raw, "sent_at", "America/New_York"))
    assert list(line_days(raw, "sent_at", "America/New_York"))[5:7] == ["2026-11-01", "2026-11-02"]


@settings(max_examples=200, deadline=None)
@given(st.lists(lines(), min_size=1, max_size=40), st.sampled_from(ZONES), st.sampled_from([(50_000, 32), (4, 2), (3, 8)]))
def test_lines_held_by_arrow_are_read_as_the_row_by_row_reference(texts, tz, sizes):
    """A file's lines as `read_raw` holds them: their time field found by Arrow's reader, chunk by
    chunk, and the chunks and parts it declines read line by line."""
    texts = [t for t in texts if t.strip() and "\n" not in t]  # a file's lines: blank ones are skipped
    assume(texts and all(encodable(t) for t in texts))
    raw = utf8_frame("live_chat", "live_chat.jsonl", "\n".join(texts).encode())
    assert utf8_lines(raw["text"]) is not None
    expected = reference(raw, "sent_at", tz)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(days, "CHUNK", sizes[0])
        m.setattr(days, "PARTS", sizes[1])
        if expected.isna().all():
            with pytest.raises(DatasetError):
                line_days(raw, "sent_at", tz)
            return
        pd.testing.assert_series_equal(line_days(raw, "sent_at", tz), expected)


def test_a_file_of_clean_lines_is_read_by_arrow_and_a_bad_line_costs_one_part(monkeypatch):
    texts = [json.dumps({"sent_at": f"2026-09-0{1 + i % 3}T12:00:00"}) for i in range(40)]
    texts[17] = '{"sent_at": "2026-09-09T12:00:00", "n": NaN, "bad": "\\ud800"}'  # json.loads reads it, Arrow does not
    raw = utf8_frame("live_chat", "live_chat.jsonl", "\n".join(texts).encode())
    read_one_by_one = []
    monkeypatch.setattr(days, "_field", lambda text, name: read_one_by_one.append(text) or json.loads(text).get(name))
    monkeypatch.setattr(days, "CHUNK", 20)
    monkeypatch.setattr(days, "PARTS", 4)
    got = line_days(raw, "sent_at", "UTC")
    assert got.tolist() == [f"2026-09-0{1 + i % 3}" if i != 17 else "2026-09-09" for i in range(40)]
    assert read_one_by_one == texts[15:20]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-2_208_988_800, 7_258_118_400).map(lambda s: s * 1_000_000_000) |
                st.integers(-(2**62), 2**62).map(lambda n: n // 1000 * 1000), max_size=25),
       st.sampled_from(["Asia/Seoul", "UTC", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Kiritimati"]))
def test_iso_days_are_local_day_of_each_instant(instants, tz):
    """The column-wise days against `local_day` one instant at a time, across DST changes, odd offsets,
    and instants from 1900 to 2200 and to the ends of what nanoseconds reach."""
    want = [timestamps.local_day(n, tz).isoformat() for n in instants]
    assert days.iso_days(np.array(instants, dtype=np.int64), tz).tolist() == want
