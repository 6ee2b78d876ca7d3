"""The column-wise gates against the line-by-line reference: the same tables, the same quarantine."""

from __future__ import annotations

import importlib
import json

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals import domains
from rules.common import cells, gates
from rules.common.environment import SAMPLE_DIR
from rules.common.bounded_json import read_object, read_objects, utf8_lines
from rules.common.jsonl import TEXT, parse_json, utf8_frame

DOMAINS = ("persona", "live_pick", "retry", "handoff")


def _strict(frame: pd.DataFrame) -> dict:
    """A frame as exact text: the type of every value counts (1, 1.0 and True differ), so do dtypes and order."""
    return {
        "columns": list(frame.columns),
        "dtypes": [str(t) for t in frame.dtypes],
        "index": list(frame.index),
        "values": {c: [repr(v) for v in frame[c]] for c in frame.columns},
    }


def _normalised(domain: str, input_dir):
    module = importlib.import_module(f"rules.{domain}.normalise")
    config = importlib.import_module(f"rules.{domain}.config").load_config()
    return module.load_dir(input_dir, config)


def assert_same_gates(domain: str, input_dir) -> None:
    fast = _normalised(domain, input_dir)
    with cells.row_by_row():
        slow = _normalised(domain, input_dir)
    assert list(fast.tables) == list(slow.tables)
    for name in slow.tables:
        assert _strict(fast.tables[name]) == _strict(slow.tables[name]), name
    assert _strict(fast.quarantine) == _strict(slow.quarantine)
    assert fast.raw_counts == slow.raw_counts


@pytest.mark.parametrize("domain", DOMAINS)
def test_sample_data(domain):
    assert_same_gates(domain, SAMPLE_DIR / domain)


@pytest.mark.parametrize("seed", (1, 2, 3))
@pytest.mark.parametrize("domain", DOMAINS)
def test_generated_data_with_malformed_rows(domain, seed, tmp_path):
    made = domains.get(domain).generate(10_000, seed, tmp_path)
    assert any(made["malformed"].values())
    assert_same_gates(domain, tmp_path)


def assert_same_in_chunks(domain: str, input_dir, monkeypatch, rows: int) -> None:
    whole = _normalised(domain, input_dir)
    monkeypatch.setattr(gates, "CHUNK_ROWS", rows)
    chunked = _normalised(domain, input_dir)
    for name in whole.tables:
        assert _strict(chunked.tables[name]) == _strict(whole.tables[name]), name
    assert _strict(chunked.quarantine) == _strict(whole.quarantine)
    assert chunked.raw_counts == whole.raw_counts


@pytest.mark.parametrize("rows", (1, 7))
@pytest.mark.parametrize("domain", DOMAINS)
def test_sample_data_screened_in_chunks(domain, rows, monkeypatch):
    """Duplicates, empty ids and bad rows land in different chunks: the chunks join to the same result."""
    assert_same_in_chunks(domain, SAMPLE_DIR / domain, monkeypatch, rows)


@pytest.mark.parametrize("domain", DOMAINS)
def test_generated_data_screened_in_chunks(domain, tmp_path, monkeypatch):
    domains.get(domain).generate(10_000, 2, tmp_path)
    assert_same_in_chunks(domain, tmp_path, monkeypatch, 997)


def test_a_repeated_id_in_a_later_chunk_is_quarantined_naming_the_first_line(monkeypatch):
    monkeypatch.setattr(gates, "CHUNK_ROWS", 2)
    raw = pd.DataFrame({"dataset": "d", "file": "f", "line": [1, 2, 3, 4, 5],
                        "text": ['{"id":"a"}', '{"id":"b"}', 'x', '{"id":"a"}', '{"id":"c"}'], "not_utf8": None})
    s = gates.screen(raw, "d", "id", lambda obj: None, ("id",))
    assert list(s.accepted()["id"]) == ["a", "b", "c"]
    q = s.quarantine()
    assert list(q["line"]) == [3, 4] and list(q["reason_code"]) == ["invalid_json", "duplicate_id"]
    assert q["reason"].iat[1] == "id 'a' repeats the row on line 1"
    assert s.raw_count == 5


