"""Arrow's JSON reader in the gates: it reads a chunk exactly as the dicts would, or declines it."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from rules.common import cells, days, gates
from rules.common.arrow_json import ColumnReader, field_texts
from rules.common.bounded_json import encodable, read_objects
from rules.common.jsonl import utf8_frame
from schemas import SCHEMA_ROOTS, columns, load_schema, row_checker

SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "kept": {"type": ["string", "null"]},
        "n": {"type": ["integer", "null"], "minimum": 0, "maximum": 120},
        "flag": {"type": ["boolean", "null"]},
        "tag": {"type": "string"},
        "tags": {"type": ["array", "null"], "items": {"type": "string"}},
    },
    "required": ["id", "kept"],
}
"""`kept` is required but may be null; `tag` may be absent but not null: the two places where an
absent field and a null one are judged apart."""
NAMES = tuple(SCHEMA["properties"])
READER = ColumnReader(SCHEMA)


def lines_of(*texts: str) -> pa.LargeStringArray:
    return pa.array(list(texts), type=pa.large_string())


def test_clean_lines_are_read_into_columns_with_the_values_the_dicts_hold():
    texts = ['{"id": "a", "kept": null, "n": 7, "flag": true, "tag": "x", "tags": ["p", "\u00e9", null, ""]}',
             '{"id":"a2","kept":"k","tags":[]}', '{"id":"a3","kept":"k","tags":null}',
             '{"tag":"\\ud83d\\ude00 \\"q\\" \\u0000", "id":"b","kept":"k","n":-0,"flag":false}',
             '{"id": "c", "kept": "\uc11c", "n": 9223372036854775807}',
             '{"id":"d","kept":"","n":-9223372036854775808,"flag":null}']
    cells, nulls = READER.read(lines_of(*texts))
    for i, text in enumerate(texts):
        obj = json.loads(text)
        for j, name in enumerate(NAMES):
            assert type(cells[i, j]) is type(obj.get(name)) and cells[i, j] == obj.get(name), (i, name)
            assert nulls[i, j] == (obj.get(name) is None)


@pytest.mark.parametrize("text", [
    "", " ", "null", "[1]", "5", '"x"', "true",
    ' {"id":"a","kept":null}', '{"id":"a","kept":null} ', '\ufeff{"id":"a","kept":null}',
    '{"id":"a","kept":null}{"id":"b","kept":null}',
    '{"id":"a","kept":null,"id":"b"}', '{"id":"a","kept":null,"\\u0069d":"b"}',
    '{"id":"a","kept":null,"n":5.0}', '{"id":"a","kept":null,"n":1e2}', '{"id":"a","kept":null,"n":NaN}',
    '{"id":"a","kept":null,"n":9223372036854775808}', '{"id":"a","kept":null,"n":-9223372036854775809}',
    '{"id":"a","kept":null,"n":true}', '{"id":"a","kept":null,"n":"5"}', '{"id":"a","kept":null,"flag":1}',
    '{"id":5,"kept":null}', '{"id":["a"],"kept":null}', '{"id":{"a":1},"kept":null}',
    '{"id":"\\ud800","kept":null}', '{"id":"a\tb","kept":null}', '{"id":"a\\qb","kept":null}',
    '{"id":"a","kept":null,"tags":[1]}', '{"id":"a","kept":null,"tags":[["a"]]}', '{"id":"a","kept":null,"tags":"a"}',
    '{"id":"a","kept":null,"tags":[{}]}', '{"id":"a","kept":null,}', '{"id":"a","kept":null,"other":1}', '{"id":"a","kept":null} // note',
])
def test_a_chunk_holding_a_line_it_could_read_differently_is_declined(text):
    clean = '{"id":"z","kept":null}'
    assert READER.read(lines_of(clean, text, clean)) is None
    assert READER.read(lines_of(clean, clean)) is not None


def test_schemas_with_numbers_maps_or_lists_of_anything_but_text_are_left_to_the_dicts():
    for spec in ({"type": "number"}, {"type": "array", "items": {"type": "integer"}}, {"type": "array"},
                 {"type": "array", "items": {"type": "string", "minLength": 1}}, {"type": "object"}, {},
                 {"type": ["string", "integer"]}):
        reader = ColumnReader({"type": "object", "properties": {"id": {"type": "string"}, "x": spec}})
        assert not reader.usable
        assert reader.read(lines_of('{"id":"a"}')) is None


# -- any line: the reader reads it as the dicts would, or declines the chunk --------------------

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6) | st.sampled_from(
    ["\ud800", "\udfff", "\ud83d\ude00", "a\u2028b", "\x00", "\x7f"])
_value = st.one_of(
    st.none(), st.booleans(), _text,
    st.integers(min_value=-(2**64), max_value=2**64),
    st.sampled_from([-(2**63), 2**63 - 1, 2**63, 0, -1, 120, 121]),
    st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([5.0, -0.0, 1e2]),
    st.lists(_text, max_size=2), st.dictionaries(_text, st.integers(), max_size=1),
)
_key = st.sampled_from(NAMES) | st.sampled_from(["\\u0069d", "other", ""])


@st.composite
def _line(draw) -> str:
    """A line as any writer might write it: fields of any kind, in any order, some twice or absent,
    some not the schema's; values escaped or not; spacing; now and then not an object at all."""
    if draw(st.integers(0, 20)) == 0:
        return draw(st.sampled_from(["null", "[]", "1", '"a"', "", " {}", "{} ", "{}{}"]))
    fields = draw(st.lists(st.tuples(_key, _value), max_size=7))
    space = draw(st.sampled_from(["", " ", "\t", "\r"]))
    parts = []
    for key, value in fields:
        try:
            text = json.dumps(value, ensure_ascii=draw(st.booleans()), allow_nan=True)
        except ValueError:
            text = "0"
        parts.append(f'"{key}"{space}:{space}{text}')
    return "{" + ("," + space).join(parts) + "}"


