"""Equal strings of a column share one object: fewer objects, the same values."""

from __future__ import annotations

import pytest

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
