"""A warehouse made before a live table gained a column or an index gets it when the tables are ensured."""

from __future__ import annotations

import sqlalchemy as sa

from live import store


def test_ensure_tables_adds_the_columns_a_table_gained_since_the_warehouse_was_made(tmp_path):
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'old.sqlite'}")
    with engine.begin() as conn:  # the audit table as the first warehouses have it
        conn.execute(sa.text('CREATE TABLE live_pick_live_audit (character_id TEXT, window_ns BIGINT, tagger TEXT NOT NULL, '
                             'summary_writer TEXT NOT NULL, summaries_kept INTEGER NOT NULL, summaries_fallback INTEGER NOT NULL, '
                             'checks_run INTEGER NOT NULL, checks_failed JSON NOT NULL, PRIMARY KEY (character_id, window_ns))'))
        conn.execute(sa.text("INSERT INTO live_pick_live_audit VALUES ('A', 0, 'kiwi', 'template', 0, 0, 15, '{}')"))
    store.ensure_tables(engine)
    store.ensure_tables(engine)  # twice: nothing left to add
    columns = {c["name"] for c in sa.inspect(engine).get_columns("live_pick_live_audit")}
    assert {"lines", "judged", "quarantined", "late", "latency_ms"} <= columns
    with engine.begin() as conn:
        conn.execute(store.audit.insert(), store.audit_row(("B", 30), {"tagger": "kiwi", "summary_writer": "template",
                                                                       "summaries_kept": 0, "summaries_fallback": 0,
                                                                       "checks_run": 15, "checks_failed": {}}, 4, 3, 1, 12.5))
        store.count_late(conn, {("A", 0): 2, ("B", 30): 1})
        got = {r.character_id: (r.lines, r.judged, r.quarantined, r.late) for r in conn.execute(sa.select(store.audit))}
    assert got == {"A": (None, None, None, 2), "B": (4, 3, 1, 1)}
    engine.dispose()


def test_ensure_tables_adds_the_indexes_a_table_gained_since_the_warehouse_was_made(tmp_path):
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'old.sqlite'}")
    with engine.begin() as conn:  # the late table as the first warehouses have it: no index on msg_id
        conn.execute(sa.text("CREATE TABLE live_pick_live_late (seq BIGINT PRIMARY KEY, msg_id TEXT, character_id TEXT, "
                             "window_ns BIGINT, arrived_ns BIGINT NOT NULL, judged_ns BIGINT NOT NULL)"))
    store.ensure_tables(engine)
    store.ensure_tables(engine)  # twice: nothing left to add
    assert "ix_live_pick_live_late_msg_id" in {ix["name"] for ix in sa.inspect(engine).get_indexes("live_pick_live_late")}
    with engine.connect() as conn:
        plan = " ".join(str(r) for r in conn.exec_driver_sql(
            "EXPLAIN QUERY PLAN SELECT msg_id, seq FROM live_pick_live_late WHERE msg_id IN ('M-1', 'M-2')"))
    assert "ix_live_pick_live_late_msg_id" in plan, plan
    engine.dispose()


def test_ensure_tables_adds_a_missing_index_on_postgresql_too(postgres_url):
    engine = sa.create_engine(postgres_url)
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE live_pick_live_late (seq BIGINT PRIMARY KEY, msg_id TEXT, character_id TEXT, "
                             "window_ns BIGINT, arrived_ns BIGINT NOT NULL, judged_ns BIGINT NOT NULL)"))
    store.ensure_tables(engine)
    store.ensure_tables(engine)
    assert "ix_live_pick_live_late_msg_id" in {ix["name"] for ix in sa.inspect(engine).get_indexes("live_pick_live_late")}
    engine.dispose()