_plain = st.text(st.characters(codec="utf-8"), max_size=6)


def _clean(draw) -> str:
    """A line the reader must take: the schema's fields, of their types, none twice."""
    row = {"id": draw(_plain), "kept": draw(st.none() | _plain)}
    for name, values in (("n", st.none() | st.integers(-(2**63), 2**63 - 1)), ("flag", st.none() | st.booleans()),
                         ("tag", _plain), ("tags", st.none() | st.lists(_plain, max_size=3))):
        if draw(st.booleans()):
            row[name] = draw(values)
    return json.dumps(row, ensure_ascii=draw(st.booleans()))


@settings(max_examples=400, deadline=None)
@given(st.lists(_line(), min_size=1, max_size=6), st.data())
@example(['{"id":"a","kept":"b","n":5.0}'], None)
@example(['{"id":"a","kept":"b","id":"c"}'], None)
def test_every_line_it_reads_is_read_as_the_gates_read_it(texts, data):
    texts = [t for t in texts if "\n" not in t]
    assume(texts and all(encodable(t) for t in texts))
    if data is not None:  # clean lines around the drawn ones, which the reader must take on their own
        clean = [_clean(data.draw) for _ in range(3)]
        assert READER.read(lines_of(*clean)) is not None
        texts = clean[:1] + texts + clean[1:]
    got = READER.read(lines_of(*texts))
    if got is None:
        return
    cells, nulls = got
    for i, (obj, code, _) in enumerate(read_objects(texts)):
        assert code is None and type(obj) is dict, texts[i]
        for j, name in enumerate(NAMES):
            assert type(cells[i, j]) is type(obj.get(name)) and cells[i, j] == obj.get(name), (texts[i], name)
            assert nulls[i, j] == (obj.get(name) is None)


# -- one field of every line, the others let be (`field_texts`) ---------------------------------

def _as_read(text: str):
    """`name`'s value as `line_days` reads it line by line."""
    return days._field(text, "id")


