"""`add_looked_up` adds what a many-to-one left merge adds, value for value and dtype for dtype."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pandas.errors import MergeError

from rules.common.lookup import add_looked_up

KEYS = st.sampled_from(["a", "b", "c", "가", None, np.nan])


@st.composite
def tables(draw):
    n_right = draw(st.integers(0, 5))
    right_keys = draw(st.lists(st.sampled_from(["a", "b", "c", "가", None]), min_size=n_right, max_size=n_right, unique=True))
    n = len(right_keys)
    right = pd.DataFrame({
        "k": pd.Series(right_keys, dtype=object),
        "n": draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n)),
        "f": draw(st.lists(st.floats(allow_nan=True, allow_infinity=False), min_size=n, max_size=n)),
        "t": pd.Series(draw(st.lists(st.one_of(st.none(), st.text(max_size=2)), min_size=n, max_size=n)), dtype=object),
        "b": pd.Series(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool),
        "i": pd.Series(draw(st.lists(st.one_of(st.none(), st.integers(0, 3)), min_size=n, max_size=n)), dtype="Int64"),
        "l": pd.Series([[i] for i in range(n)], dtype=object),
    })
    m = draw(st.integers(0, 12))
    left = pd.DataFrame({"k": pd.Series(draw(st.lists(KEYS, min_size=m, max_size=m)), dtype=object), "x": range(m)})
    return left, right


@settings(max_examples=300, deadline=None)
@given(tables())
def test_adds_what_a_many_to_one_left_merge_adds(case):
    left, right = case
    columns = ["n", "f", "t", "b", "i", "l"]
    want = left.merge(right, on="k", how="left", validate="many_to_one")
    got = left.copy()
    add_looked_up(got, right, ["k"], columns)
    pd.testing.assert_frame_equal(got, want)


def test_two_keys_and_a_repeated_key():
    right = pd.DataFrame({"c": ["a", "a", "b"], "v": pd.array([1, 2, None], dtype="Int64"), "x": [1.5, 2.5, 3.5]})
    left = pd.DataFrame({"c": ["a", "b", "a", "z"], "v": pd.array([2, None, 1, 1], dtype="Int64")})
    got = left.copy()
    add_looked_up(got, right, ["c", "v"], ["x"])
    pd.testing.assert_frame_equal(got, left.merge(right, on=["c", "v"], how="left", validate="many_to_one"))
    with pytest.raises(MergeError):
        add_looked_up(left.copy(), right, ["c"], ["x"])


def test_two_keys_tell_apart_text_that_differs_after_a_nul():
    right = pd.DataFrame({"c": ["a\x00b", "a\x00c", "a"], "v": [1, 1, 1], "x": [1.5, 2.5, 3.5]})
    left = pd.DataFrame({"c": ["a\x00c", "a", "a\x00b", "a\x00"], "v": [1, 1, 1, 1]})
    got = left.copy()
    add_looked_up(got, right, ["c", "v"], ["x"])
    assert got["x"].tolist()[:3] == [2.5, 3.5, 1.5] and np.isnan(got["x"].iat[3])


@settings(max_examples=200, deadline=None)
@given(tables(), st.lists(st.sampled_from(["x", "y", None]), min_size=12, max_size=12))
def test_two_keys_add_what_a_merge_on_both_adds(case, seconds):
    left, right = case
    right = right.assign(k2=pd.Series(seconds[:len(right)], dtype=object))
    left = left.assign(k2=pd.Series(seconds[::-1][:len(left)], dtype=object))
    got = left.copy()
    add_looked_up(got, right, ["k", "k2"], ["n", "t", "i"])
    pd.testing.assert_frame_equal(got, left.merge(right[["k", "k2", "n", "t", "i"]], on=["k", "k2"], how="left",
                                                   validate="many_to_one"))
