"""COPY's CSV text, made a column at a time, is the text of the one-value rule applied row by row."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assets.resources import copy_csv
from assets.resources.copy_csv import copy_chunks, copy_literal
from assets.resources.warehouse import WarehouseResource


def row_by_row(frame: pd.DataFrame) -> str:
    return "".join(",".join(copy_literal(v) for v in row) + "\n" for row in frame.itertuples(index=False, name=None))


_texts = st.text(alphabet=st.sampled_from(['a', '"', ",", "\n", "\\", "N", "한", "😀", " ", "\r"]), max_size=6)
_scalars = st.one_of(
    st.none(), _texts, st.integers(-10**20, 10**20), st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
    st.just(float("nan")), st.just(np.float64(2.5)), st.just(np.int64(7)), st.just(np.bool_(True)), st.just(pd.NA),
    st.just(pd.NaT), st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1)),
)
_ns = st.integers(-2**62, 2**62).map(lambda n: n - n % 1000 if n % 3 == 0 else n - n % 10**9 if n % 3 == 1 else n)


def _column(n: int):
    return st.one_of(
        st.lists(_scalars, min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype=object)),
        st.lists(st.one_of(_texts, st.none()), min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype=object)),
        st.lists(st.integers(-2**63, 2**63 - 1), min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype="int64")),
        st.lists(st.floats(), min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype="float64")),
        st.lists(st.floats(width=32), min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype="float32")),
        st.lists(st.booleans(), min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype=bool)),
        st.lists(st.one_of(st.integers(-5, 5), st.none()), min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype="Int64")),
        st.lists(st.one_of(st.booleans(), st.none()), min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype="boolean")),
        st.lists(st.one_of(_ns, st.none()), min_size=n, max_size=n).flatmap(lambda ns: st.sampled_from([
            pd.Series(pd.to_datetime(pd.array(ns, dtype="Int64"), unit="ns")),
            pd.Series(pd.to_datetime(pd.array(ns, dtype="Int64"), unit="ns", utc=True)),
            pd.Series(pd.to_datetime(pd.array(ns, dtype="Int64"), unit="ns", utc=True)).dt.tz_convert("Asia/Seoul"),
            pd.Series(pd.to_datetime(pd.array(ns, dtype="Int64"), unit="ns", utc=True)).dt.tz_convert(timezone.utc),
        ])),
    )


@st.composite
def frames(draw):
    n = draw(st.integers(0, 7))
    columns = draw(st.lists(_column(n), min_size=1, max_size=5))
    return pd.DataFrame({f"c{k}": c.reset_index(drop=True) for k, c in enumerate(columns)})


@settings(max_examples=600, deadline=None)
@given(frames(), st.integers(1, 4))
def test_column_wise_text_is_the_row_by_row_text(frame, rows):
    assert "".join(copy_chunks(frame, rows)) == row_by_row(frame)
    assert len(list(copy_chunks(frame, rows))) == math.ceil(len(frame) / rows)


def test_instants_keep_their_fraction_as_isoformat_writes_it():
    ns = [0, 1, 1_000, 1_500, 123_000_000, -1, -1_000, None]
    for series in (pd.Series(pd.to_datetime(pd.array(ns, dtype="Int64"), unit="ns", utc=True)),
                   pd.Series(pd.to_datetime(pd.array(ns, dtype="Int64"), unit="ns"))):
        got = copy_csv.column_fields(series)
        assert got == [copy_literal(v) for v in series]
        assert got[:3] == [f'"1970-01-01T00:00:00{f}{"+00:00" if series.dt.tz else ""}"' for f in ("", ".000000001", ".000001")]
        assert got[-3:-1] == ['"1969-12-31T23:59:59.999999999' + ("+00:00" if series.dt.tz else "") + '"',
                              '"1969-12-31T23:59:59.999999' + ("+00:00" if series.dt.tz else "") + '"']
        assert got[-1] == r"\N"


def test_nulls_of_every_kind_are_unquoted_and_empty_text_is_quoted():
    frame = pd.DataFrame({"t": ["", None, float("nan"), pd.NA, pd.NaT], "f": [1.0, math.nan, 2.0, 3.0, 4.0]})
    assert copy_csv.column_fields(frame["t"]) == ['""', r"\N", r"\N", r"\N", r"\N"]
    assert copy_csv.column_fields(frame["f"]) == ['"1.0"', r"\N", '"2.0"', '"3.0"', '"4.0"']


@pytest.mark.parametrize("driver", ["psycopg2", "psycopg"])
def test_a_partition_of_many_pieces_is_stored_whole_and_in_order(driver, postgres_url, monkeypatch):
    monkeypatch.setattr(copy_csv, "CHUNK_ROWS", 2)
    warehouse = WarehouseResource(url=postgres_url.replace("postgresql+psycopg2://", f"postgresql+{driver}://"))
    frame = pd.DataFrame({
        "id": [f"r{i}" for i in range(7)],
        "text": ['a "b", c', None, "", "줄\n바꿈", "\\N", "x", "y"],
        "n": range(7),
        "at": pd.to_datetime([f"2026-09-08T0{i}:00:00.25Z" for i in range(7)], utc=True),
    })
    warehouse.replace_partition("pieces", "d", frame, index_columns=("id",))
    back = warehouse.read_partition("pieces", "d").sort_values("n").reset_index(drop=True)
    assert back["id"].tolist() == frame["id"].tolist()
    assert back["text"].tolist() == frame["text"].tolist()
    assert (pd.to_datetime(back["at"], utc=True) == frame["at"]).all()