@pytest.mark.parametrize("text", [
    "", "null", "[1]", ' {"id":"a"}', '{"id":"a"} ', '{"id":"a"}{"id":"b"}', '{"id":"a","id":"b"}',
    '{"id":5}', '{"id":true}', '{"id":["a"]}', '{"id":{"a":1}}', '{"id":"\\ud800"}', '{"id":"a\tb"}',
    '{"x":"\\ud800","id":"a"}', '{"x":1e400,"id":"a"}', '{"x":01,"id":"a"}', '{"x":[1,],"id":"a"}',
    '{"x":"a\\qb","id":"a"}', '{"id":"a"} // note', '{"id":"a" /* note */}',
    '{"x":' + "[" * 20_000 + "]" * 20_000 + ',"id":"a"}', '{"x":' + '{"a":' * 20_000 + "1" + "}" * 20_000 + ',"id":"a"}',
])
def test_one_field_of_a_chunk_holding_a_line_it_could_read_differently_is_declined(text):
    clean = '{"id":"z","x":[1,{"y":null}]}'
    assert field_texts(lines_of(clean, text, clean), "id") is None
    assert field_texts(lines_of(clean, clean), "id").tolist() == ["z", "z"]


def test_one_field_is_read_whatever_the_others_hold():
    texts = ['{"x":{"id":"in"},"id":"top"}', '{"x":{"id":"in"}}', '{"id":null,"x":NaN}', '{"x":1,"x":"twice","id":"\\u00e9"}',
             '{"x":99999999999999999999999999,"id":""}', '{"x":"a\\ud83d\\ude00","id":"\\u0000"}', '{}',
             '{"x":' + "[" * 500 + "]" * 500 + ',"id":"deep enough"}', '{"x":-Infinity,"id":"inf"}']
    got = field_texts(lines_of(*texts), "id")
    assert got.tolist() == [_as_read(t) for t in texts] == ["top", None, None, "\u00e9", "", "\x00", None, "deep enough", "inf"]


@settings(max_examples=400, deadline=None)
@given(st.lists(_line() | st.builds(lambda a, b: "{" + a + '"x":' + b, st.sampled_from(["", '"id":"k",']),
                                    st.sampled_from(["[" * 20_000 + "]" * 20_000 + "}", '{"id":5}}', "[1,{}]}"])),
                min_size=1, max_size=6))
@example(['{"id":"k","x":' + "[" * 20_000 + "]" * 20_000 + "}"])  # too deep for json.loads (under any recursion limit a test runs with), not for Arrow
def test_one_field_it_reads_is_read_as_json_reads_it(texts):
    texts = [t for t in texts if "\n" not in t]
    assume(texts and all(encodable(t) for t in texts))
    got = field_texts(lines_of(*texts), "id")
    if got is None:
        return
    assert got.tolist() == [_as_read(t) for t in texts]
    assert all(v is None or type(v) is str for v in got.tolist())


# -- the gates with the reader against the gates line by line ----------------------------------


@pytest.fixture
def dataset(tmp_path, monkeypatch):
    """`SCHEMA` as a dataset of a domain of its own, for `row_checker`."""
    domain = f"arrow_json_{id(tmp_path)}"
    (tmp_path / "rows.schema.json").write_text(json.dumps(SCHEMA))
    monkeypatch.setitem(SCHEMA_ROOTS, domain, tmp_path)
    yield domain
    load_schema.cache_clear()
    row_checker.cache_clear()


def _screened(domain: str, texts: list[str]):
    raw = utf8_frame("rows", "rows.jsonl", ("\n".join(texts) + "\n").encode("utf-8"))
    s = gates.screen(raw, "rows", "id", row_checker(domain, "rows"), columns(domain, "rows"), ("n",))
    return s.accepted(), s.quarantine()


def _assert_same_as_line_by_line(domain: str, texts: list[str]) -> None:
    fast = _screened(domain, texts)
    with cells.row_by_row():
        slow = _screened(domain, texts)
    for a, b in zip(fast, slow):
        assert list(a.columns) == list(b.columns) and [str(t) for t in a.dtypes] == [str(t) for t in b.dtypes]
        assert {c: [repr(v) for v in a[c]] for c in a} == {c: [repr(v) for v in b[c]] for c in b}


