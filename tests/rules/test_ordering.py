"""`stable_order` puts rows in the order pandas' stable sort gives, whatever the keys hold."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.common.ordering import stable_order

TEXT = st.one_of(st.sampled_from(["", "a", "A", "ab", "a b", "가", "가나", "각", "é", "e\u0301", "😀", "\U0010ffff",
                                  "\uffff", "S-10", "S-9", "s-1"]),
                 st.text(max_size=3).filter(lambda t: not t.endswith("\x00")))
"""Text that pandas orders as Python does: pandas ties "a" and "a\x00" (NumPy's fixed-width text drops
trailing NULs), which `stable_order` keeps apart, as `sorted` does (last test)."""


def reference(frame, keys, ascending):
    return frame[keys].reset_index(drop=True).sort_values(keys, ascending=ascending, kind="stable",
                                                           na_position="last").index.to_numpy()


@st.composite
def frames(draw):
    n = draw(st.integers(0, 30))
    kinds = draw(st.lists(st.sampled_from(["text", "text_na", "int", "float", "nullable", "bool", "mixed"]), min_size=1, max_size=3))
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


def test_a_trailing_nul_sorts_after_the_text_without_it():
    frame = pd.DataFrame({"k": ["a\x00", "a", "", "\x00"]})
    assert [frame["k"][i] for i in stable_order(frame, ["k"])] == ["", "\x00", "a", "a\x00"]
