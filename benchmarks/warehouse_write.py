"""Partition write rate of the warehouse: SQLite (executemany) and PostgreSQL (COPY).

    .venv/bin/python benchmarks/warehouse_write.py [ROWS] [POSTGRES_ADMIN_URL]

Writes one partition of ROWS verdict-like rows (text, integers, a JSON list) twice (the
second write replaces the first) and prints seconds and rows per second for each store.
PostgreSQL is skipped with a notice when unreachable.
"""

from __future__ import annotations

import sys
import tempfile
import time
import uuid
from pathlib import Path

import pandas as pd
import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assets.resources.warehouse import WarehouseResource  # noqa: E402


def frame(n: int) -> pd.DataFrame:
    return pd.DataFrame({
        "msg_id": [f"MSG-{i}" for i in range(n)],
        "verdict": ["지금 답변할 질문"] * n,
        "rank_in_window": pd.array([i % 7 + 1 for i in range(n)], dtype=object),
        "evidence": [[{"dataset": "live_chat", "field": "donation_amount", "value": i}] for i in range(n)],
        "summary": ["미르냥이 5,000원을 얹어 물은 노래 이야기입니다."] * n,
        "sent_at": ["2026-09-08T21:14:03"] * n,
    })


def measure(name: str, wh: WarehouseResource, data: pd.DataFrame) -> None:
    times = []
    for _ in range(2):
        t = time.perf_counter()
        wh.replace_partition("bench", "2026-09-08", data, ("evidence",), time_columns=("sent_at",), index_columns=("msg_id",))
        times.append(time.perf_counter() - t)
    print(f"{name:<12} {len(data):>9,} rows  first {times[0]:6.2f} s  replace {times[1]:6.2f} s  {len(data) / times[1]:>10,.0f} rows/s")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    admin_url = sys.argv[2] if len(sys.argv) > 2 else "postgresql+psycopg2://postgres@127.0.0.1:5432/postgres"
    data = frame(n)
    with tempfile.TemporaryDirectory() as tmp:
        measure("sqlite", WarehouseResource(url=f"sqlite:///{tmp}/bench.sqlite"), data)
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    name = f"verdicts_bench_{uuid.uuid4().hex[:8]}"
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001
        print(f"postgresql   skipped: {exc.__class__.__name__}")
        return
    try:
        base = admin_url.rsplit("/", 1)[0]
        for driver in ("psycopg2", "psycopg"):
            url = base.replace("postgresql+psycopg2", f"postgresql+{driver}") + f"/{name}"
            measure(f"pg/{driver}", WarehouseResource(url=url), data)
    finally:
        from assets.resources.warehouse import _engine

        _engine.cache_clear()  # drop pooled connections before the database goes
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


if __name__ == "__main__":
    main()
