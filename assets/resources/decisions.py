"""Manual-check decisions in the warehouse: one row per (check, item, reviewer), the latest wins.

The admin pages, `verdicts review`, `verdicts agree`, `verdicts eval` and the Dagster report all
read this one table (through `read`), so a decision made in one shows in every other and fills
the reports' person-checked rows. Several reviewers decide the same item; each one's latest
decision is kept. SQLite and PostgreSQL alike.

A table made before reviewers were part of the key (key: check, item) is moved over once, in
one transaction, each row keeping the reviewer it recorded.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timezone

import sqlalchemy as sa

TABLE = "review_decisions"
NOTE_LIMIT = 2000
REVIEWER_LIMIT = 80
UNNAMED = "(이름 없음)"

_metadata = sa.MetaData()
decisions_table = sa.Table(
    TABLE, _metadata,
    sa.Column("check_key", sa.Text, primary_key=True),
    sa.Column("item_id", sa.Text, primary_key=True),
    sa.Column("reviewer", sa.Text, primary_key=True),
    sa.Column("domain", sa.Text, nullable=False),
    sa.Column("decision", sa.Text, nullable=False),
    sa.Column("note", sa.Text),
    sa.Column("scope", sa.Text),  # where the person saw the item (the run's scope)
    sa.Column("decided_at", sa.Text, nullable=False),
)
COLUMNS = [c.name for c in decisions_table.columns]


def ensure_table(engine: sa.Engine) -> None:
    inspector = sa.inspect(engine)
    if inspector.has_table(TABLE) and "reviewer" not in inspector.get_pk_constraint(TABLE)["constrained_columns"]:
        _move_to_reviewer_key(engine)
    _metadata.create_all(engine, tables=[decisions_table], checkfirst=True)


def _move_to_reviewer_key(engine: sa.Engine) -> None:
    old = f"{TABLE}_before_reviewers"
    with engine.begin() as conn:
        conn.execute(sa.text(f'ALTER TABLE "{TABLE}" RENAME TO "{old}"'))
        if engine.dialect.name == "postgresql":  # the renamed table keeps its key's name, which the new table needs
            conn.execute(sa.text(f'ALTER TABLE "{old}" RENAME CONSTRAINT "{TABLE}_pkey" TO "{old}_pkey"'))
        _metadata.create_all(conn, tables=[decisions_table])
        rows = conn.execute(sa.text(f'SELECT * FROM "{old}"')).mappings().all()
        if rows:
            conn.execute(decisions_table.insert(), [{**{k: r.get(k) for k in COLUMNS}, "reviewer": r.get("reviewer") or UNNAMED}
                                                    for r in rows])
        conn.execute(sa.text(f'DROP TABLE "{old}"'))


def reviewer_name(name: str | None) -> str:
    """A reviewer's name as stored: trimmed, bounded; a blank one is refused."""
    text = " ".join((name or "").split())[:REVIEWER_LIMIT]
    if not text:
        raise ValueError("a decision needs the reviewer's name")
    return text


def record(engine: sa.Engine, *, domain: str, check_key: str, item_id: str, decision: str, reviewer: str,
           note: str | None = None, scope: str = "") -> dict:
    """Store one reviewer's decision, replacing their earlier one for the same check and item (one transaction)."""
    from evals.manual_checks import DECISIONS

    if decision not in DECISIONS:
        raise ValueError(f"decision must be one of {', '.join(DECISIONS)}, not {decision!r}")
    reviewer = reviewer_name(reviewer)
    row = {"check_key": check_key, "item_id": item_id, "reviewer": reviewer, "domain": domain, "decision": decision,
           "note": (note or "").strip()[:NOTE_LIMIT] or None, "scope": scope,
           "decided_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    ensure_table(engine)
    t = decisions_table
    with engine.begin() as conn:
        conn.execute(sa.delete(t).where((t.c.check_key == check_key) & (t.c.item_id == item_id) & (t.c.reviewer == reviewer)))
        conn.execute(t.insert(), [row])
    return row


def read(engine: sa.Engine, domain: str) -> dict[str, dict[str, dict[str, dict]]]:
    """check key → item id → reviewer → {decision, note, scope, decided_at} for the domain."""
    ensure_table(engine)
    t = decisions_table
    with engine.connect() as conn:
        rows = conn.execute(sa.select(t).where(t.c.domain == domain)).mappings().all()
    out: dict[str, dict[str, dict[str, dict]]] = {}
    for r in rows:
        out.setdefault(r["check_key"], {}).setdefault(r["item_id"], {})[r["reviewer"]] = dict(r)
    return out


def read_if_stored(url: str, domain: str) -> dict[str, dict[str, dict[str, dict]]]:
    """`read` from a warehouse URL; nothing when it is a SQLite file that does not exist yet (a command
    run outside any project must not leave a warehouse behind)."""
    from pathlib import Path

    from assets.resources.warehouse import _engine

    made = sa.engine.make_url(url)
    if made.get_backend_name() == "sqlite" and made.database and not Path(made.database).exists():
        return {}
    return read(_engine(url), domain)


EXPORT_COLUMNS = ["domain", "check_key", "item_id", "reviewer", "decision", "note", "decided_at", "scope", "verdict", "summary"]
"""One row per decision, then the decided row's ids and metadata (`item`: nested in JSON, one column each in CSV)."""
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""A CSV cell starting so is read as a formula by spreadsheets: it is written with a leading apostrophe."""


def export_rows(domain: str, check_key: str, sampled: list[str], stored: dict[str, dict[str, dict]], items: dict[str, dict],
                verdict_key: str, summary_field: str) -> list[dict]:
    """The decisions on a check's sample, each with the decided row's ids and metadata (`items`: id → verdict row)."""
    out = []
    for item_id in sampled:
        row = items.get(item_id, {})
        meta = {k: v for k, v in row.items() if k.endswith(("_id", "_no")) or k in ("window_start", "surface_key", "prompt_ver")}
        for reviewer, d in sorted(stored.get(item_id, {}).items()):
            out.append({"domain": domain, "check_key": check_key, "item_id": item_id, "reviewer": reviewer, "decision": d.get("decision"),
                        "note": d.get("note"), "decided_at": d.get("decided_at"), "scope": d.get("scope"),
                        "verdict": row.get(verdict_key), "summary": row.get(summary_field), "item": meta})
    return out


def export_csv(rows: list[dict]) -> str:
    meta = list(dict.fromkeys(k for r in rows for k in r["item"]))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*EXPORT_COLUMNS, *meta])
    for r in rows:
        writer.writerow([_cell(r.get(c)) for c in EXPORT_COLUMNS] + [_cell(r["item"].get(k)) for k in meta])
    return buffer.getvalue()


def _cell(value) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return "'" + text if text.startswith(FORMULA_START) else text


def export_json(rows: list[dict]) -> str:
    return json.dumps(rows, ensure_ascii=False, indent=2)
