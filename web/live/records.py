"""What the live service writes to the warehouse and reads back: the live path's own tables
(`live.store`), one transaction per window, and the frames rebuilt for resume."""

from __future__ import annotations

import sqlite3
import orjson
import pandas as pd
import sqlalchemy as sa

from live import store
from live.on_air import EARLIEST, current_from
from web.live import texts as T
from rules.common import timestamps
from rules.common.jsonl import compact
from rules.common.checks import CheckResult
from rules.live_pick import verdicts as V

Key = tuple[str, int]


def window_frame(character_id: str, window_ns: int, window_start: str, window_end_ns: int, lines: int, latency_ms: float,
                 checks: list[dict], rows: list[dict], quarantined: list[dict], push_seq: int, tz: str,
                 texts: dict[str, str]) -> dict:
    """The `window` frame pushed to consoles; the same whether live or rebuilt from the store.
    `texts`: msg_id → what the viewer wrote, for every judged line (`texts.ordered`)."""
    form = window_start[19:]
    return {
        "type": "window", "push": push_seq, "character_id": character_id, "window_start": window_start,
        "window_end": timestamps.format_ns(window_end_ns, form, tz), "window_end_ns": window_end_ns, "lines": lines,
        "latency_ms": round(latency_ms, 1), "checks": checks, "verdicts": rows, "quarantined": quarantined,
        "texts": texts,
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
               after_push: int, texts: dict[str, str | None]) -> dict:
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
    return late_frame(int(late_seq), after_push, key, start, rows, T.ordered(texts, [r["msg_id"] for r in rows]))


def late_frame(late_seq: int, after_push: int, key: Key, window_start: str | None, rows: list[dict],
               texts: dict[str, str]) -> dict:
    """The `late` frame pushed to consoles; the same whether live or rebuilt from the store.
    It was judged after window push `after` (`window_frame`'s `push`)."""
    return {"type": "late", "late_seq": late_seq, "after": after_push, "character_id": key[0], "window_ns": key[1],
            "window_start": window_start, "lines": len(rows), "verdicts": rows, "texts": texts}


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


def stored_frames(engine: sa.Engine, pushes: list[int], late: list[int], tz: str) -> list[tuple[dict, str]]:
    """Window frames of these push sequences and late frames of these late sequences, rebuilt from the
    store, each with its kind, in the order they were to be pushed (a late frame after the window push
    it follows)."""
    p, w = store.pushes, store.windows
    out: list[tuple[tuple[int, int], dict, str]] = []
    with engine.connect() as conn:
        for i in range(0, len(pushes), 500):  # bounded IN lists
            q = (sa.select(p.c.push_seq, p.c.character_id, p.c.window_ns, p.c.checks, p.c.quarantined, p.c.msg_order,
                           p.c.pushed_ms, w.c.window_start, w.c.window_end_ns, w.c.lines, w.c.latency_ms)
                 .join(w, sa.and_(w.c.character_id == p.c.character_id, w.c.window_ns == p.c.window_ns))
                 .where(p.c.push_seq.in_(pushes[i:i + 500])))
            for r in conn.execute(q).all():
                rows = {m: store.load_json(v) for m, v in conn.execute(
                    sa.select(store.verdicts.c.msg_id, store.verdicts.c.row).where(
                        store.verdicts.c.character_id == r.character_id, store.verdicts.c.window_ns == r.window_ns))}
                order = store.load_json(r.msg_order)
                ordered = [rows[m] for m in order if m in rows]
                latency = r.pushed_ms if r.pushed_ms is not None else r.latency_ms
                frame = window_frame(r.character_id, int(r.window_ns), r.window_start, int(r.window_end_ns), int(r.lines),
                                     latency, store.load_json(r.checks), ordered, store.load_json(r.quarantined),
                                     int(r.push_seq), tz, T.ordered(T.of_window(conn, r.character_id, int(r.window_ns)), order))
                out.append(((int(r.push_seq), 0), frame, "window"))
        for frame in stored_late_frames(conn, late):
            out.append(((frame["after"], frame["late_seq"]), frame, "late"))
    return [(frame, kind) for _, frame, kind in sorted(out, key=lambda t: t[0])]


def stored_late_frames(conn, late_seqs: list[int]) -> list[dict]:
    """Late frames of these late sequences, rebuilt from the store."""
    lp, lv = store.late_pushes, store.late_verdicts
    pushed = [r for i in range(0, len(late_seqs), 500)
              for r in conn.execute(sa.select(lp).where(lp.c.late_seq.in_(late_seqs[i:i + 500])).order_by(lp.c.late_seq)).all()]
    if not pushed:
        return []
    seqs = [s for r in pushed for s in store.load_json(r.seq_order)]
    rows = {}
    for i in range(0, len(seqs), 500):  # bounded IN lists
        rows.update((int(s), store.load_json(v)) for s, v in conn.execute(
            sa.select(lv.c.seq, lv.c.row).where(lv.c.seq.in_(seqs[i:i + 500]))))
    bodies = T.by_seq(conn, seqs)
    frames = []
    for r in pushed:
        order = [s for s in store.load_json(r.seq_order) if s in rows]
        texts = {rows[s]["msg_id"]: bodies.get(s) for s in order}
        frames.append(late_frame(int(r.late_seq), int(r.after_push), (r.character_id, int(r.window_ns)), r.window_start,
                                 [rows[s] for s in order], T.ordered(texts, [rows[s]["msg_id"] for s in order])))
    return frames


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
        body = T.of_msg(conn, msg_id)
    return pickup_frame(picked._mapping, row, body)


