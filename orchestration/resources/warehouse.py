"""The warehouse: every table of every domain, one SQLAlchemy URL away.

SQLite by default (no server); PostgreSQL when `WAREHOUSE_URL` says so. Tables carry a
`partition_key` column, and writing a partition replaces it inside one transaction, so a
re-run never duplicates rows and a failed write leaves the previous rows in place.
"""

from __future__ import annotations

import json
from functools import lru_cache

import pandas as pd
import sqlalchemy as sa
from dagster import ConfigurableResource
from pydantic import Field

PARTITION_COLUMN = "partition_key"


@lru_cache(maxsize=8)
def _engine(url: str) -> sa.Engine:
    if url.startswith("sqlite"):
        from pathlib import Path

        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(url, connect_args={"timeout": 30})

        @sa.event.listens_for(engine, "connect")
        def _wal(dbapi_conn, _):  # readers do not block the writer
            dbapi_conn.execute("PRAGMA journal_mode=WAL")

        return engine
    return sa.create_engine(url, pool_pre_ping=True)


class WarehouseResource(ConfigurableResource):
    """Partitioned tables in a SQL database (list and map cells stored as JSON)."""

    url: str = Field(description="SQLAlchemy URL, e.g. sqlite:///var/warehouse.sqlite or postgresql+psycopg2://…")

    @property
    def engine(self) -> sa.Engine:
        return _engine(self.url)

    def replace_partition(
        self, table: str, partition_key: str, frame: pd.DataFrame, json_columns: tuple[str, ...] = ()
    ) -> int:
        """Replace one partition's rows of `table` with `frame`, atomically."""
        out = frame.copy()
        for col in json_columns:
            if col in out.columns:
                out[col] = out[col].map(lambda v: None if v is None else json.dumps(v, ensure_ascii=False))
        out.insert(0, PARTITION_COLUMN, partition_key)
        with self.engine.begin() as conn:
            if sa.inspect(conn).has_table(table):
                conn.execute(sa.text(f'DELETE FROM "{table}" WHERE {PARTITION_COLUMN} = :p'), {"p": partition_key})
            out.to_sql(table, conn, if_exists="append", index=False, chunksize=5_000)
        return len(out)

    def read_partition(self, table: str, partition_key: str, json_columns: tuple[str, ...] = ()) -> pd.DataFrame:
        with self.engine.connect() as conn:
            if not sa.inspect(conn).has_table(table):
                raise LookupError(f"warehouse table {table} does not exist yet; materialise its upstream assets first")
            frame = pd.read_sql_query(
                sa.text(f'SELECT * FROM "{table}" WHERE {PARTITION_COLUMN} = :p'), conn, params={"p": partition_key}
            )
        frame = frame.drop(columns=[PARTITION_COLUMN])
        for col in json_columns:
            if col in frame.columns:
                frame[col] = frame[col].map(lambda v: None if v is None else json.loads(v))
        return frame

    def count_partition(self, table: str, partition_key: str) -> int:
        with self.engine.connect() as conn:
            if not sa.inspect(conn).has_table(table):
                return 0
            return conn.execute(
                sa.text(f'SELECT COUNT(*) FROM "{table}" WHERE {PARTITION_COLUMN} = :p'), {"p": partition_key}
            ).scalar_one()
