"""A warehouse made before a live table gained a column gets it when the tables are ensured."""

from __future__ import annotations

import sqlalchemy as sa

from orchestration.live import store


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
