"""A function of a text column, called once per distinct value."""

from __future__ import annotations

import numpy as np

from rules.common.distinct import is_text, per_distinct_text


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


def test_an_empty_column_gives_an_empty_array():
    assert per_distinct_text(str.upper, _objects([])).tolist() == []


def test_text_is_text_and_missing_values_alone_count_as_text():
    assert is_text(_objects(["a", None])) and is_text(_objects([None, None])) and is_text(_objects([]))
    assert not is_text(_objects(["a", 1])) and not is_text(_objects([["a"]])) and not is_text(_objects([True]))
