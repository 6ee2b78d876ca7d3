"""What the live service writes to the warehouse and reads back: the live path's own tables
(`orchestration.live.store`), one transaction per window, and the frames rebuilt for resume."""

from __future__ import annotations

import sqlite3
import orjson
import pandas as pd
import sqlalchemy as sa

from orchestration.live import store
from rules.common import timestamps
from rules.common.jsonl import compact
from rules.common.checks import CheckResult
from rules.live_pick import verdicts as V

Key = tuple[str, int]


def window_frame(character_id: str, window_ns: int, window_start: str, window_end_ns: int, lines: int, latency_ms: float,
                 checks: list[dict], rows: list[dict], quarantined: list[dict], push_seq: int, tz: str) -> dict:
    """The `window` frame pushed to consoles; the same whether live or rebuilt from the store."""
    form = window_start[19:]
    return {
        "type": "window", "seq": push_seq, "character_id": character_id, "window_start": window_start,
        "window_end": timestamps.format_ns(window_end_ns, form, tz), "window_end_ns": window_end_ns, "lines": lines,
        "latency_ms": round(latency_ms, 1), "checks": checks, "verdicts": rows, "quarantined": quarantined,
    }


def window_json(frame: dict) -> bytes:
    """A window frame as UTF-8 JSON. A live frame's verdicts are their stored texts (`stored_rows`),
    spliced in as they are: the frame's megabytes at 400 lines/s are not encoded a second time in
    the latency path."""
    return orjson.dumps(frame)


def stored_rows(params: list[dict]) -> list[orjson.Fragment]:
    """The verdict rows of `verdict_params` as a frame carries them: their JSON texts, written into
    the frame's JSON as they are (`window_json`)."""
    return [orjson.Fragment(p["row"]) for p in params]


def checks_json(results: list[CheckResult]) -> list[dict]:
    return [{"name": r.id, "title": r.title, "passed": r.passed, "failing_ids": r.failing_ids[:50], "detail": r.detail}
            for r in results]


def quarantine_rows(q: pd.DataFrame, window_of: dict[int, Key | None]) -> list[dict]:
    return [{"seq": int(r["line"]), "msg_id": r["id"], "character_id": (window_of.get(int(r["line"])) or (None, None))[0],
             "window_ns": (window_of.get(int(r["line"])) or (None, None))[1], "reason_code": r["reason_code"],
             "reason": r["reason"]} for r in q.to_dict("records")]


def store_quarantine(engine: sa.Engine, rows: list[dict]) -> None:
    if not rows:
        return
    with engine.begin() as conn:
        have = set(conn.execute(sa.select(store.quarantine.c.seq).where(store.quarantine.c.seq.in_([r["seq"] for r in rows]))).scalars())
        fresh = [{k: r[k] for k in ("seq", "character_id", "window_ns", "reason_code", "reason")} for r in rows if r["seq"] not in have]
        if fresh:
            conn.execute(store.quarantine.insert(), fresh)


def store_late(engine: sa.Engine, key: Key, rows: list[dict], seq_of: dict[str, int], arrived_ns: dict[str, int], now_ns: int,
               after_push: int) -> dict:
    """Late lines: counted in the late table, their follow-up verdicts kept apart from the window's,
    and the `late` frame's place in push order (after window push `after_push`). Returns the frame."""
    with engine.begin() as conn:
        have = set(conn.execute(sa.select(store.late.c.seq).where(store.late.c.seq.in_(list(seq_of.values())))).scalars())
        fresh = [{"seq": seq_of[r["msg_id"]], "msg_id": r["msg_id"], "character_id": key[0], "window_ns": key[1],
                  "arrived_ns": arrived_ns[r["msg_id"]], "judged_ns": now_ns} for r in rows if seq_of[r["msg_id"]] not in have]
        if fresh:  # the sensor path may have recorded some of them already
            conn.execute(store.late.insert(), fresh)
            store.count_late(conn, {key: len(fresh)})
        conn.execute(store.late_verdicts.insert(), [
            {"seq": seq_of[r["msg_id"]], "msg_id": r["msg_id"], "character_id": key[0], "window_ns": key[1], "row": r}
            for r in rows])
        start = rows[0]["window_start"] if rows else None
        late_seq = conn.execute(store.late_pushes.insert().returning(store.late_pushes.c.late_seq), {
            "after_push": after_push, "character_id": key[0], "window_ns": key[1], "window_start": start,
            "seq_order": [seq_of[r["msg_id"]] for r in rows]}).scalar_one()
    return late_frame(int(late_seq), after_push, key, start, rows)


