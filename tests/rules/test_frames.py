"""Rows taken into a frame of one's own: what `take(...).reset_index(drop=True)` gives, copied once."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.common.frames import columns_of, renumbered, taken


def _frame(n: int) -> pd.DataFrame:
    return pd.DataFrame({"text": pd.Series([f"t{i}" for i in range(n)], dtype=object), "n": np.arange(n) * 2,
                         "maybe": pd.array([None if i % 3 else i for i in range(n)], dtype="Int64")},
                        index=pd.Index([10 * i + 7 for i in range(n)]))


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_taken_is_take_then_a_fresh_index_by_positions_or_by_mask(data):
    n = data.draw(st.integers(0, 12))
    frame = _frame(n)
    positions = np.array(data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=15) if n else st.just([])), dtype=np.int64)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    for rows, want in ((positions, frame.take(positions)), (mask, frame[mask])):
        got = taken(frame, rows)
        pd.testing.assert_frame_equal(got, want.reset_index(drop=True))
        assert isinstance(got.index, pd.RangeIndex)
        if len(got):
            got.iloc[0, 0] = "changed"
            assert "changed" not in frame["text"].tolist(), "the rows are a copy: the frame taken from is untouched"


def test_renumbered_sets_the_index_of_the_frame_it_is_given_in_place():
    frame = _frame(3)
    same = renumbered(frame)
    assert same is frame and list(frame.index) == [0, 1, 2] and list(frame["n"]) == [0, 2, 4]


def test_columns_of_reads_the_columns_in_place_and_leaves_the_frame_alone():
    frame = _frame(4)
    got = columns_of(frame, ["maybe", "text"])
    pd.testing.assert_frame_equal(got, frame[["maybe", "text"]])
    assert np.shares_memory(got["text"].to_numpy(), frame["text"].to_numpy())
    got["new"] = 1
    assert list(frame.columns) == ["text", "n", "maybe"]


def test_taken_keeps_repeated_column_names_as_take_does():
    frame = pd.DataFrame([[1, "a", 2.5], [3, "b", None]], columns=["x", "x", "y"])
    pd.testing.assert_frame_equal(taken(frame, np.array([1, 0, 1])), frame.take([1, 0, 1]).reset_index(drop=True))
