"""Partition writes replace, atomically, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import pandas as pd
import pytest

from assets.resources.warehouse import WarehouseResource


@pytest.fixture(params=["sqlite", "psycopg2", "psycopg"])
def warehouse(request, tmp_path):
    if request.param == "sqlite":
        return WarehouseResource(url=f"sqlite:///{tmp_path / 'wh.sqlite'}")
    url = request.getfixturevalue("postgres_url").replace("postgresql+psycopg2://", f"postgresql+{request.param}://")
    return WarehouseResource(url=url)


def _frame(n: int, tag: str) -> pd.DataFrame:
    return pd.DataFrame({"id": [f"{tag}-{i}" for i in range(n)], "value": list(range(n)), "tags": [["a", tag]] * n})


def test_replace_partition_keeps_one_copy_and_other_partitions(warehouse):
    warehouse.replace_partition("t", "2026-09-08", _frame(3, "x"), ("tags",))
    warehouse.replace_partition("t", "2026-09-09", _frame(2, "y"), ("tags",))
    warehouse.replace_partition("t", "2026-09-08", _frame(4, "z"), ("tags",))
    day1 = warehouse.read_partition("t", "2026-09-08", ("tags",))
    assert list(day1["id"]) == ["z-0", "z-1", "z-2", "z-3"]
    assert day1["tags"].iloc[0] == ["a", "z"]
    assert warehouse.count_partition("t", "2026-09-09") == 2


def test_a_write_failing_half_way_leaves_the_previous_rows(warehouse):
    warehouse.replace_partition("t", "2026-09-08", _frame(3, "x"), ("tags",))
    bad = pd.DataFrame({"id": ["ok-1", "ok-2", "bad"], "value": [1, 2, object()], "tags": [None, None, None]})
    with pytest.raises(Exception):
        warehouse.replace_partition("t", "2026-09-08", bad, ("tags",))
    rows = warehouse.read_partition("t", "2026-09-08", ("tags",))
    assert list(rows["id"]) == ["x-0", "x-1", "x-2"]


def test_reading_a_table_never_written_says_what_to_do(warehouse):
    with pytest.raises(LookupError, match="materialise its upstream"):
        warehouse.read_partition("nothing_here", "2026-09-08")
    assert warehouse.count_partition("nothing_here", "2026-09-08") == 0


def test_round_trip_keeps_values_nulls_and_empty_strings(warehouse):
    frame = pd.DataFrame({
        "id": ["a", "b", "c"],
        "n": pd.array([1, None, 3], dtype=object),
        "flag": [True, False, True],
        "text": ["", None, 'quote " comma , newline\n 한글'],
        "tags": [["노래"], None, []],
        "sent_at": ["2026-09-08T21:14:03", "2026-09-08T12:14:03+00:00", "2026-09-08T21:14:03Z"],
    })
    warehouse.replace_partition("rt", "d", frame, ("tags",), time_columns=("sent_at",), index_columns=("id",),
                                kinds={"n": "integer", "flag": "boolean"})
    back = warehouse.read_partition("rt", "d", ("tags",)).sort_values("id").reset_index(drop=True)
    assert list(back.columns) == list(frame.columns)
    assert back["text"].tolist()[0] == "" and back["text"].isna().tolist()[1] and back["text"].tolist()[2] == frame["text"][2]
    assert back["tags"].tolist() == [["노래"], None, []]
    assert [None if pd.isna(v) else int(v) for v in back["n"]] == [1, None, 3]
    assert [bool(v) for v in back["flag"]] == [True, False, True]
    assert back["sent_at"].tolist() == frame["sent_at"].tolist()


def test_postgresql_columns_are_typed_even_from_an_empty_first_partition(postgres_url):
    import sqlalchemy as sa

    wh = WarehouseResource(url=postgres_url)
    empty = pd.DataFrame({"id": pd.Series(dtype=object), "age": pd.Series(dtype=object), "tags": pd.Series(dtype=object),
                          "sent_at": pd.Series(dtype=object)})
    wh.replace_partition("typed", "d1", empty, time_columns=("sent_at",), index_columns=("id",),
                         kinds={"id": "text", "age": "integer", "tags": "json", "sent_at": "text"})
    with wh.engine.connect() as conn:
        types = dict(conn.execute(sa.text(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'typed'")).all())
        indexes = {r[0] for r in conn.execute(sa.text("SELECT indexname FROM pg_indexes WHERE tablename = 'typed'"))}
    assert types["age"] == "bigint" and types["tags"] == "jsonb" and types["sent_at_utc"] == "timestamp with time zone"
    assert {"ix_typed_partition_key", "ix_typed_id"} <= indexes


def test_sqlite_rows_are_stored_as_sqlalchemys_own_insert_stores_them(tmp_path):
    """The SQLite write binds each column with its type's bind processor through the driver; the
    stored values and their SQLite types are those of SQLAlchemy's insert of the same records."""
    import sqlite3

    import numpy as np
    import sqlalchemy as sa

    frame = pd.DataFrame({
        "id": ["a", "b", "c", "d"],
        "n": pd.array([1, None, 3, -(2**62)], dtype="Int64"),
        "x": [1.5, float("nan"), -0.0, 1e300],
        "flag": [True, False, True, False],
        "maybe": [True, None, False, None],
        "mixed": [1, "two", None, np.int64(4)],
        "text": ["", None, 'quote " 한글 😀', "\x00nul"],
        "tags": [["노래"], None, [], ["a", 1]],
        "sent_at": ["2026-09-08T21:14:03", "2026-09-08T12:14:03.250+00:00", None, "2026-09-08T21:14:03Z"],
    })
    stored = {}
    for name in ("driver", "sqlalchemy"):
        warehouse = WarehouseResource(url=f"sqlite:///{tmp_path / name}.sqlite")
        if name == "sqlalchemy":  # the reference: SQLAlchemy's own insert of the records
            def reference(conn, target, out):
                conn.execute(target.insert(), out.astype(object).where(out.notna(), None).to_dict("records"))
            import assets.resources.warehouse as module
            original, module._insert_rows = module._insert_rows, reference
            try:
                warehouse.replace_partition("t", "d", frame, ("tags",), time_columns=("sent_at",), kinds={"n": "integer"})
            finally:
                module._insert_rows = original
        else:
            warehouse.replace_partition("t", "d", frame, ("tags",), time_columns=("sent_at",), kinds={"n": "integer"})
        sa.create_engine(warehouse.url).dispose()
        with sqlite3.connect(tmp_path / f"{name}.sqlite") as db:
            cols = [r[1] for r in db.execute("PRAGMA table_info(t)")]
            stored[name] = db.execute(f"SELECT {', '.join(f'{c}, typeof({c})' for c in cols)} FROM t ORDER BY id").fetchall()
    assert stored["driver"] == stored["sqlalchemy"]
    assert len(stored["driver"]) == 4