def test_an_id_that_is_not_truthy_is_missing_as_line_by_line():
    """With no schema in the way, an id of any kind: empty text, null, 0, false, an empty list, padding
    alone are empty; NaN-free numbers, text and lists are not, as `not` has them."""
    ids = ['""', "null", "0", "false", "[]", "{}", '"\u200b "', '"a"', "2", "0.5", "true", "[0]", '{"x":1}']
    raw = pd.DataFrame({"dataset": "d", "file": "f", "line": range(1, len(ids) + 1),
                        "text": ['{"id":%s}' % v for v in ids], "not_utf8": None})
    screened = {}
    for way in ("columns", "rows"):
        if way == "rows":
            with cells.row_by_row():
                s = gates.screen(raw, "d", "id", lambda obj: None, ("id",))
        else:
            s = gates.screen(raw, "d", "id", lambda obj: None, ("id",))
        q = s.quarantine()
        screened[way] = (list(q["line"]), list(q["reason_code"]), list(map(repr, s.accepted()["id"])))
    assert screened["columns"] == screened["rows"]
    assert screened["columns"][0] == [1, 2, 3, 4, 5, 6, 7]


NASTY = [
    '{"a":"\\ud800"}', '{"a":"\\udc00x"}', '{"\\ud800":1}', '{"a":"\\ud83d\\ude00"}', '{"a":"\\ud800\\u0041"}',
    '{"a":1,"a":2}', '{"a":1,"b":0,"a":2}', '\ufeff{"a":1}', '{"a":1}\ufeff', '\x0c{"a":1}', '\u00a0{"a":1}',
    '{"a":1e400}', '{"a":-1e400}', '{"a":1e-400}', '{"a":18446744073709551615}', '{"a":9223372036854775808}',
    '{"a":9223372036854775807}', '{"a":-9223372036854775808}', '{"a":-9223372036854775809}', '{"a":' + "9" * 5000 + '}',
    '{"a":NaN}', '{"a":Infinity}', '{"a":-Infinity}', '{"a":"\x01"}', '{"a":"\x7f\u2028\u0085"}', ' {"a":1} ', '\t{"a":1}\r',
    '{"a":-0}', '{"a":-0.0}', '{"a":1.0}', '{"a":1E5}', '{"a":01}', '{"a":.5}', '{"a":1.}', '{"a":+1}',
    '{"a":"\\u0000"}', '{"a":1}\x00', '{"a":[1,]}', '{"a":tru}', "{'a':1}", '{"a":1}{"b":2}', '{"a":1} x', "[1]", '"x"',
    "1", "null", "{}", '{"a":123456789012345678901234.5}', '{"a":2.2250738585072011e-308}', '{"a":"\\/\\b"}', '{"a":"\\x"}',
    '{"id":"CH-1\u200b"}', '{"a":{"b":[{"c":"\\udfff"}]}}', '{"a":[[-9223372036854775809]]}', '{"a":{"b":18446744073709551616}}',
    '{"a":{"b":[9223372036854775808]}}', '{"a":1e18}', '{"a":[-1000000000000000000]}', '{"a":999999999999999999}',
] + ['{"a":' + "[" * d + "]" * d + "}" for d in (100, 511, 512, 900, 990, 1000, 1023, 1024, 1100)]


def _same(lines):
    expected = [read_object(t) for t in lines]
    held = pd.Series(pd.arrays.ArrowExtensionArray(pa.array(lines, pa.large_string())), dtype=TEXT)  # as a file's lines
    for got in (read_objects(lines), read_objects(utf8_lines(held)), read_objects(utf8_lines(held.iloc[1:]))):
        assert got == expected[len(expected) - len(got):]
        # equal dicts may still differ in key order or value types
        for (a, _, _), (b, _, _) in zip(got, expected[len(expected) - len(got):]):
            assert json.dumps(a) == json.dumps(b) and repr(a) == repr(b)


def test_nasty_lines_read_as_line_by_line():
    _same(NASTY)


