"""Chat lines into the live landing table (`store.landing`): one row per line, as sent, with what the
window job and the live service read of it without parsing it again (id, character, window)."""

from __future__ import annotations

import sqlalchemy as sa

from live.store import landing, quarantine
from rules.common import timestamps
from rules.common.cells import trim
from rules.common.bounded_json import parse_object


def landing_row(text: str, arrived_ns: int, window_seconds: int, tz: str) -> dict:
    """A landing row; the window is known only when the line's sent_at reads. The id and character
    are kept only as text the store's text columns hold (no NUL)."""
    obj = parse_object(text) or {}
    stamp = timestamps.parse(obj.get("sent_at"), tz)
    sent = stamp.ns if stamp else None
    return {
        "arrived_ns": arrived_ns,
        "text": text,
        "msg_id": _text_cell(obj.get("msg_id")),
        "character_id": _text_cell(obj.get("character_id"), trim),
        "sent_ns": sent,
        "window_ns": None if sent is None else timestamps.floor_ns(sent, window_seconds),
    }


def _text_cell(value, clean=lambda v: v) -> str | None:
    return clean(value) if isinstance(value, str) and "\x00" not in value else None


def append(engine: sa.Engine, texts: list[str], arrived_ns: int, window_seconds: int, tz: str) -> int:
    if not texts:
        return 0
    rows = [landing_row(t, arrived_ns, window_seconds, tz) for t in texts]
    with engine.begin() as conn:
        conn.execute(landing.insert(), rows)
    return len(rows)


def land(engine: sa.Engine, lines: list[dict], arrived_ns: int, window_seconds: int, tz: str) -> list[dict]:
    """Land lines in one transaction: each `{"text", "raw", "sender", "frame_no", "reason"}` (`reason`:
    (code, why) for a line quarantined before the gates, which then belongs to no window and is
    quarantined in the same transaction). Returns the landing rows with their `seq` (and `reason`),
    in the order given."""
    if not lines:
        return []
    rows = []
    for line in lines:
        row = landing_row(line["text"], arrived_ns, window_seconds, tz) if line.get("reason") is None else {
            "arrived_ns": arrived_ns, "text": line["text"], "msg_id": None, "character_id": None, "sent_ns": None, "window_ns": None}
        row.update(raw=line.get("raw"), sender=line.get("sender"), frame_no=line.get("frame_no"))
        rows.append(row)
    with engine.begin() as conn:
        seqs = conn.execute(landing.insert().returning(landing.c.seq, sort_by_parameter_order=True), rows).scalars().all()
        out = [{**r, "seq": int(s), "reason": line.get("reason")} for r, s, line in zip(rows, seqs, lines)]
        refused = [{"seq": r["seq"], "character_id": None, "window_ns": None, "reason_code": r["reason"][0], "reason": r["reason"][1]}
                   for r in out if r["reason"] is not None]
        if refused:
            conn.execute(quarantine.insert(), refused)
    return out


def stored_frames_of(engine: sa.Engine, sender: str) -> int:
    """The highest frame number of `sender` whose lines are landed (0 when none)."""
    with engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.coalesce(sa.func.max(landing.c.frame_no), 0))
                                .where(landing.c.sender == sender)).scalar_one())


def append_returning(engine: sa.Engine, texts: list[str], arrived_ns: int, window_seconds: int, tz: str) -> list[dict]:
    """Append in one transaction; the landing rows with their `seq`, in the order given."""
    return land(engine, [{"text": t} for t in texts], arrived_ns, window_seconds, tz)