def test_an_absent_field_and_a_null_one_are_judged_apart(dataset, monkeypatch):
    taken = []
    read = ColumnReader.read
    monkeypatch.setattr(ColumnReader, "read", lambda self, lines, share=None: taken.append(r := read(self, lines, share)) or r)
    texts = ['{"id":"a","kept":null}', '{"id":"b"}', '{"id":"c","kept":"k","tag":null}', '{"id":"d","kept":"k"}',
             '{"id":"e","kept":"k","n":121}', '{"id":"e","kept":"k"}', '{"id":" ","kept":"k"}']
    accepted, quarantine = _screened(dataset, texts)
    assert taken and taken[0] is not None
    assert list(accepted["id"]) == ["a", "d", "e"]
    assert dict(zip(quarantine["line"], quarantine["reason_code"])) == {
        2: "schema", 3: "schema", 5: "schema", 7: "missing_id"}  # 5 leaves first: 6 is the first "e"
    assert "'kept' is a required property" in quarantine["reason"][0]
    assert "tag: None is not of type 'string'" in quarantine["reason"][1]
    _assert_same_as_line_by_line(dataset, texts)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])  # the fixture holds no state
@given(texts=st.lists(_line(), min_size=1, max_size=30), data=st.data())
def test_gates_with_the_reader_match_the_gates_line_by_line(dataset, monkeypatch, texts, data):
    monkeypatch.setattr(gates, "CHUNK_ROWS", data.draw(st.sampled_from([1, 3, 50_000])))
    texts = [t for t in texts if "\n" not in t and encodable(t)] + [_clean(data.draw) for _ in range(data.draw(st.integers(0, 5)))]
    order = data.draw(st.permutations(range(len(texts))))
    texts = [texts[i] for i in order]
    assume(any(t.strip() for t in texts))
    _assert_same_as_line_by_line(dataset, texts)


@pytest.mark.parametrize("domain", ["persona", "live_pick", "retry", "handoff"])
def test_the_sample_chunks_are_read_by_the_reader(domain, monkeypatch):
    """The gates take the reader's columns where it reads a chunk (a guard that the paths above run):
    in every domain, most chunks of five sample lines."""
    import importlib

    from rules.common.environment import SAMPLE_DIR

    taken = []
    read = ColumnReader.read
    monkeypatch.setattr(ColumnReader, "read", lambda self, lines, share=None: taken.append(r := read(self, lines, share)) or r)
    monkeypatch.setattr(gates, "CHUNK_ROWS", 5)
    config = importlib.import_module(f"rules.{domain}.config").load_config()
    importlib.import_module(f"rules.{domain}.normalise").load_dir(SAMPLE_DIR / domain, config)
    assert sum(r is not None for r in taken) > len(taken) // 2 > 0
    cells = next(r for r in taken if r is not None)[0]
    assert isinstance(cells, np.ndarray) and cells.dtype == object


