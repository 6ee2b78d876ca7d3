"""`column_wise` hands each verdict's rows to its builder at once and puts the answers back in
the rows' order; `each` calls a function once per distinct value."""

from __future__ import annotations

import numpy as np
import orjson
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.common.evidence_table import Cited, Slot
from rules.common.explain import column_wise, each
from rules.common.json_columns import Encoded


def echo(tag):
    """A builder that says which rows (by their `n`) it was given and which verdict it is."""
    return lambda c, config: ([[{"n": n}] for n in c["n"]], [f"{tag}:{n}" for n in c["n"]], [tag] * len(c["n"]))


@given(st.lists(st.sampled_from(["a", "b", "c"]), max_size=30))
def test_every_row_gets_its_own_verdicts_answer_in_place(verdicts):
    f = pd.DataFrame({"v": pd.Series(verdicts, dtype=object), "n": np.arange(len(verdicts)), "unread": 1.5})
    cited, summaries, hedges = column_wise(f, "v", {k: echo(k) for k in "abc"}, None, ("n",))
    assert cited == [[{"n": n}] for n in range(len(verdicts))]
    assert summaries == [f"{v}:{n}" for n, v in enumerate(verdicts)]
    assert hedges == verdicts


def slots(tag):
    """`echo`'s evidence given as slots: a row cites its `n`, and its verdict only when `n` is even."""
    def build(c, config):
        n = len(c["n"])
        even = np.array([k % 2 == 0 for k in c["n"]], dtype=bool)
        cited = Cited([Slot("dataset", "t", "n", c["n"]), Slot("dataset", "t", "v", [tag] * n, even, agg="of")], n)
        return cited, [f"{tag}:{k}" for k in c["n"]], [tag] * n
    return build


def listed(n: int, verdict: str) -> list[dict]:
    return [{"dataset": "t", "field": "n", "value": n}] + (
        [{"dataset": "t", "field": "v", "value": verdict, "agg": "of"}] if n % 2 == 0 else [])


@given(st.lists(st.sampled_from(["a", "b", "c"]), max_size=30), st.booleans())
def test_evidence_given_as_slots_comes_back_in_place_as_lists_or_texts(verdicts, encoded):
    f = pd.DataFrame({"v": pd.Series(verdicts, dtype=object), "n": np.arange(len(verdicts))})
    cited, summaries, _ = column_wise(f, "v", {k: slots(k) for k in "abc"}, None, ("n",), encoded)
    want = [listed(n, v) for n, v in enumerate(verdicts)]
    if encoded and verdicts:
        assert isinstance(cited, Encoded) and cited.texts.to_pylist() == [orjson.dumps(w) for w in want]
    else:
        assert cited == want
    assert summaries == [f"{v}:{n}" for n, v in enumerate(verdicts)]


def test_encoded_evidence_mixes_slots_and_lists_and_falls_back_to_lists_where_orjson_refuses_a_value():
    f = pd.DataFrame({"v": ["a", "b", "a"], "n": [0, 1, 2]})
    cited, _, _ = column_wise(f, "v", {"a": slots("a"), "b": echo("b")}, None, ("n",), True)
    assert cited.texts.to_pylist() == [orjson.dumps(e) for e in [listed(0, "a"), [{"n": 1}], listed(2, "a")]]
    for big in (pd.DataFrame({"v": ["a", "b", "a"], "n": [0, 1, 2**70]}), pd.DataFrame({"v": ["a", "b", "a"], "n": [0, 2**70, 2]})):
        cited, _, _ = column_wise(big, "v", {"a": slots("a"), "b": echo("b")}, None, ("n",), True)
        assert cited == [listed(big["n"][0], "a"), [{"n": big["n"][1]}], listed(big["n"][2], "a")]


def test_builders_see_only_the_columns_read_as_plain_values():
    f = pd.DataFrame({"v": ["a", "b"], "n": pd.array([1, None], dtype="Int64"), "x": [np.nan, 2.0], "secret": ["s", "s"]})
    seen = []

    def build(c, config):
        seen.append({name: c[name] for name in ("v", "n", "x")})
        with pytest.raises(KeyError):
            c["secret"]
        return [[]], ["."], [None]

    column_wise(f, "v", {"a": build, "b": build}, None, ("n", "x"))
    assert seen == [{"v": ["a"], "n": [1], "x": [None]}, {"v": ["b"], "n": [None], "x": [2.0]}]
    assert type(seen[0]["n"][0]) is int


def test_an_unknown_verdict_fails_and_no_rows_give_empty_lists():
    f = pd.DataFrame({"v": ["a", "zzz"], "n": [1, 2]})
    with pytest.raises(KeyError, match="zzz"):
        column_wise(f, "v", {"a": echo("a")}, None, ("n",))
    assert column_wise(f.iloc[:0], "v", {"a": echo("a")}, None, ("n",)) == ([], [], [])


def test_each_calls_once_per_distinct_value_of_a_kind():
    calls = []

    def fn(v):
        calls.append(v)
        return repr(v)

    assert each(fn, [1, True, 1, "1", None, True, None]) == ["1", "True", "1", "'1'", "None", "True", "None"]
    assert calls == [1, True, "1", None]
    assert each(repr, [[1], [1], "x"]) == ["[1]", "[1]", "'x'"]  # unhashable values: called per value
    nan = float("nan")
    assert each(repr, [nan, nan]) == ["nan", "nan"]
