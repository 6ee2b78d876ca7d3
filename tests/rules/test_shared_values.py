"""Equal strings of a column share one object: fewer objects, the same values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals import domains
from rules.common import gates, shared_values
from rules.common.environment import SAMPLE_DIR
from rules.common.shared_values import SharedValues
from tests.rules.test_columnar_gates import DOMAINS, _normalised, _strict


def test_equal_strings_become_one_object_across_calls():
    shared = SharedValues()
    a = shared.column("c", ["".join(["CH-", "0007"]), None, 1])
    b = shared.column("c", ["".join(["CH-", "000", "7"]), "CH-0008"])
    assert a == ["CH-0007", None, 1] and b == ["CH-0007", "CH-0008"]
    assert a[0] is b[0]


def test_columns_are_apart_and_other_values_untouched():
    shared = SharedValues()
    one, mapping = 1, {"k": "v"}
    values = shared.column("x", ["1", one, True, 1.0, mapping, None])
    assert [type(v) for v in values] == [str, int, bool, float, dict, type(None)]
    assert values[4] is mapping
    other = shared.column("y", ["".join(["1"])])
    assert other == ["1"]


def test_lists_are_rebuilt_with_shared_elements():
    shared = SharedValues()
    first, second = ["게임", "음식", 3], ["".join(["게", "임"])]
    out = shared.column("tags", [first, second, []])
    assert out == [["게임", "음식", 3], ["게임"], []]
    assert out[0] is not first and out[1] is not second
    assert out[1][0] is out[0][0]


def test_a_column_of_distinct_values_stops_being_looked_up(monkeypatch):
    monkeypatch.setattr(shared_values, "LIMIT", 3)
    shared = SharedValues()
    shared.column("id", ["a", "b", "c", "d"])
    later = ["e", "f"]
    assert shared.column("id", later) is later
    kept = ["a"]
    assert shared.column("other", kept) is not kept


@pytest.mark.parametrize("domain", DOMAINS)
def test_sharing_changes_no_value(domain, tmp_path, monkeypatch):
    """The gated tables and quarantine with shared strings equal those read without sharing, value for value."""
    domains.get(domain).generate(3_000, 1, tmp_path)
    monkeypatch.setattr(gates, "CHUNK_ROWS", 997)
    for source in (SAMPLE_DIR / domain, tmp_path):
        shared = _normalised(domain, source)
        with monkeypatch.context() as m:
            m.setattr(SharedValues, "column", lambda self, name, values: values)
            m.setattr(SharedValues, "array", lambda self, name, values: values)
            m.setattr(SharedValues, "distinct", lambda self, name, texts: texts)
            alone = _normalised(domain, source)
        for name in alone.tables:
            assert _strict(shared.tables[name]) == _strict(alone.tables[name]), name
        assert _strict(shared.quarantine) == _strict(alone.quarantine)


def test_a_gated_table_holds_one_object_per_repeated_id(tmp_path, monkeypatch):
    domains.get("live_pick").generate(3_000, 1, tmp_path)
    monkeypatch.setattr(gates, "CHUNK_ROWS", 997)
    chat = _normalised("live_pick", tmp_path).tables["live_chat"]
    ids = chat["character_id"].tolist()
    assert len({id(v) for v in ids}) == len(set(ids)) < len(ids)
    tags = [t for cell in chat["topic_tags"].tolist() for t in cell or ()]
    assert len({id(t) for t in tags}) == len(set(tags)) < len(tags)  # list elements too, each list its own


def test_distinct_texts_share_with_what_the_column_showed_before():
    shared = SharedValues()
    a = shared.distinct("c", _objects(["".join(["CH-", "0007"]), None]))
    b = shared.array("c", _objects(["".join(["CH-", "000", "7"]), "CH-0008"]))
    c = shared.distinct("c", _objects(["".join(["CH-00", "08"])]))
    assert a.tolist() == ["CH-0007", None] and b.tolist() == ["CH-0007", "CH-0008"]
    assert b[0] is a[0] and c[0] is b[1]


def _objects(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def test_an_array_of_strings_shares_them_across_calls_and_keeps_nulls():
    shared = SharedValues()
    a = shared.array("c", _objects(["".join(["CH-", "0007"]), None, "CH-0008"]))
    b = shared.array("c", _objects(["".join(["CH-", "000", "7"]), None]))
    assert a.tolist() == ["CH-0007", None, "CH-0008"] and b.tolist() == ["CH-0007", None]
    assert a[0] is b[0]


def test_strings_that_differ_after_a_nul_stay_apart():
    shared = SharedValues()
    out = shared.array("body", _objects(["a", "a\x00b", "a\x00c", "a"]))
    assert out.tolist() == ["a", "a\x00b", "a\x00c", "a"]


def test_an_array_of_numbers_is_returned_as_it_is():
    shared = SharedValues()
    for values in ([1, None, 2], [1.5, None], [True, None], [1, 2.5], [None, None], []):
        column = _objects(values)
        assert shared.array(f"c{len(values)}", column) is column


def test_an_array_of_lists_or_mixed_kinds_takes_the_list_path():
    shared = SharedValues()
    first, second = ["게임", "음식", 3], ["".join(["게", "임"])]
    out = shared.array("tags", _objects([first, second, [], None]))
    assert out.tolist() == [["게임", "음식", 3], ["게임"], [], None]
    assert out[0] is not first and out[1][0] is out[0][0]
    mixed = shared.array("x", _objects(["1", 1, True, {"k": "v"}, None]))
    assert [type(v) for v in mixed] == [str, int, bool, dict, type(None)]


def test_an_array_of_distinct_strings_stops_being_looked_up(monkeypatch):
    monkeypatch.setattr(shared_values, "LIMIT", 3)
    shared = SharedValues()
    shared.array("id", _objects(["a", "b", "c", "d"]))
    later = _objects(["e", "f"])
    assert shared.array("id", later) is later


_VALUE = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.sampled_from(["a", "b", "게임", "", "a\x00", "a\x00b"]),
                   st.text(max_size=3), st.lists(st.sampled_from(["a", "게임", 1]), max_size=3))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_VALUE, max_size=12), min_size=1, max_size=3), st.integers(1, 6))
def test_array_gives_what_column_gives(calls, limit):
    """Value for value and type for type, over calls that share one table, with a small LIMIT."""
    by_array, by_list = SharedValues(), SharedValues()
    old = shared_values.LIMIT
    shared_values.LIMIT = limit
    try:
        for values in calls:
            got, want = by_array.array("c", _objects(values)).tolist(), by_list.column("c", list(values))
            assert [repr(v) for v in got] == [repr(v) for v in want]
    finally:
        shared_values.LIMIT = old


def test_columns_read_by_arrow_share_their_strings_across_chunks_trimmed_or_not(monkeypatch):
    """Rows read by the column reader a chunk at a time: every room id and sender code, trimmed
    ones included, is one object per value over the whole table."""
    from rules.common.jsonl import utf8_frame
    from rules.handoff.normalise import _screen

    monkeypatch.setattr(gates, "CHUNK_ROWS", 7)
    senders = ["customer", " ai ", "ai", "customer\u200b", "system"]
    lines = [f'{{"message_id": "M-{i}", "room_id": "R-{i % 3}", "sender": "{senders[i % 5]}", "text": "안녕 {i % 2}", '
             f'"sent_at": "2026-09-30T20:55:00+09:00", "cited_article_id": null}}' for i in range(40)]
    raw = utf8_frame("chat_messages", "chat_messages.jsonl", "\n".join(lines).encode())
    rows = _screen({"chat_messages": raw}, "chat_messages").rows
    assert len(rows) == 40
    for name in ("room_id", "sender"):
        values = rows[name].tolist()
        assert len({id(v) for v in values}) == len(set(values)) < len(values), name
    assert set(rows["sender"]) == {"customer", "ai", "system"}
