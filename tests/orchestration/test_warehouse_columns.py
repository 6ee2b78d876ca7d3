"""What the writer makes of a column: the values it binds (SQLite), a column at a time, as pandas'
own boxing and NA screen give them; the type it creates, as the one-by-one tests choose it."""

from __future__ import annotations

import math
from decimal import Decimal
from enum import IntEnum

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from assets.resources.warehouse import _column_type, python_values


class Level(IntEnum):
    LOW = 1


def boxed(series: pd.Series) -> list:
    """The values as every column's were made before: boxed, NA screened, NumPy scalars unboxed."""
    values = series.astype(object)
    values = values.where(values.notna(), None).tolist()
    if series.dtype == object:
        values = [v.item() if isinstance(v, np.generic) else v for v in values]
    return values


_objects = st.one_of(
    st.none(), st.text(max_size=3), st.integers(-10**20, 10**20), st.booleans(), st.floats(),
    st.sampled_from([float("nan"), pd.NA, pd.NaT, np.nan, np.float64(1.5), np.int64(3), np.bool_(False),
                     np.str_("s"), Decimal("NaN"), Decimal("1.5"), Level.LOW, pd.Timestamp("2026-09-08T00:00:00Z")]),
)


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(type(x) is type(y) and (x == y or (x != x and y != y)) for x, y in zip(a, b))


@settings(max_examples=500, deadline=None)
@given(st.lists(_objects, max_size=8))
def test_object_columns_bind_as_boxed(values):
    series = pd.Series(values, dtype=object)
    assert _same(python_values(series), boxed(series))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-2**63, 2**63 - 1), max_size=6), st.lists(st.booleans(), max_size=6),
       st.lists(st.floats(), max_size=6), st.lists(st.one_of(st.none(), st.integers(-9, 9)), max_size=6))
def test_typed_columns_bind_as_boxed(ints, bools, floats, nullable):
    for series in (pd.Series(ints, dtype="int64"), pd.Series([abs(i) for i in ints], dtype="uint64"),
                   pd.Series(bools, dtype=bool), pd.Series(floats, dtype="float64"),
                   pd.Series(nullable, dtype="Int64"), pd.Series(nullable, dtype="float64"),
                   pd.Series(pd.to_datetime([None if v is None else v for v in nullable], unit="s", utc=True))):
        assert _same(python_values(series), boxed(series)), series.dtype


def typed_one_by_one(series: pd.Series) -> str:
    values = [v for v in series if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if values and all(isinstance(v, bool) for v in values):
        return "BOOLEAN"
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "BIGINT"
    if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "FLOAT"
    return "TEXT"


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(_objects, st.just("x"), st.just(None), st.just(True), st.just(7)), max_size=8))
def test_an_object_column_is_typed_as_its_values_one_by_one(values):
    series = pd.Series(values, dtype=object)
    assert str(_column_type(series, False, False).compile()) == typed_one_by_one(series)
