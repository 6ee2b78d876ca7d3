"""`output_frame` gives what `assign`, column selection and `reset_index` gave."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.common.output import output_frame


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 6), st.permutations(["a", "b", "c", "evidence", "reason"]), st.lists(st.integers(0, 9), max_size=6))
def test_output_frame_is_assign_then_select_then_reset(n, columns, index):
    index = (index + list(range(100, 106)))[:n]
    f = pd.DataFrame({
        "a": pd.Series(range(n), dtype="int64"), "b": pd.Series([None, "x", 1.5, [1], "y", None][:n], dtype=object),
        "c": pd.array([1, None, 3, None, 5, 6][:n], dtype="Int64"), "left_out": np.arange(n, dtype=float),
    }, index=pd.Index(index, dtype="int64"))
    evidence, reason = [[{"k": i}] for i in range(n)], [f"r{i}" for i in range(n)]
    want = f.assign(evidence=pd.Series(evidence, index=f.index, dtype=object),
                    reason=pd.Series(reason, index=f.index, dtype=object))[list(columns)].reset_index(drop=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = output_frame(f, list(columns), evidence=evidence, reason=reason)
    pd.testing.assert_frame_equal(got, want)
    assert list(f.columns) == ["a", "b", "c", "left_out"]  # the feature frame is left as it was


def test_output_frame_copies_no_feature_column():
    f = pd.DataFrame({"a": np.arange(5), "b": pd.array([1, None, 3, 4, 5], dtype="Int64"), "c": np.arange(5.0)})
    got = output_frame(f, ["b", "a", "reason"], reason=list("vwxyz"))
    assert np.shares_memory(got["a"].to_numpy(), f["a"].to_numpy())
    assert got["b"].array is f["b"].array