def late_frame(late_seq: int, after_push: int, key: Key, window_start: str | None, rows: list[dict]) -> dict:
    """The `late` frame pushed to consoles; the same whether live or rebuilt from the store.
    Its place in push order is (`after`, `late_seq`); a window's is (`seq`, 0)."""
    return {"type": "late", "late_seq": late_seq, "after": after_push, "character_id": key[0], "window_ns": key[1],
            "window_start": window_start, "lines": len(rows), "verdicts": rows}


def position(frame: dict) -> tuple[int, int]:
    """Where a window or late frame stands in push order."""
    return (frame["seq"], 0) if frame["type"] == "window" else (frame["after"], frame["late_seq"])


VALUES_ROWS = 1000
"""Rows per INSERT statement of a window's verdicts on SQLite. The driver lets other threads run
while SQLite executes each statement, and must then wait for the interpreter lock again: up to a
switch interval (5 ms) whenever the event loop is busy, as it is while frames go out. Row by row
(executemany) a 3,000-row window waited that 3,000 times; a statement of many rows waits once."""

_VERDICT_TEXT = sa.table(store.verdicts.name, *(sa.column(c.name) for c in store.verdicts.columns))
"""The verdicts table written with values already in stored form (JSON as text: `verdict_params`)."""


def verdict_params(key: Key, rows: list[dict], tags_of: dict, seq_of: dict) -> list[dict]:
    """A window's verdict rows as `store_window` writes them, JSON already encoded (as the JSON
    column would: None as null). Made before the window is due when it can be, so that storing
    it is only the insert."""
    return [{"msg_id": r["msg_id"], "character_id": key[0], "window_ns": key[1], "row": compact(r),
             "tags": compact(tags_of.get(r["msg_id"])), "seq": seq_of[r["msg_id"]]} for r in rows]