def pickup_frame(p, row: dict, body: str | None) -> dict:
    """The `pickup` frame: the line picked up, with what the viewer wrote and the verdict's sentence."""
    return {"type": "pickup", "msg_id": p["msg_id"], "character_id": p["character_id"], "window_start": row["window_start"],
            "verdict": p["verdict"], "picked_at_ns": int(p["picked_ns"]), "viewer_id": row.get("viewer_id"),
            "body": body, "summary": row.get("summary")}


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
        rows = conn.execute(sa.select(l.c.msg_id, q.c.reason_code, q.c.reason, l.c.text).join(q, q.c.seq == l.c.seq)
                            .where(q.c.character_id == key[0], q.c.window_ns == key[1]).order_by(q.c.seq)).all()
    return int(n), [{"msg_id": m, "reason_code": c, "reason": r, "text": T.shown_text(t)} for m, c, r, t in rows]


def landing_texts(engine: sa.Engine, seqs: list[int]) -> list[str]:
    """The landing texts of these lines, in the order of `seqs` (every one must be in the table)."""
    found: dict[int, str] = {}
    with engine.connect() as conn:
        for i in range(0, len(seqs), 500):  # bounded IN lists
            part = seqs[i:i + 500]
            found.update(conn.execute(sa.select(store.landing.c.seq, store.landing.c.text).where(store.landing.c.seq.in_(part))).all())
    return [found[s] for s in seqs]


# -- deliveries: every frame pushed, numbered within the service's epoch --------------------------


def new_epoch(engine: sa.Engine, now_ns: int) -> int:
    """A fresh epoch for a service starting now."""
    with engine.begin() as conn:
        return int(conn.execute(store.epochs.insert().returning(store.epochs.c.epoch), {"started_ns": now_ns}).scalar_one())


def store_deliveries(engine: sa.Engine, epoch: int, deliveries: list, pushed: list[tuple[int, float]]) -> None:
    """Frames sent (`delivery.Delivery`, their bytes as sent) and window pushes' end → sent latencies,
    in one transaction."""
    with engine.begin() as conn:
        if deliveries:
            conn.execute(store.deliveries.insert(), [
                {"epoch": epoch, "seq": d.seq, "kind": d.kind, "ref": d.ref, "character_id": d.character_id,
                 "window_ns": d.window_ns, "size": len(d.data), "frame": d.data} for d in deliveries])
        for push_seq, latency_ms in pushed:
            conn.execute(sa.update(store.pushes).where(store.pushes.c.push_seq == push_seq).values(pushed_ms=latency_ms))


def delivered(engine: sa.Engine, after: tuple[int, int], through: tuple[int, int], limit: int) -> list[tuple[int, int, bytes]] | None:
    """(epoch, seq, bytes) of the frames stored after `after` up to `through` (both (epoch, seq)), in
    order; None when there are more than `limit`."""
    d = store.deliveries
    order = sa.tuple_(d.c.epoch, d.c.seq)
    q = (sa.select(d.c.epoch, d.c.seq, d.c.frame).where(order > after, order <= through)
         .order_by(d.c.epoch, d.c.seq).limit(limit + 1))
    with engine.connect() as conn:
        rows = [(int(e), int(s), bytes(f)) for e, s, f in conn.execute(q)]
    return None if len(rows) > limit else rows


def holds_delivery(engine: sa.Engine, epoch: int, seq: int) -> bool:
    """Whether frame `seq` of `epoch` is on record (0: the epoch's start, on record when the epoch is)."""
    d = store.deliveries
    with engine.connect() as conn:
        if seq == 0:
            return conn.execute(sa.select(sa.func.count()).select_from(store.epochs).where(store.epochs.c.epoch == epoch)).scalar_one() > 0
        return conn.execute(sa.select(sa.func.count()).select_from(d).where(d.c.epoch == epoch, d.c.seq == seq)).scalar_one() > 0


def window_delivery(engine: sa.Engine, character_id: str, window_start: str) -> tuple[int, int] | None:
    """Where a window's frame stands in the order frames were sent (its first sending), None when never sent."""
    d, w = store.deliveries, store.windows
    q = (sa.select(d.c.epoch, d.c.seq)
         .join(w, sa.and_(w.c.character_id == d.c.character_id, w.c.window_ns == d.c.window_ns))
         .where(d.c.kind == "window", w.c.character_id == character_id, w.c.window_start == window_start)
         .order_by(d.c.epoch, d.c.seq).limit(1))
    with engine.connect() as conn:
        found = conn.execute(q).first()
    return (int(found[0]), int(found[1])) if found else None


