"""A function of a text column, called once per distinct value."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.common.distinct import each_value, factorize_text, is_text, per_distinct_text, select_labels


def _objects(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def test_each_distinct_value_is_seen_once_in_order_and_a_missing_one_gives_none():
    seen = []
    values = _objects(["b", None, "a", "b", float("nan"), "a", ""])
    out = per_distinct_text(lambda v: seen.append(v) or v.upper(), values)
    assert seen == ["b", "a", ""]
    assert out.tolist() == ["B", None, "A", "B", None, "A", ""]


def test_text_holding_nul_is_told_apart_from_its_prefix():
    # pandas' own factorize gives "a" and "a\x00b" one code: its text hash table stops at NUL
    values = _objects(["a", "a\x00b", None, "", "\x00", "a\x00c", "a\x00b"])
    codes, distinct = factorize_text(values)
    assert codes.tolist() == [0, 1, -1, 2, 3, 4, 1]
    assert distinct.tolist() == ["a", "a\x00b", "", "\x00", "a\x00c"]
    assert per_distinct_text(repr, values).tolist() == [repr(v) if v is not None else None for v in values]


@given(st.lists(st.one_of(st.none(), st.text(alphabet="a\x00b", max_size=4)), max_size=40))
def test_factorize_text_gives_equal_values_one_code_in_order_of_first_appearance(values):
    codes, distinct = factorize_text(_objects(values))
    firsts = list(dict.fromkeys(v for v in values if v is not None))
    assert distinct.tolist() == firsts
    assert codes.tolist() == [-1 if v is None else firsts.index(v) for v in values]


def test_an_empty_column_gives_an_empty_array():
    assert per_distinct_text(str.upper, _objects([])).tolist() == []


def test_text_is_text_and_missing_values_alone_count_as_text():
    assert is_text(_objects(["a", None])) and is_text(_objects([None, None])) and is_text(_objects([]))
    assert not is_text(_objects(["a", 1])) and not is_text(_objects([["a"]])) and not is_text(_objects([True]))


def test_each_value_calls_once_per_distinct_text_and_keeps_the_index_and_name():
    seen = []
    series = pd.Series(["b", "a", "b", "a"], index=[7, 3, 5, 1], name="tag")
    out = each_value(lambda v: seen.append(v) or v * 2, series)
    assert seen == ["b", "a"]
    assert out.tolist() == ["bb", "aa", "bb", "aa"]
    assert out.index.tolist() == [7, 3, 5, 1] and out.name == "tag" and out.dtype == object


def test_each_value_calls_every_row_of_a_column_that_is_not_all_text():
    seen = []
    out = each_value(lambda v: seen.append(v) or repr(v), pd.Series(["a", None, "a", 1], dtype=object))
    assert seen == ["a", None, "a", 1]
    assert out.tolist() == ["'a'", "None", "'a'", "1"]


def test_each_value_calls_text_once_per_distinct_value_and_every_missing_value_on_its_own():
    seen = []
    out = each_value(lambda v: seen.append(v) or repr(v), pd.Series(["a", None, "a", float("nan"), None], dtype=object))
    assert seen[0] == "a" and seen[1] is None and seen[2] != seen[2] and seen[3] is None and len(seen) == 4
    assert out.tolist() == ["'a'", "None", "'a'", "nan", "None"]


_cells = st.one_of(st.text(max_size=3), st.none(), st.just(float("nan")), st.integers(-2, 2),
                   st.lists(st.text(max_size=1), max_size=2))


@given(st.lists(st.one_of(st.text(max_size=3), st.sampled_from(["", " a", "A ", "\x00", "a\x00"])), max_size=30)
       | st.lists(_cells, max_size=30))
def test_each_value_equals_a_call_per_row(values):
    fn = lambda v: (v.strip().lower() or None) if isinstance(v, str) else ("list" if isinstance(v, list) else repr(v))  # noqa: E731
    series = pd.Series(_objects(values), dtype=object)
    got = each_value(fn, series).tolist()
    want = [fn(v) for v in values]
    assert got == want
    assert [type(v) for v in got] == [type(v) for v in want]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), max_size=40))
def test_select_labels_is_np_select_with_the_label_objects_themselves(rows):
    labels, default = ["갑 " * 3, "을", "병"], None
    conditions = [np.array([r[i] for r in rows], dtype=bool) for i in range(3)]
    chosen = select_labels(conditions, labels, default)
    expected = np.select(conditions, labels, "")
    assert chosen.dtype == object and len(chosen) == len(rows)
    assert [v if v is not None else "" for v in chosen] == expected.tolist()
    assert {id(v) for v in chosen} <= {id(v) for v in [*labels, default]}  # the very objects given, shared


def test_verdict_columns_hold_one_str_per_verdict():
    """persona's codes, retry's and handoff's verdicts and handoff's statuses: one object per label."""
    from evals import domains
    from rules.common.environment import SAMPLE_DIR
    from rules.handoff import engine as handoff_engine
    from rules.persona import engine as persona_engine
    from rules.retry import engine as retry_engine

    for name, column, decide in (
        ("persona", "persona_code", lambda t, c: persona_engine.decided(t["turns"], t["profiles"], c)[0]),
        ("retry", "verdict", lambda t, c: retry_engine.decided(t["interaction_events"], t["surface_catalog"], c)[0]),
        ("handoff", "verdict", lambda t, c: handoff_engine.assess(t, c)),
        ("handoff", "status", lambda t, c: handoff_engine.assess(t, c)),
    ):
        spec = domains.get(name).spec
        _, judged, config = spec.load(SAMPLE_DIR / name)
        values = [v for v in decide(judged.tables, config)[column] if v is not None]
        assert len(values) > len(set(values)) > 1
        assert len({id(v) for v in values}) == len(set(values)), (name, column)