def insert_verdicts(conn: sa.Connection, params: list[dict]) -> None:
    """`verdict_params` rows into the verdicts table. On SQLite, up to VALUES_ROWS rows per INSERT
    statement, straight through the driver; elsewhere through SQLAlchemy, whose PostgreSQL insert
    sends many rows per statement."""
    if conn.dialect.name != "sqlite":
        conn.execute(_VERDICT_TEXT.insert(), params)
        return
    names = list(params[0])
    limit = conn.connection.dbapi_connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    per = max(1, min(VALUES_ROWS, limit // len(names)))
    head = f'INSERT INTO "{store.verdicts.name}" ({", ".join(names)}) VALUES '
    one = f'({", ".join("?" * len(names))})'
    for i in range(0, len(params), per):
        part = params[i:i + per]
        conn.exec_driver_sql(head + ",".join([one] * len(part)), tuple(v for p in part for v in p.values()))


def store_window(engine: sa.Engine, key: Key, window_start: str, window_end_ns: int, lines: int, msg_order: list[str],
                 params: list[dict], checks: list[dict], quarantined: list[dict], judged_ns: int, clock,
                 audit: dict, replacing: int | None = None) -> tuple[int, float] | None:
    """Verdicts (`params`: `verdict_params` of the rows, `msg_order` their msg_ids in push order), the window row (close → stored latency),
    its audit row (as a Dagster run writes one) and the push record, in one transaction.

    `replacing`: the push this service stored for the window in its grace and never pushed (a
    straggler arrived since): that result is deleted in the same transaction, with any Dagster
    re-judgement of it, so the window is judged once, with every line it holds.

    Returns (push sequence, stored latency ms), or None when the window was already judged
    (the Dagster sensor got there first: a window is judged once).
    """
    with engine.begin() as conn:
        if replacing is not None:
            unstore_window(conn, key, replacing)
        if conn.execute(sa.select(sa.func.count()).select_from(store.windows).where(
                store.windows.c.character_id == key[0], store.windows.c.window_ns == key[1])).scalar_one():
            return None
        if params:
            insert_verdicts(conn, params)
        stored_ns = clock()
        latency = (stored_ns - window_end_ns) / 1e6
        conn.execute(store.windows.insert(), {
            "character_id": key[0], "window_ns": key[1], "window_start": window_start, "window_end_ns": window_end_ns,
            "judged_ns": judged_ns, "stored_ns": stored_ns, "latency_ms": latency, "lines": lines, "run_id": store.LIVE_SERVICE})
        conn.execute(store.audit.insert(), store.audit_row(key, audit, lines, len(msg_order), len(quarantined), latency))
        push = conn.execute(store.pushes.insert().returning(store.pushes.c.push_seq), {
            "character_id": key[0], "window_ns": key[1], "checks": checks, "quarantined": quarantined,
            "msg_order": msg_order, "pushed_ms": None}).scalar_one()
    return int(push), latency


def unstore_window(conn: sa.Connection, key: Key, push_seq: int) -> None:
    """Delete this service's unpushed result of a window (push `push_seq`): its verdicts, window,
    audit and push rows, and a Dagster re-judgement of it. A window judged by a Dagster run is left as it is."""
    if not conn.execute(sa.select(sa.func.count()).select_from(store.pushes).where(
            store.pushes.c.push_seq == push_seq, store.pushes.c.character_id == key[0],
            store.pushes.c.window_ns == key[1], store.pushes.c.pushed_ms.is_(None))).scalar_one():
        return
    for table in (store.verdicts, store.audit, store.rejudged):
        conn.execute(sa.delete(table).where(table.c.character_id == key[0], table.c.window_ns == key[1]))
    conn.execute(sa.delete(store.windows).where(store.windows.c.character_id == key[0], store.windows.c.window_ns == key[1],
                                                store.windows.c.run_id == store.LIVE_SERVICE))
    conn.execute(sa.delete(store.pushes).where(store.pushes.c.push_seq == push_seq))


def set_pushed(engine: sa.Engine, pushed: list[tuple[int, float]]) -> None:
    """Window pushes' end → sent latencies: (push sequence, ms) each, in one transaction."""
    with engine.begin() as conn:
        for push_seq, latency_ms in pushed:
            conn.execute(sa.update(store.pushes).where(store.pushes.c.push_seq == push_seq).values(pushed_ms=latency_ms))


def push_seq_of(engine: sa.Engine, character_id: str, window_start: str) -> int | None:
    q = (sa.select(store.pushes.c.push_seq)
         .join(store.windows, sa.and_(store.windows.c.character_id == store.pushes.c.character_id,
                                      store.windows.c.window_ns == store.pushes.c.window_ns))
         .where(store.windows.c.character_id == character_id, store.windows.c.window_start == window_start))
    with engine.connect() as conn:
        return conn.execute(q).scalar()


def stored_frames(engine: sa.Engine, after_seq: int, tz: str, limit: int | None = None) -> list[dict]:
    """Window frames pushed after `after_seq` and the late frames pushed after that window,
    rebuilt from the store, in push order (`limit`: only the newest windows and what followed them)."""
    p, w = store.pushes, store.windows
    q = (sa.select(p.c.push_seq, p.c.character_id, p.c.window_ns, p.c.checks, p.c.quarantined, p.c.msg_order, p.c.pushed_ms,
                   w.c.window_start, w.c.window_end_ns, w.c.lines, w.c.latency_ms)
         .join(w, sa.and_(w.c.character_id == p.c.character_id, w.c.window_ns == p.c.window_ns))
         .where(p.c.push_seq > after_seq).order_by(p.c.push_seq))
    if limit is not None:  # the newest `limit`, still in push order
        q = q.order_by(None).order_by(p.c.push_seq.desc()).limit(limit)
    with engine.connect() as conn:
        pushed = sorted(conn.execute(q).all(), key=lambda r: r.push_seq)
        frames = []
        for r in pushed:
            rows = {m: store.load_json(v) for m, v in conn.execute(
                sa.select(store.verdicts.c.msg_id, store.verdicts.c.row).where(
                    store.verdicts.c.character_id == r.character_id, store.verdicts.c.window_ns == r.window_ns))}
            ordered = [rows[m] for m in store.load_json(r.msg_order) if m in rows]
            latency = r.pushed_ms if r.pushed_ms is not None else r.latency_ms
            frames.append(window_frame(r.character_id, int(r.window_ns), r.window_start, int(r.window_end_ns), int(r.lines),
                                       latency, store.load_json(r.checks), ordered, store.load_json(r.quarantined),
                                       int(r.push_seq), tz))
        since = pushed[0].push_seq if limit is not None and pushed else after_seq
        frames += stored_late_frames(conn, since)
    return sorted(frames, key=position)


def stored_late_frames(conn, after_push: int) -> list[dict]:
    """Late frames pushed after window push `after_push` (or with none before them)."""
    lp, lv = store.late_pushes, store.late_verdicts
    pushed = conn.execute(sa.select(lp).where(lp.c.after_push >= after_push).order_by(lp.c.late_seq)).all()
    if not pushed:
        return []
    seqs = [s for r in pushed for s in store.load_json(r.seq_order)]
    rows = {}
    for i in range(0, len(seqs), 500):  # bounded IN lists
        rows.update((int(s), store.load_json(v)) for s, v in conn.execute(
            sa.select(lv.c.seq, lv.c.row).where(lv.c.seq.in_(seqs[i:i + 500]))))
    return [late_frame(int(r.late_seq), int(r.after_push), (r.character_id, int(r.window_ns)), r.window_start,
                       [rows[s] for s in store.load_json(r.seq_order) if s in rows]) for r in pushed]


def last_position(engine: sa.Engine) -> tuple[int, int]:
    """The place in push order of the last frame stored (window or late)."""
    with engine.connect() as conn:
        window = conn.execute(sa.select(sa.func.max(store.pushes.c.push_seq))).scalar()
        late = conn.execute(sa.select(store.late_pushes.c.after_push, store.late_pushes.c.late_seq)
                            .order_by(store.late_pushes.c.late_seq.desc()).limit(1)).first()
    return max((int(window or 0), 0), (int(late.after_push), int(late.late_seq)) if late else (0, 0))


def last_push_seq(engine: sa.Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.coalesce(sa.func.max(store.pushes.c.push_seq), 0))).scalar_one())


