"""`stable_order` puts rows in the order pandas' stable sort gives, whatever the keys hold."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.common.ordering import runs_start, stable_order, stable_order_and_keys

TEXT = st.one_of(st.sampled_from(["", "a", "A", "ab", "a b", "가", "가나", "각", "é", "e\u0301", "😀", "\U0010ffff",
                                  "\uffff", "S-10", "S-9", "s-1"]),
                 st.text(max_size=3).filter(lambda t: "\x00" not in t))
"""Text that pandas orders as Python does: pandas ties texts that agree up to a NUL ("a" and "a\x00", ""
and "\x000": its hashing of text reads up to the first NUL), which `stable_order` keeps apart, as
`sorted` does (last test)."""


def reference(frame, keys, ascending):
    return frame[keys].reset_index(drop=True).sort_values(keys, ascending=ascending, kind="stable",
                                                           na_position="last").index.to_numpy()


@st.composite
def frames(draw):
    n = draw(st.integers(0, 30))
    kinds = draw(st.lists(st.sampled_from(["text", "text_na", "int", "float", "nullable", "bool", "mixed", "int_objects",
                                           "bool_objects", "number_objects"]), min_size=1, max_size=3))
    data = {}
    for i, kind in enumerate(kinds):
        if kind == "text":
            values = pd.Series(draw(st.lists(TEXT, min_size=n, max_size=n)), dtype=object)
        elif kind == "text_na":
            values = pd.Series(draw(st.lists(st.one_of(TEXT, st.sampled_from([None, np.nan])), min_size=n, max_size=n)), dtype=object)
        elif kind == "int":
            values = pd.Series(draw(st.lists(st.integers(-3, 3) | st.sampled_from([2**63 - 1, -2**63]), min_size=n, max_size=n)), dtype="int64")
        elif kind == "float":
            values = pd.Series(draw(st.lists(st.sampled_from([0.0, -0.0, 1.5, -2.0, np.nan, np.inf, -np.inf]), min_size=n, max_size=n)), dtype="float64")
        elif kind == "nullable":
            values = pd.Series(draw(st.lists(st.one_of(st.integers(-3, 3), st.none()), min_size=n, max_size=n)), dtype="Int64")
        elif kind == "bool":
            values = pd.Series(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
        elif kind == "int_objects":  # Python ints, missing values, an int past 64 bits now and then
            values = pd.Series(draw(st.lists(st.one_of(st.integers(-3, 3), st.sampled_from([None, np.nan, 2**63 - 1, -2**63, 2**64])),
                                             min_size=n, max_size=n)), dtype=object)
        elif kind == "bool_objects":
            values = pd.Series(draw(st.lists(st.sampled_from([True, False, None, np.nan]), min_size=n, max_size=n)), dtype=object)
        elif kind == "number_objects":  # ints beside bools (pandas ties True and 1) or floats
            values = pd.Series(draw(st.lists(st.sampled_from([0, 1, 2, True, False, 1.0, 0.5, None]), min_size=n, max_size=n)), dtype=object)
        else:
            values = pd.Series(draw(st.lists(st.one_of(TEXT, st.integers(0, 3)), min_size=n, max_size=n)), dtype=object)
        data[f"c{i}"] = values
    frame = pd.DataFrame(data, index=draw(st.permutations(range(n))) if n else None)
    ascending = draw(st.lists(st.booleans(), min_size=len(kinds), max_size=len(kinds)))
    return frame, list(data), ascending


@settings(max_examples=400, deadline=None)
@given(frames())
def test_stable_order_is_pandas_stable_sort(case):
    frame, keys, ascending = case
    try:
        want = reference(frame, keys, ascending)
    except TypeError:  # pandas cannot order mixed text and numbers either
        return
    assert stable_order(frame, keys, ascending).tolist() == want.tolist()


def test_text_keys_sort_by_code_point_as_python_does():
    frame = pd.DataFrame({"k": ["가", "\uffff", "😀", "z", "Z", "", "ㄱ"]})
    assert [frame["k"][i] for i in stable_order(frame, ["k"])] == sorted(frame["k"])


def test_a_nul_sorts_as_python_orders_it():
    frame = pd.DataFrame({"k": ["a\x00", "a", "", "\x00", "\x000"], "c": [True] * 5})
    assert [frame["k"][i] for i in stable_order(frame, ["k"])] == ["", "\x00", "\x000", "a", "a\x00"]
    assert [frame["k"][i] for i in stable_order(frame, ["c", "k"], [False, False])] == ["a\x00", "a", "\x000", "\x00", ""]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["R-1", "R-1\x00", "R\x00-1", "가", "", "R-2"]), max_size=40))
def test_runs_start_where_a_neighbour_differs_whether_compared_as_arrow_text_or_objects(values):
    values = np.array(sorted(values), dtype=object)
    want = [i == 0 or values[i] != values[i - 1] for i in range(len(values))]
    assert runs_start(values).tolist() == want
    assert runs_start(values, pa.array(values.tolist(), type=pa.string())).tolist() == want
    with_null = np.array([*values.tolist(), None, None], dtype=object)
    assert runs_start(with_null, pa.array(with_null.tolist(), type=pa.string())).tolist() == [*want, True, False]


def test_stable_order_and_keys_gives_the_arrow_keys_it_sorted_or_none():
    frame = pd.DataFrame({"a": ["b", "a", "b"], "n": [2, 1, 0], "mixed": pd.Series([3, 2.5, None], dtype=object)})
    order, keys = stable_order_and_keys(frame, ["a", "n"])
    assert order.tolist() == [1, 2, 0] and [k.to_pylist() for k in keys] == [["b", "a", "b"], [2, 1, 0]]
    order, keys = stable_order_and_keys(frame, ["mixed"])
    assert keys is None and order.tolist() == stable_order(frame, ["mixed"]).tolist()


def test_object_columns_of_python_ints_or_bools_are_sorted_by_arrow():
    frame = pd.DataFrame({"n": pd.Series([3, None, -1, 3, 10**12], dtype=object),
                          "q": pd.Series([True, False, None, True, False], dtype=object)})
    order, keys = stable_order_and_keys(frame, ["q", "n"], [False, False])
    assert keys is not None and [k.type for k in keys] == [pa.bool_(), pa.int64()]
    assert order.tolist() == [0, 3, 4, 1, 2] == reference(frame, ["q", "n"], [False, False]).tolist()
    assert stable_order_and_keys(frame.assign(n=pd.Series([1, 2**64, 0, 1, 1], dtype=object)), ["n"])[1] is None
