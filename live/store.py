"""Tables of the live path, in the warehouse database.

- `live_pick_landing`: chat lines as they arrive (raw JSON text, arrival time, and the
  window they fall in when their `sent_at` is readable). One writer appends; readers poll.
- `live_pick_live_windows`: one row per judged (character, window): end, judged and stored
  times, latency from window close to verdicts stored. Its primary key makes a window judged once.
- `live_pick_live_verdicts` / `live_pick_live_quarantine`: what the window job produced.
- `live_pick_live_audit`: per judged window (by a Dagster run or the live service), the tagger and
  summary writer used, model summaries kept and fallen back, the seed's checks run on the window's
  verdicts (failing ids by check), and its counts: landing lines, judged, quarantined, late
  (kept current as late lines are recorded) and close → stored latency.
- `live_pick_live_late`: lines that arrived after their window was judged.
- `live_pick_viewer_state`: viewer relations, seeded from the reference file, updated when
  a broadcast closes; `live_pick_broadcasts`: closed broadcasts; `live_pick_broadcast_starts`:
  broadcasts started (from the console or `verdicts live-start`), with the viewer relations in force then.
- `live_pick_live_pushes`: windows the live service finished and pushed, in push order (the
  resume cursor), with the seed's checks and the window end → frame sent latency.
- `live_pick_live_late_verdicts`: the follow-up verdicts of late lines (never the window's own).
- `live_pick_live_late_pushes`: the `late` frames the live service pushed, in push order: each
  after the window push it followed (`after_push`), with its lines in frame order.
- `live_pick_live_pickups`: skipped lines the operator picked up; answered at broadcast close.
- `live_pick_live_rejudged`: the Dagster run's batch re-judgement of each window the live
  service finished: whether the streamed verdicts matched, and the msg_ids that did not.

SQLite runs in WAL mode (readers do not block the writer); PostgreSQL as is.
"""

from __future__ import annotations

import json
import weakref
from collections import Counter

import pandas as pd
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from rules.common import timestamps
from rules.common.jsonl import parse_json

JSON = sa.JSON().with_variant(JSONB(), "postgresql")
metadata = sa.MetaData()