# -- pick-ups ------------------------------------------------------------------------------------


def pick_up(engine: sa.Engine, msg_id: str, now_ns: int, by: str | None) -> dict | None:
    """Record that the operator picked up a skipped line; None when no such judged line."""
    with engine.begin() as conn:
        found = conn.execute(sa.select(store.verdicts.c.row, store.verdicts.c.character_id, store.verdicts.c.window_ns)
                             .where(store.verdicts.c.msg_id == msg_id)).first()
        if found is None:
            return None
        row = store.load_json(found.row)
        if row["verdict"] == V.PICK:
            return {"error": "already a pick"}
        if not conn.execute(sa.select(sa.func.count()).select_from(store.pickups).where(store.pickups.c.msg_id == msg_id)).scalar_one():
            conn.execute(store.pickups.insert(), {"msg_id": msg_id, "character_id": found.character_id,
                                                  "window_ns": found.window_ns, "verdict": row["verdict"],
                                                  "picked_ns": now_ns, "by": by})
        picked = conn.execute(sa.select(store.pickups).where(store.pickups.c.msg_id == msg_id)).first()
    return pickup_frame(picked._mapping, row["window_start"])


def pickup_frame(p, window_start: str) -> dict:
    return {"type": "pickup", "msg_id": p["msg_id"], "character_id": p["character_id"], "window_start": window_start,
            "verdict": p["verdict"], "picked_at_ns": int(p["picked_ns"])}


