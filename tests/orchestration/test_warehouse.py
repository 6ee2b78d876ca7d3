"""Partition writes replace, atomically, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import pandas as pd
import pytest

from orchestration.resources.warehouse import WarehouseResource


@pytest.fixture(params=["sqlite", "postgresql"])
def warehouse(request, tmp_path):
    if request.param == "sqlite":
        return WarehouseResource(url=f"sqlite:///{tmp_path / 'wh.sqlite'}")
    return WarehouseResource(url=request.getfixturevalue("postgres_url"))


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
