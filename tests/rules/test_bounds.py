"""The line-level bounds of the gates: one JSON object per line, every value representable."""

from __future__ import annotations

import sys
import unicodedata

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.common.cells import PADDING, int_or_none, row_by_row, trim, trim_column
from rules.common.bounded_json import read_object, read_objects


def test_padding_is_every_unicode_whitespace_and_format_character():
    derived = {chr(c) for c in range(sys.maxunicode + 1)
               if chr(c).isspace() or unicodedata.category(chr(c)) in ("Zs", "Cf")}
    assert set(PADDING) == derived
    assert trim("\u200b\ufeff CH-001\u200d\u3000\t") == "CH-001"
    assert trim("CH\u200b001") == "CH\u200b001", "only the ends are trimmed"


@pytest.mark.parametrize(("line", "code", "where"), [
    ('{"a": 1e400}', "non_finite_number", "a"),
    ('{"a": {"b": [1, -1e999]}}', "non_finite_number", "a.b.1"),
    ('{"a": 9223372036854775808}', "integer_out_of_range", "a"),
    ('{"a": -9223372036854775809}', "integer_out_of_range", "a"),
    ('{"a": ' + "7" * 5000 + "}", "integer_out_of_range", "a"),
    ('{"a": "x\\ud800"}', "lone_surrogate", "a"),
    ('{"\\udc00": 1}', "lone_surrogate", "\\udc00"),
    ('{"a": NaN}', "invalid_json", None),
    ('{"a": 1e400, "b": NaN}', "invalid_json", None),
    ('{"a": 99999999999999999999} and more', "invalid_json", None),
    ("[" * 100_000 + "1e400" + "]" * 100_000, "too_deep", None),
    ('{"a": ' + "[" * 900 + '"\\ud800"' + "]" * 900 + "}", None, None),
    ("[" * 100_000 + "]" * 100_000, "too_deep", None),
    ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "too_deep", None),
    ("[1]", "invalid_json", None),
])
def test_an_unbounded_line_is_named_by_its_field(line, code, where):
    obj, got, why = read_object(line)
    assert obj is None and got in ((code,) if code else ("invalid_json", "lone_surrogate", "too_deep"))
    if where:
        assert why.startswith(where + ":"), why


def test_bounded_values_pass_as_read():
    obj, code, _ = read_object('{"a": 9223372036854775807, "b": -9223372036854775808, "c": 1e308, '
                               '"d": "\\ud83d\\ude00", "e": 1e-400}')
    assert code is None and obj == {"a": 2**63 - 1, "b": -(2**63), "c": 1e308, "d": "😀", "e": 0.0}


@pytest.mark.parametrize(("line", "value"), [
    ('{"a": 1e400, "a": 1}', {"a": 1}),
    ('{"a": [9223372036854775808], "b": 2, "a": null}', {"a": None, "b": 2}),
    ('{"a": {"c": -1e999}, "a": {"c": 0.5}}', {"a": {"c": 0.5}}),
])
def test_a_number_replaced_by_a_later_value_of_its_key_is_not_held(line, value):
    """Duplicate keys keep the last value: a number out of bounds that a later one replaced is not in
    the object read, line by line as column-wise (orjson reads such a line whole)."""
    assert read_object(line) == (value, None, None)
    assert read_objects([line]) == [(value, None, None)]
    assert read_object('{"a": 1e400, "a": 1, "b": 1e400}')[1] == "non_finite_number"


@pytest.mark.parametrize("content", ['{"summary": "x\\ud800입니다."}', '{"summary": "좋습니다.", "evidence": [NaN]}',
                                     '{"summary": "좋습니다.", "n": 1e400}', "[" * 50_000 + "]" * 50_000])
def test_a_model_answer_is_read_with_the_same_bounds(content):
    import httpx

    from rules.live_pick.model.client import parse_content

    response = httpx.Response(200, json={"choices": [{"message": {"content": content}}]})
    assert parse_content(response) is None


def test_an_ascii_value_is_trimmed_by_the_plain_strip_as_by_padding():
    ascii_padding = {c for c in PADDING if c.isascii()}
    assert ascii_padding == {chr(c) for c in range(128) if chr(c).isspace()}
    for c in map(chr, range(128)):
        assert trim(f"{c}x{c}") == f"{c}x{c}".strip(PADDING)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(alphabet=st.sampled_from([*PADDING[:40], *PADDING[-40:], "a", "가", " ", "\x00"]),
                                                       max_size=6)), max_size=30))
def test_trim_and_trim_column_strip_padding_from_both_ends(values):
    expected = [v.strip(PADDING) if isinstance(v, str) else v for v in values]
    assert [trim(v) for v in values] == expected
    assert trim_column(pd.Series(values, dtype=object)).tolist() == expected
    with row_by_row():
        assert trim_column(pd.Series(values, dtype=object)).tolist() == expected


def _int_or_none_per_value(values) -> list:
    return [None if v is None or v is pd.NA or v != v else int(v) for v in values]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-(2**70), 2**70), st.booleans(), st.just(pd.NA), st.just(float("nan")),
                          st.integers(-(2**53), 2**53).map(float)), max_size=12),
       st.sampled_from([object, "Int64", "float64", "int64"]))
def test_int_or_none_gives_ints_and_none_as_the_per_value_reading_does(values, dtype):
    try:
        series = pd.Series(values, dtype=dtype, index=range(10, 10 + len(values)))
    except (TypeError, ValueError, OverflowError):  # the values do not fit the dtype
        return
    got = int_or_none(series)
    want = _int_or_none_per_value(series.tolist() if dtype == object else list(series))
    assert got.dtype == object and list(got.index) == list(series.index)
    assert [(type(v), v) for v in got] == [(type(v), v) for v in want]


def test_int_or_none_of_ints_and_none_is_a_column_of_its_own():
    series = pd.Series([1, None, 3], dtype=object)
    got = int_or_none(series)
    got.iat[0] = 5
    assert series.tolist() == [1, None, 3]