def pickups_for(engine: sa.Engine, keys: list[Key]) -> list[dict]:
    if not keys:
        return []
    q = (sa.select(store.pickups, store.windows.c.window_start)
         .join(store.windows, sa.and_(store.windows.c.character_id == store.pickups.c.character_id,
                                      store.windows.c.window_ns == store.pickups.c.window_ns))
         .where(sa.tuple_(store.pickups.c.character_id, store.pickups.c.window_ns).in_(keys))
         .order_by(store.pickups.c.picked_ns))
    with engine.connect() as conn:
        return [pickup_frame(r._mapping, r.window_start) for r in conn.execute(q)]


# -- start-up ------------------------------------------------------------------------------------


def finished_windows(engine: sa.Engine) -> set[Key]:
    with engine.connect() as conn:
        return {(c, int(w)) for c, w in conn.execute(sa.select(store.windows.c.character_id, store.windows.c.window_ns))}


def judged_seqs(engine: sa.Engine, msg_ids: list[str]) -> dict[str, int]:
    """msg_id → landing seq of those of `msg_ids` already judged (in a stored window, or late; the
    window's line where both): a later copy is a duplicate."""
    found: dict[str, int] = {}
    if not msg_ids:
        return found
    with engine.connect() as conn:
        for i in range(0, len(msg_ids), 500):  # bounded IN lists
            part = msg_ids[i:i + 500]
            for table in (store.late, store.verdicts):
                found.update(conn.execute(sa.select(table.c.msg_id, table.c.seq).where(table.c.msg_id.in_(part))).all())
    return {m: int(s) for m, s in found.items()}


def unprocessed(engine: sa.Engine, after_seq: int = 0, limit: int = 20000) -> list:
    """Landing lines neither judged, quarantined nor recorded late, in arrival order."""
    l = store.landing
    q = (sa.select(l.c.seq, l.c.text, l.c.arrived_ns, l.c.msg_id, l.c.character_id, l.c.window_ns)
         .where(l.c.seq > after_seq)
         .where(l.c.seq.not_in(sa.select(store.verdicts.c.seq)))
         .where(l.c.seq.not_in(sa.select(store.quarantine.c.seq)))
         .where(l.c.seq.not_in(sa.select(store.late.c.seq)))
         .order_by(l.c.seq).limit(limit))
    with engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(q)]


def window_lines(engine: sa.Engine, key: Key) -> tuple[int, list[dict]]:
    """Landing lines of a window and its quarantined ones (for a window reopened at start-up)."""
    l, q = store.landing, store.quarantine
    with engine.connect() as conn:
        n = conn.execute(sa.select(sa.func.count()).select_from(l).where(l.c.character_id == key[0], l.c.window_ns == key[1])).scalar_one()
        rows = conn.execute(sa.select(l.c.msg_id, q.c.reason_code, q.c.reason).join(q, q.c.seq == l.c.seq)
                            .where(q.c.character_id == key[0], q.c.window_ns == key[1]).order_by(q.c.seq)).all()
    return int(n), [{"msg_id": m, "reason_code": c, "reason": r} for m, c, r in rows]


def landing_texts(engine: sa.Engine, seqs: list[int]) -> list[str]:
    """The landing texts of these lines, in the order of `seqs` (every one must be in the table)."""
    found: dict[int, str] = {}
    with engine.connect() as conn:
        for i in range(0, len(seqs), 500):  # bounded IN lists
            part = seqs[i:i + 500]
            found.update(conn.execute(sa.select(store.landing.c.seq, store.landing.c.text).where(store.landing.c.seq.in_(part))).all())
    return [found[s] for s in seqs]