def test_a_json_column_gives_back_every_kind_of_value_as_written(warehouse):
    """PostgreSQL's driver hands a jsonb value back already read; only SQLite's text is read here,
    so a text value stays a text, however much it looks like JSON."""
    values = ["abc", "123", '["not", "a list"]', "", 7, 2.5, True, {"k": ["v", 1]}, ["x", {"y": None}], None]
    frame = pd.DataFrame({"id": [f"r{i:02d}" for i in range(len(values))], "payload": pd.Series(values, dtype=object)})
    warehouse.replace_partition("kinds", "d", frame, ("payload",), index_columns=("id",))
    back = warehouse.read_partition("kinds", "d", ("payload",)).sort_values("id").reset_index(drop=True)
    got = [None if v is None or (isinstance(v, float) and v != v) else v for v in back["payload"].tolist()]
    assert got == values
    assert [type(v) for v in got] == [type(v) for v in values]


def test_a_large_append_is_written_in_slices_with_the_same_rows_and_types(warehouse, monkeypatch):
    import assets.resources.warehouse as W

    monkeypatch.setattr(W, "WRITE_SLICE_ROWS", 2)
    typed = pd.DataFrame({"id": [f"k-{i}" for i in range(5)], "value": pd.Series([None, None, 3, 4, 5], dtype=object), "tags": [["a"]] * 5})
    with warehouse.writes() as writes:
        out = writes.table("typed", "2026-09-08", json_columns=("tags",), kinds={"id": "text", "value": "integer"})
        assert out.append(typed) == 5
        assert out.append(typed.assign(id=[f"m-{i}" for i in range(5)])) == 5
    back = warehouse.read_partition("typed", "2026-09-08", ("tags",))
    assert list(back["id"]) == [*(f"k-{i}" for i in range(5)), *(f"m-{i}" for i in range(5))]
    assert back["value"].tolist()[2:5] == [3, 4, 5] and back["tags"].iloc[9] == ["a"]
    # Without kinds, the first frame types the table whole: its leading nulls do not make `value` text.
    warehouse.replace_partition("untyped", "2026-09-08", typed.drop(columns=["tags"]))
    assert [int(v) for v in warehouse.read_partition("untyped", "2026-09-08")["value"].tolist()[2:]] == [3, 4, 5]
    assert warehouse.columns("untyped") and "INT" in _column_types(warehouse, "untyped")["value"].upper()


def _column_types(warehouse, table: str) -> dict[str, str]:
    import sqlalchemy as sa

    with warehouse.engine.connect() as conn:
        return {c["name"]: str(c["type"]) for c in sa.inspect(conn).get_columns(table)}