def newest_windows_from(engine: sa.Engine, windows: int) -> tuple[int, int]:
    """The place just before the `windows`-th newest window frame sent ((0, 0) when fewer were sent):
    a console that opens is sent everything after it."""
    d = store.deliveries
    q = (sa.select(d.c.epoch, d.c.seq).where(d.c.kind == "window").order_by(d.c.epoch.desc(), d.c.seq.desc())
         .offset(max(windows - 1, 0)).limit(1))
    with engine.connect() as conn:
        found = conn.execute(q).first()
    return (int(found[0]), int(found[1]) - 1) if found else (0, 0)


def undelivered(engine: sa.Engine, since_ns: int) -> dict[str, list]:
    """What was stored to be pushed but has no frame sent on record (a service stopped, or killed, in
    between), of windows that began at `since_ns` or later: window pushes by push sequence, late frames
    by their sequence."""
    d, p, w, lp = store.deliveries, store.pushes, store.windows, store.late_pushes
    sent = {kind: sa.select(sa.cast(d.c.ref, sa.BigInteger)).where(d.c.kind == kind) for kind in ("window", "late")}
    with engine.connect() as conn:
        windows = conn.execute(sa.select(p.c.push_seq).join(w, sa.and_(w.c.character_id == p.c.character_id,
                                                                      w.c.window_ns == p.c.window_ns))
                               .where(p.c.push_seq.not_in(sent["window"]), w.c.window_ns >= since_ns)
                               .order_by(p.c.push_seq)).scalars().all()
        late = conn.execute(sa.select(lp.c.late_seq).where(lp.c.late_seq.not_in(sent["late"]), lp.c.window_ns >= since_ns)
                            .order_by(lp.c.late_seq)).scalars().all()
    return {"window": [int(s) for s in windows], "late": [int(s) for s in late]}


def prune_deliveries(engine: sa.Engine, keep_bytes: int) -> int:
    """Drop the oldest frames on record until those left hold at most `keep_bytes`; how many went."""
    d = store.deliveries
    with engine.begin() as conn:
        total = int(conn.execute(sa.select(sa.func.coalesce(sa.func.sum(d.c.size), 0))).scalar_one())
        if total <= keep_bytes:
            return 0
        gone, cut = 0, None
        for epoch, seq, size in conn.execute(sa.select(d.c.epoch, d.c.seq, d.c.size).order_by(d.c.epoch, d.c.seq)):
            if total <= keep_bytes:
                break
            total -= int(size)
            gone += 1
            cut = (int(epoch), int(seq))
        conn.execute(sa.delete(d).where(sa.tuple_(d.c.epoch, d.c.seq) <= cut))
    return gone


# -- counts ----------------------------------------------------------------------------------------

OUTCOMES = ("judged", "quarantined", "duplicates", "late")


def counts(engine: sa.Engine, known: set[str]) -> dict:
    """What the store holds, by the landing line each row came from: `received` (landed) = `judged` +
    `quarantined` + `duplicates` (ids already seen: copies a sender sent again) + `late` + `pending`
    (in windows not finished yet). In total, per character (lines of no known character under
    `other`), and per character's current broadcast (its windows after its last close and last start: `on_air`)."""
    l, q = store.landing, store.quarantine
    dup = (q.c.reason_code == "duplicate_id").label("dup")
    with engine.connect() as conn:
        cells: dict[tuple, dict] = {}

        def add(rows, name_of):
            for row in rows:
                c, w = row.character_id, row.window_ns
                cell = cells.setdefault((c, None if w is None else int(w)), dict.fromkeys(("received", *OUTCOMES), 0))
                cell[name_of(row)] += int(row.n)

        add(conn.execute(sa.select(l.c.character_id, l.c.window_ns, sa.func.count().label("n"))
                         .group_by(l.c.character_id, l.c.window_ns)), lambda r: "received")
        add(conn.execute(sa.select(l.c.character_id, l.c.window_ns, dup, sa.func.count().label("n")).join(q, q.c.seq == l.c.seq)
                         .group_by(l.c.character_id, l.c.window_ns, dup)), lambda r: "duplicates" if r.dup else "quarantined")
        for name, table in (("judged", store.verdicts), ("late", store.late)):
            add(conn.execute(sa.select(l.c.character_id, l.c.window_ns, sa.func.count().label("n"))
                             .join(table, table.c.seq == l.c.seq).group_by(l.c.character_id, l.c.window_ns)), lambda r, n=name: n)
        cutoffs = current_from(conn)

    def total(parts):
        out = dict.fromkeys(("received", *OUTCOMES), 0)
        for p in parts:
            for k in out:
                out[k] += p[k]
        out["pending"] = out["received"] - sum(out[k] for k in OUTCOMES)
        return out

    by_character: dict[str, list] = {}
    current: dict[str, list] = {}
    for (c, w), cell in cells.items():
        name = c if c in known else "other"
        by_character.setdefault(name, []).append(cell)
        if name != "other" and w is not None and w > cutoffs.get(c, EARLIEST):
            current.setdefault(name, []).append(cell)
    return {"total": total(cells.values()), "characters": {c: total(v) for c, v in sorted(by_character.items())},
            "broadcasts": {c: total(v) for c, v in sorted(current.items())}}