def test_handoff_messages_read_by_the_reader_match_line_by_line(tmp_path, monkeypatch):
    """Codes trimmed before the schema, messages left out before it (no room, no time) and a field
    named like the screen's own `text`, absent on one line: each from the reader's columns, and
    from the dicts where it declines a chunk, as line by line."""
    import shutil

    from rules.common.environment import SAMPLE_DIR
    from rules.handoff import normalise
    from rules.handoff.config import load_config

    shutil.copytree(SAMPLE_DIR / "handoff", tmp_path, dirs_exist_ok=True)
    odd = ['{"message_id":"X-1","room_id":"R-55002","sender":" ai\\u200b","text":"a","sent_at":"2026-09-30T20:56:00+09:00"}',
           '{"message_id":"X-2","room_id":" ","sender":"ai","text":null,"sent_at":"2026-09-30T20:56:00+09:00"}',
           '{"message_id":"X-3","room_id":"R-55002","sender":"ai","text":"b","sent_at":null}',
           '{"message_id":"X-4","room_id":"R-55002","sender":"bot ","text":"c","sent_at":"2026-09-30T20:57:00+09:00"}',
           '{"message_id":"X-5","room_id":"R-55002","sender":"customer","sent_at":"2026-09-30T20:58:00+09:00"}',
           # a field the schema does not name: the reader declines the chunk, the dicts read it
           '{"message_id":"X-7","room_id":"R-55002","sender":"ai","text":"e","sent_at":"2026-09-30T20:59:00+09:00","x":1}',
           '{"message_id":"X-6","room_id":"R-55002","sender":" counselor","text":"d","sent_at":"nope"}']
    with open(tmp_path / "chat_messages.jsonl", "a", encoding="utf-8") as fh:
        fh.write("\n".join(odd * 3) + "\n")
    taken = []
    read = ColumnReader.read
    monkeypatch.setattr(ColumnReader, "read", lambda self, lines, share=None: taken.append(r := read(self, lines, share)) or r)
    for rows in (4, 50_000):
        monkeypatch.setattr(gates, "CHUNK_ROWS", rows)
        fast = normalise.load_dir(tmp_path, load_config())
        with cells.row_by_row():
            slow = normalise.load_dir(tmp_path, load_config())
        for a, b in [*((fast.tables[n], slow.tables[n]) for n in slow.tables), (fast.quarantine, slow.quarantine)]:
            assert list(a.columns) == list(b.columns) and [str(t) for t in a.dtypes] == [str(t) for t in b.dtypes]
            assert {c: [repr(v) for v in a[c]] for c in a} == {c: [repr(v) for v in b[c]] for c in b}
    assert sum(r is not None for r in taken) > len(taken) // 2
    messages = fast.tables["chat_messages"].set_index("message_id")
    assert messages.loc["X-1", "sender"] == "ai" and messages.loc["X-1", "text"] == "a"
    codes = dict(zip(fast.quarantine["id"], fast.quarantine["reason_code"]))
    assert codes["X-2"] == "empty_room_id" and codes["X-3"] == "missing_sent_at" and codes["X-4"] == "schema"


def test_fields_looked_up_and_trimmed_before_the_schema_agree_in_every_form(dataset):
    """`field` and `trim_fields` on a screen whose lines the reader read, before and after a field
    outside the schema made it read the dicts too: the same values as a screen of dicts."""
    texts = ['{"id":"a","kept":" k "}', '{"id":"b","kept":"k\\u200b","tag":" t"}', '{"id":"c","kept":null}']
    raw = utf8_frame("rows", "rows.jsonl", ("\n".join(texts) + "\n").encode("utf-8"))
    for extra_first in (False, True):
        with_reader = gates.Screen(raw, "rows", "id", reader=READER)
        plain = gates.Screen(raw, "rows", "id")
        assert with_reader._read is not None and plain._read is None
        for s in (with_reader, plain):
            if extra_first:
                assert s.field("x").tolist() == [None, None, None]  # not the reader's: every dict read
            s.trim_fields(("kept", "tag"))
        for name in ("id", "kept", "tag", "x"):
            assert with_reader.field(name).tolist() == plain.field(name).tolist(), name
        assert with_reader.field("kept").tolist() == ["k", "k", None]
        for s in (with_reader, plain):
            s.schema(row_checker(dataset, "rows"))
            s.expand(NAMES)
        assert [str(v) for v in with_reader.rows.to_dict("records")] == [str(v) for v in plain.rows.to_dict("records")]


def test_a_chunk_of_many_blocks_is_read_in_line_order():
    """Arrow parses a chunk's blocks on several threads: the rows still come in line order."""
    rows = [{"id": f"m{i:06d}", "kept": "가" * (i % 37), "n": i % 121, "flag": i % 2 == 0, "tag": "t", "tags": [str(i)]}
            for i in range(40_000)]
    texts = [json.dumps(r, ensure_ascii=False) for r in rows]
    assert sum(map(len, texts)) > 3 * 2**20  # several of the reader's 1 MiB blocks
    cells, nulls = READER.read(lines_of(*texts))
    assert cells[:, 0].tolist() == [r["id"] for r in rows]
    assert cells[:, 2].tolist() == [r["n"] for r in rows]
    assert cells[:, 5].tolist() == [r["tags"] for r in rows]
    assert not nulls.any()