landing = sa.Table(
    "live_pick_landing", metadata,
    sa.Column("seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True, autoincrement=True),
    sa.Column("arrived_ns", sa.BigInteger, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("msg_id", sa.Text),
    sa.Column("character_id", sa.Text),
    sa.Column("sent_ns", sa.BigInteger),
    sa.Column("window_ns", sa.BigInteger),
    # nullable: added after the first warehouses were made (`ensure_tables` adds them)
    sa.Column("raw", sa.LargeBinary),
    sa.Column("sender", sa.Text),
    sa.Column("frame_no", sa.BigInteger),
    sa.Index("ix_live_pick_landing_window", "character_id", "window_ns"),
    sa.Index("ix_live_pick_landing_sender", "sender", "frame_no"),
)
"""`raw`: the bytes as sent, kept only when `text` cannot hold them (not UTF-8, or a NUL, which
PostgreSQL's text refuses): `text` then shows them escaped. `sender`, `frame_no`: the sending
client's own id and its number for the frame the line came in, when it gave one: a frame sent
again after a reconnect is recognised as stored, never stored twice."""
windows = sa.Table(
    "live_pick_live_windows", metadata,
    sa.Column("character_id", sa.Text, primary_key=True),
    sa.Column("window_ns", sa.BigInteger, primary_key=True),
    sa.Column("window_start", sa.Text, nullable=False),
    sa.Column("window_end_ns", sa.BigInteger, nullable=False),
    sa.Column("judged_ns", sa.BigInteger, nullable=False),
    sa.Column("stored_ns", sa.BigInteger, nullable=False),
    sa.Column("latency_ms", sa.Float, nullable=False),
    sa.Column("lines", sa.Integer, nullable=False),
    sa.Column("run_id", sa.Text),
)
verdicts = sa.Table(
    "live_pick_live_verdicts", metadata,
    sa.Column("msg_id", sa.Text, primary_key=True),
    sa.Column("character_id", sa.Text, nullable=False),
    sa.Column("window_ns", sa.BigInteger, nullable=False),
    sa.Column("row", JSON, nullable=False),
    sa.Column("tags", JSON),
    sa.Column("seq", sa.BigInteger, nullable=False),
    sa.Index("ix_live_pick_live_verdicts_window", "character_id", "window_ns"),
    sa.Index("ix_live_pick_live_verdicts_seq", "seq"),
)
quarantine = sa.Table(
    "live_pick_live_quarantine", metadata,
    sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("character_id", sa.Text),
    sa.Column("window_ns", sa.BigInteger),
    sa.Column("reason_code", sa.Text, nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
)
audit = sa.Table(
    "live_pick_live_audit", metadata,
    sa.Column("character_id", sa.Text, primary_key=True),
    sa.Column("window_ns", sa.BigInteger, primary_key=True),
    sa.Column("tagger", sa.Text, nullable=False),
    sa.Column("summary_writer", sa.Text, nullable=False),
    sa.Column("summaries_kept", sa.Integer, nullable=False),
    sa.Column("summaries_fallback", sa.Integer, nullable=False),
    sa.Column("checks_run", sa.Integer, nullable=False),
    sa.Column("checks_failed", JSON, nullable=False),
    # nullable: added after the first warehouses were made (`ensure_tables` adds them)
    sa.Column("lines", sa.Integer),
    sa.Column("judged", sa.Integer),
    sa.Column("quarantined", sa.Integer),
    sa.Column("late", sa.Integer),
    sa.Column("latency_ms", sa.Float),
)
late = sa.Table(
    "live_pick_live_late", metadata,
    sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("msg_id", sa.Text),
    sa.Column("character_id", sa.Text),
    sa.Column("window_ns", sa.BigInteger),
    sa.Column("arrived_ns", sa.BigInteger, nullable=False),
    sa.Column("judged_ns", sa.BigInteger, nullable=False),
    sa.Index("ix_live_pick_live_late_msg_id", "msg_id"),  # the live service looks copies up by id
)
viewer_state = sa.Table(
    "live_pick_viewer_state", metadata,
    sa.Column("viewer_id", sa.Text, primary_key=True),
    sa.Column("row", JSON, nullable=False),
    sa.Column("updated_ns", sa.BigInteger, nullable=False),
)
broadcasts = sa.Table(
    "live_pick_broadcasts", metadata,
    sa.Column("character_id", sa.Text, primary_key=True),
    sa.Column("last_window_ns", sa.BigInteger, primary_key=True),
    sa.Column("first_window_ns", sa.BigInteger, nullable=False),
    sa.Column("closed_ns", sa.BigInteger, nullable=False),
    sa.Column("answered", sa.Integer, nullable=False),
)
starts = sa.Table(
    "live_pick_broadcast_starts", metadata,
    sa.Column("character_id", sa.Text, primary_key=True),
    sa.Column("started_ns", sa.BigInteger, primary_key=True),
    sa.Column("first_window_ns", sa.BigInteger, nullable=False),
    sa.Column("viewers", sa.Integer, nullable=False),
    sa.Column("started_by", sa.Text),
    sa.Column("ended_ns", sa.BigInteger),  # set by the close that ends it
    # one broadcast on air per character, whichever processes start it at once
    sa.Index("ux_live_pick_broadcast_on_air", "character_id", unique=True,
             sqlite_where=sa.text("ended_ns IS NULL"), postgresql_where=sa.text("ended_ns IS NULL")),
)
pushes = sa.Table(
    "live_pick_live_pushes", metadata,
    sa.Column("push_seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True, autoincrement=True),
    sa.Column("character_id", sa.Text, nullable=False),
    sa.Column("window_ns", sa.BigInteger, nullable=False),
    sa.Column("checks", JSON, nullable=False),
    sa.Column("quarantined", JSON, nullable=False),
    sa.Column("msg_order", JSON, nullable=False),
    sa.Column("pushed_ms", sa.Float),
    sa.UniqueConstraint("character_id", "window_ns", name="uq_live_pick_live_pushes_window"),
)
late_verdicts = sa.Table(
    "live_pick_live_late_verdicts", metadata,
    sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("msg_id", sa.Text, nullable=False),
    sa.Column("character_id", sa.Text, nullable=False),
    sa.Column("window_ns", sa.BigInteger, nullable=False),
    sa.Column("row", JSON, nullable=False),
)
late_pushes = sa.Table(
    "live_pick_live_late_pushes", metadata,
    sa.Column("late_seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True, autoincrement=True),
    sa.Column("after_push", sa.BigInteger, nullable=False),
    sa.Column("character_id", sa.Text, nullable=False),
    sa.Column("window_ns", sa.BigInteger, nullable=False),
    sa.Column("window_start", sa.Text),
    sa.Column("seq_order", JSON, nullable=False),
    sa.Index("ix_live_pick_live_late_pushes_after", "after_push"),
)
epochs = sa.Table(
    "live_pick_live_epochs", metadata,
    sa.Column("epoch", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True, autoincrement=True),
    sa.Column("started_ns", sa.BigInteger, nullable=False),
)
"""One row per start of the live service: its frames are numbered 1, 2, 3, … within its epoch."""
deliveries = sa.Table(
    "live_pick_live_deliveries", metadata,
    sa.Column("epoch", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("ref", sa.Text),
    sa.Column("character_id", sa.Text),
    sa.Column("window_ns", sa.BigInteger),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("frame", sa.LargeBinary, nullable=False),
    sa.Index("ix_live_pick_live_deliveries_ref", "kind", "ref"),
    sa.Index("ix_live_pick_live_deliveries_window", "character_id", "window_ns"),
)
"""Every frame the live service pushed to consoles (windows, late follow-ups, pick-ups, lines quarantined
outside any window), as the exact bytes sent, numbered without gaps within the service's epoch: a
console that resumes is sent these very bytes. `ref` names what the frame is of (a window's push
sequence, a late frame's sequence, a picked-up msg_id, a quarantined landing seq)."""
LIVE_SERVICE = "live-service"
"""`run_id` of a window the live service finished (a Dagster run writes its own run id)."""
rejudged = sa.Table(
    "live_pick_live_rejudged", metadata,
    sa.Column("character_id", sa.Text, primary_key=True),
    sa.Column("window_ns", sa.BigInteger, primary_key=True),
    sa.Column("window_start", sa.Text, nullable=False),
    sa.Column("matches", sa.Boolean, nullable=False),
    sa.Column("differing", JSON, nullable=False),
    sa.Column("lines", sa.Integer, nullable=False),
    sa.Column("checked_ns", sa.BigInteger, nullable=False),
    sa.Column("run_id", sa.Text),
)
pickups = sa.Table(
    "live_pick_live_pickups", metadata,
    sa.Column("msg_id", sa.Text, primary_key=True),
    sa.Column("character_id", sa.Text, nullable=False),
    sa.Column("window_ns", sa.BigInteger, nullable=False),
    sa.Column("verdict", sa.Text, nullable=False),
    sa.Column("picked_ns", sa.BigInteger, nullable=False),
    sa.Column("by", sa.Text),
)


_ENSURED: "weakref.WeakSet[sa.Engine]" = weakref.WeakSet()
"""Engines whose tables this process has made or brought up to date: looked at once, not on every
call (reflecting every table's columns costs a live window's opening about 13 ms)."""


def ensure_tables(engine: sa.Engine) -> None:
    if engine in _ENSURED:
        return
    metadata.create_all(engine)
    _add_new_columns(engine)
    _add_new_indexes(engine)
    _ENSURED.add(engine)


def _add_new_indexes(engine: sa.Engine) -> None:
    """Indexes added to a table after a warehouse made it, made in place."""
    have = {ix["name"] for found in sa.inspect(engine).get_multi_indexes().values() for ix in found}  # one query
    for table in metadata.sorted_tables:
        for index in table.indexes:
            if index.name not in have:
                try:
                    index.create(engine, checkfirst=True)
                except (sa.exc.OperationalError, sa.exc.ProgrammingError) as exc:  # another process made it first
                    if "already exists" not in str(exc):
                        raise


def _add_new_columns(engine: sa.Engine) -> None:
    """Columns added to a table after a warehouse made it (all nullable), added in place."""
    inspector = sa.inspect(engine)
    missing = [(t, c) for t in metadata.sorted_tables for c in t.columns
               if c.name not in {have["name"] for have in inspector.get_columns(t.name)}]
    if not missing:
        return
    guard = "IF NOT EXISTS " if engine.dialect.name == "postgresql" else ""
    for table, col in missing:
        try:
            with engine.begin() as conn:
                conn.execute(sa.text(f'ALTER TABLE "{table.name}" ADD COLUMN {guard}"{col.name}" {col.type.compile(dialect=engine.dialect)}'))
        except sa.exc.OperationalError as exc:  # SQLite: another process added it first
            if "duplicate column" not in str(exc):
                raise


def audit_row(key: tuple[str, int], audit: dict, lines: int, judged: int, quarantined: int, latency_ms: float) -> dict:
    """The audit row of a window just stored (no line is late yet)."""
    return {"character_id": key[0], "window_ns": key[1], **audit, "lines": lines, "judged": judged,
            "quarantined": quarantined, "late": 0, "latency_ms": latency_ms}


def count_late(conn, counts: dict[tuple[str, int], int]) -> None:
    """Late lines just recorded, added to their windows' audit rows."""
    for (character, window_ns), n in counts.items():
        conn.execute(sa.update(audit).where(audit.c.character_id == character, audit.c.window_ns == window_ns)
                     .values(late=sa.func.coalesce(audit.c.late, 0) + n))


def closed_unjudged(engine: sa.Engine, now_ns: int, window_seconds: int, grace_seconds: float) -> list[tuple[str, int]]:
    """(character, window) pairs whose window has closed (plus grace) and hold unjudged lines."""
    step = window_seconds * timestamps.NS_PER_SEC
    latest_start = now_ns - step - int(grace_seconds * timestamps.NS_PER_SEC)
    judged = sa.select(windows.c.character_id, windows.c.window_ns)
    q = (
        sa.select(landing.c.character_id, landing.c.window_ns)
        .where(landing.c.window_ns.is_not(None), landing.c.character_id.is_not(None), landing.c.window_ns <= latest_start)
        .where(sa.tuple_(landing.c.character_id, landing.c.window_ns).not_in(judged))
        .distinct()
        .order_by(landing.c.window_ns, landing.c.character_id)
    )
    with engine.connect() as conn:
        return [(c, int(w)) for c, w in conn.execute(q)]


def already_judged(engine: sa.Engine, keys: list[tuple[str, int]]) -> set[tuple[str, int]]:
    if not keys:
        return set()
    q = sa.select(windows.c.character_id, windows.c.window_ns).where(
        sa.tuple_(windows.c.character_id, windows.c.window_ns).in_(keys)
    )
    with engine.connect() as conn:
        return {(c, int(w)) for c, w in conn.execute(q)}


def judged_msg_ids(engine: sa.Engine, msg_ids: list[str]) -> set[str]:
    if not msg_ids:
        return set()
    with engine.connect() as conn:
        return set(conn.execute(sa.select(verdicts.c.msg_id).where(verdicts.c.msg_id.in_(msg_ids))).scalars())


def lines_for(engine: sa.Engine, keys: list[tuple[str, int]]) -> pd.DataFrame:
    """Landing lines of the given windows, shaped as raw dataset lines (file, line, text)."""
    q = sa.select(landing.c.seq, landing.c.text, landing.c.character_id, landing.c.window_ns).where(
        sa.tuple_(landing.c.character_id, landing.c.window_ns).in_(keys)
    ).order_by(landing.c.seq)
    with engine.connect() as conn:
        rows = conn.execute(q).all()
    return pd.DataFrame({
        "dataset": "live_chat", "file": "live_pick_landing", "line": [int(r.seq) for r in rows],
        "text": [r.text for r in rows], "character_id": [r.character_id for r in rows],
        "window_ns": [int(r.window_ns) for r in rows],
    }, columns=["dataset", "file", "line", "text", "character_id", "window_ns"])


def unwindowed(engine: sa.Engine, now_ns: int, older_than_ns: int) -> pd.DataFrame:
    """Lines whose window cannot be known (unreadable sent_at or character), not yet quarantined."""
    q = sa.select(landing.c.seq, landing.c.text).where(
        sa.or_(landing.c.window_ns.is_(None), landing.c.character_id.is_(None)),
        landing.c.arrived_ns <= now_ns - older_than_ns,
        landing.c.seq.not_in(sa.select(quarantine.c.seq)),
    )
    with engine.connect() as conn:
        rows = conn.execute(q).all()
    return pd.DataFrame({"dataset": "live_chat", "file": "live_pick_landing", "line": [int(r.seq) for r in rows],
                         "text": [r.text for r in rows]}, columns=["dataset", "file", "line", "text"])


def store_windows(
    engine: sa.Engine,
    keys: list[tuple[str, int]],
    rows: list[dict],
    window_of: dict[str, tuple[str, int]],
    quarantined: pd.DataFrame,
    window_meta: dict[tuple[str, int], dict],
    tags_of: dict[str, list | None],
    seq_of: dict[str, int],
    judged_ns: int,
    run_id: str | None,
    clock,
    audit_of: dict[tuple[str, int], dict] | None = None,
) -> dict[tuple[str, int], float]:
    """Store verdicts, quarantine and window rows in one transaction; latency per window (ms)."""
    latencies = {}
    with engine.begin() as conn:
        done = {(c, int(w)) for c, w in conn.execute(
            sa.select(windows.c.character_id, windows.c.window_ns).where(sa.tuple_(windows.c.character_id, windows.c.window_ns).in_(keys))
        )}
        todo = [k for k in keys if k not in done]  # a window is judged once, whoever got there first
        fresh = [r for r in rows if window_of[r["msg_id"]] in todo]
        seen = {m for (m,) in conn.execute(sa.select(verdicts.c.msg_id).where(verdicts.c.msg_id.in_([r["msg_id"] for r in fresh])))}
        new = [r for r in fresh if r["msg_id"] not in seen]
        if new:
            conn.execute(verdicts.insert(), [
                {"msg_id": r["msg_id"], "character_id": window_of[r["msg_id"]][0], "window_ns": window_of[r["msg_id"]][1],
                 "row": r, "tags": tags_of.get(r["msg_id"]), "seq": seq_of[r["msg_id"]]}
                for r in new
            ])
        already = set(conn.execute(sa.select(quarantine.c.seq).where(quarantine.c.seq.in_([int(x) for x in quarantined["line"]]))).scalars())
        q = [r for r in quarantined.to_dict("records")
             if int(r["line"]) not in already and (r.get("window") is None or tuple(r["window"]) in todo)]
        if q:
            conn.execute(quarantine.insert(), [
                {"seq": int(r["line"]), "character_id": (r.get("window") or (None, None))[0],
                 "window_ns": (r.get("window") or (None, None))[1], "reason_code": r["reason_code"], "reason": r["reason"]}
                for r in q
            ])
        stored_ns = clock()
        for key in todo:
            meta = window_meta[key]
            latencies[key] = (stored_ns - meta["window_end_ns"]) / 1e6
            conn.execute(windows.insert(), {
                "character_id": key[0], "window_ns": key[1], "window_start": meta["window_start"],
                "window_end_ns": meta["window_end_ns"], "judged_ns": judged_ns, "stored_ns": stored_ns,
                "latency_ms": latencies[key], "lines": meta["lines"], "run_id": run_id,
            })
            if audit_of and key in audit_of:
                conn.execute(audit.insert(), audit_row(
                    key, audit_of[key], meta["lines"], sum(1 for r in new if window_of[r["msg_id"]] == key),
                    sum(1 for r in q if r.get("window") is not None and tuple(r["window"]) == key), latencies[key]))
    return latencies


def _late_query():
    j = windows
    return (
        sa.select(landing.c.seq, landing.c.msg_id, landing.c.character_id, landing.c.window_ns, landing.c.arrived_ns, j.c.judged_ns)
        .join(j, sa.and_(j.c.character_id == landing.c.character_id, j.c.window_ns == landing.c.window_ns))
        # not among what the window's run judged or quarantined: it came after
        .where(landing.c.seq.not_in(sa.select(verdicts.c.seq)))
        .where(landing.c.seq.not_in(sa.select(quarantine.c.seq)))
        .where(landing.c.seq.not_in(sa.select(late.c.seq)))
    )


def unrecorded_late(engine: sa.Engine) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(_late_query().subquery())).scalar_one()


def record_late(engine: sa.Engine) -> int:
    """Lines that landed in a window after it was judged; recorded once each."""
    q = _late_query()
    with engine.begin() as conn:
        rows = [dict(r._mapping) for r in conn.execute(q)]
        if rows:
            conn.execute(late.insert(), rows)
            count_late(conn, Counter((r["character_id"], int(r["window_ns"])) for r in rows))
    return len(rows)


def viewer_state_empty(engine: sa.Engine) -> bool:
    with engine.connect() as conn:
        return not conn.execute(sa.select(sa.func.count()).select_from(viewer_state)).scalar_one()


def state_rows(relation: pd.DataFrame) -> list[dict]:
    """Gated viewer relations as the viewer state keeps them (one row object per viewer)."""
    return [{k: r.get(k) for k in ("viewer_id", "nickname", "closeness_level", "answered_topics", "last_replied_at", "note")}
            for r in relation.to_dict("records")]


def seed_viewer_state(engine: sa.Engine, relation: pd.DataFrame, now_ns: int, replace: bool = False) -> int:
    """Load viewer relations from the reference table once, when the state is empty (`replace`: in
    place of the state there is, as `verdicts live-reseed` does). Returns the viewers loaded."""
    with engine.begin() as conn:
        if replace:
            conn.execute(sa.delete(viewer_state))
        elif conn.execute(sa.select(sa.func.count()).select_from(viewer_state)).scalar_one():
            return 0
        rows = [{"viewer_id": r["viewer_id"], "updated_ns": now_ns, "row": r} for r in state_rows(relation)]
        if rows:
            conn.execute(viewer_state.insert(), rows)
    return len(rows)


def load_json(value):
    """A JSON column's value: PostgreSQL returns objects, SQLite may return text."""
    return parse_json(value) if isinstance(value, str) else value


def viewer_lines(engine: sa.Engine) -> pd.DataFrame:
    """The viewer state as raw viewer_relation lines, for the same gates as files."""
    with engine.connect() as conn:
        rows = conn.execute(sa.select(viewer_state.c.row).order_by(viewer_state.c.viewer_id)).scalars().all()
    rows = [load_json(r) for r in rows]
    return pd.DataFrame({"dataset": "viewer_relation", "file": "live_pick_viewer_state", "line": range(1, len(rows) + 1),
                         "text": [json.dumps(r, ensure_ascii=False) for r in rows]}, columns=["dataset", "file", "line", "text"])


def unverified(engine: sa.Engine, limit: int = 200) -> list[tuple[str, int]]:
    """Windows the live service finished that no Dagster run has re-judged yet, oldest first."""
    q = (sa.select(windows.c.character_id, windows.c.window_ns).where(windows.c.run_id == LIVE_SERVICE)
         .where(sa.tuple_(windows.c.character_id, windows.c.window_ns).not_in(sa.select(rejudged.c.character_id, rejudged.c.window_ns)))
         .order_by(windows.c.window_ns, windows.c.character_id).limit(limit))
    with engine.connect() as conn:
        return [(c, int(w)) for c, w in conn.execute(q)]
