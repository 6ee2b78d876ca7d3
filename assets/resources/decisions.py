"""Manual-check decisions in the warehouse: one row per (check, item), the latest decision wins.

The admin pages and `verdicts review` both write and read this table, so a decision made in one
shows in the other and fills the report's person-checked rows. SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from datetime import datetime, timezone

import sqlalchemy as sa

TABLE = "review_decisions"
NOTE_LIMIT = 2000

_metadata = sa.MetaData()
decisions_table = sa.Table(
    TABLE, _metadata,
    sa.Column("check_key", sa.Text, primary_key=True),
    sa.Column("item_id", sa.Text, primary_key=True),
    sa.Column("domain", sa.Text, nullable=False),
    sa.Column("decision", sa.Text, nullable=False),
    sa.Column("note", sa.Text),
    sa.Column("scope", sa.Text),  # where the person saw the item (the run's scope)
    sa.Column("reviewer", sa.Text),
    sa.Column("decided_at", sa.Text, nullable=False),
)


def ensure_table(engine: sa.Engine) -> None:
    _metadata.create_all(engine, tables=[decisions_table], checkfirst=True)


def record(engine: sa.Engine, *, domain: str, check_key: str, item_id: str, decision: str, note: str | None = None,
           scope: str = "", reviewer: str | None = None) -> dict:
    """Store one decision, replacing an earlier one for the same check and item (in one transaction)."""
    from evals.manual_checks import DECISIONS

    if decision not in DECISIONS:
        raise ValueError(f"decision must be one of {', '.join(DECISIONS)}, not {decision!r}")
    row = {"check_key": check_key, "item_id": item_id, "domain": domain, "decision": decision,
           "note": (note or "").strip()[:NOTE_LIMIT] or None, "scope": scope, "reviewer": reviewer,
           "decided_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    ensure_table(engine)
    t = decisions_table
    with engine.begin() as conn:
        conn.execute(sa.delete(t).where((t.c.check_key == check_key) & (t.c.item_id == item_id)))
        conn.execute(t.insert(), [row])
    return row


def read(engine: sa.Engine, domain: str) -> dict[str, dict[str, dict]]:
    """check key → item id → {decision, note, scope, reviewer, decided_at} for the domain."""
    ensure_table(engine)
    t = decisions_table
    with engine.connect() as conn:
        rows = conn.execute(sa.select(t).where(t.c.domain == domain)).mappings().all()
    out: dict[str, dict[str, dict]] = {}
    for r in rows:
        out.setdefault(r["check_key"], {})[r["item_id"]] = dict(r)
    return out