_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
)
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                       max_leaves=10)
FRAGMENTS = [
    "NaN", "Infinity", "-Infinity", "1e400", "-1e999", "18446744073709551615", "9223372036854775808", '"\\ud800"',
    '"\\udc00"', '"\\ud83d\\ude00"', "\ufeff", "\u200b", "\u00a0", " ", "\t", ",", ":", "{", "}", "[", "]", '"', "\\",
    "01", "-0", "1.", ".5", "true", "nul", '"a"', '"a":1', "\x00", "\x1f", "\u2028",
]
_fragments = st.sampled_from(FRAGMENTS)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=6), _values, max_size=5))
def test_objects_read_as_line_by_line(obj):
    _same([json.dumps(obj), json.dumps(obj, ensure_ascii=False)])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_fragments, st.text(max_size=4)), min_size=1, max_size=12))
def test_json_ish_text_read_as_line_by_line(parts):
    text = "".join(parts)
    _same([text, "{" + text + "}", '{"a":' + text + "}", '{"a":[' + text + "]}"])


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=4), _values, min_size=1, max_size=4), _fragments,
       st.integers(min_value=0, max_value=40))
def test_objects_with_a_fragment_spliced_in(obj, fragment, at):
    text = json.dumps(obj, ensure_ascii=False)
    at = min(at, len(text))
    _same([text[:at] + fragment + text[at:]])


def _parsed_as_by_json(texts):
    """`parse_json` gives what json.loads gives (the same kinds, key order, NaN), or fails as it does."""
    for text in texts:
        outcome = []
        for parse in (parse_json, json.loads):
            try:
                outcome.append(repr(parse(text)))
            except (ValueError, RecursionError) as exc:
                outcome.append(type(exc).__name__)
        assert outcome[0] == outcome[1], text[:80]


def test_json_text_of_every_kind_parses_as_json_loads_reads_it():
    _parsed_as_by_json([*NASTY, *FRAGMENTS, "[18446744073709551616]", "-9223372036854775809", "[1e400, NaN]", "1e18", "-1e18",
                        "999999999999999999", "[[1.5e300]]", '{"a": [true, 1, 1.0]}',
                        "1000000000000000000", "-999999999999999999", "[123456789012345678901.5]", "1.5e18",
                        '{"id": "1234567890123456789012", "n": 18446744073709551615}', '"\\ud800"', "[1, 2] x"])


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.one_of(_scalars, st.floats(), st.integers(min_value=-(2**80), max_value=2**80)),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                    max_leaves=10))
def test_json_values_written_by_json_parse_as_json_loads_reads_them(value):
    _parsed_as_by_json([json.dumps(value), json.dumps(value, ensure_ascii=False)])


def test_text_that_differs_only_after_a_nul_keeps_its_own_value():
    """pandas' text hash table reads a string up to its first NUL: the gates' shared strings must
    still tell "a" from "a\\u0000b"."""
    texts = ['{"id":"1","t":"a"}', '{"id":"2","t":"a\\u0000b"}', '{"id":"3","t":"a\\u0000c"}', '{"id":"4","t":"a"}']
    raw = pd.DataFrame({"dataset": "d", "file": "f", "line": [1, 2, 3, 4], "text": texts, "not_utf8": None})
    fast = gates.screen(raw, "d", "id", lambda obj: None, ("id", "t")).accepted()
    with cells.row_by_row():
        slow = gates.screen(raw, "d", "id", lambda obj: None, ("id", "t")).accepted()
    assert list(fast["t"]) == ["a", "a\x00b", "a\x00c", "a"]
    assert _strict(fast) == _strict(slow)


def test_a_file_s_lines_are_read_from_arrow_s_buffer_and_other_lines_as_text():
    frame = utf8_frame("d", "f", '{"a":1}\n{"b":"가"}\nx\n'.encode())
    lines = utf8_lines(frame["text"].iloc[1:])
    assert lines is not None and lines.to_pylist() == ['{"b":"가"}', "x"]
    assert [obj for obj, _, _ in read_objects(lines)] == [{"b": "가"}, None]
    assert utf8_lines(pd.Series(['{"a":1}'], dtype=object)) is None
