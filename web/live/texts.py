"""What the viewer wrote, as the console shows it beside every verdict: the body of each line of a
window (picks, skipped lines, late lines, pick-ups) and the text of a quarantined line.

Frames carry these texts themselves (`texts`: msg_id → body), read from the line as it landed, so a
console that reloads or resumes is shown the same words as one that watched the chat flow in.
"""

from __future__ import annotations

import orjson
import sqlalchemy as sa

from live import store

QUARANTINED_TEXT = 300
"""Characters of a quarantined line's text a frame carries (the page clamps longer ones)."""


def body_of(text: str | None) -> str | None:
    """The `body` of a landed line's JSON text; None when it has none (or is not a JSON object)."""
    if not text:
        return None
    try:
        line = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    body = line.get("body") if isinstance(line, dict) else None
    return body if isinstance(body, str) else None


def shown_text(text: str | None) -> str:
    """A quarantined line as the operator reads it: its body when it has one, else its text as sent, cut short."""
    body = body_of(text)
    shown = body if body is not None else (text or "")
    return shown if len(shown) <= QUARANTINED_TEXT else shown[:QUARANTINED_TEXT] + "…"


def ordered(texts: dict[str, str | None], msg_order: list[str]) -> dict[str, str]:
    """The bodies of a frame's lines in its push order (the same bytes live and rebuilt from the store)."""
    return {m: texts[m] for m in msg_order if texts.get(m) is not None}


def by_seq(conn: sa.Connection, seqs: list[int]) -> dict[int, str | None]:
    """Landing seq → body of these lines."""
    out: dict[int, str | None] = {}
    for i in range(0, len(seqs), 500):  # bounded IN lists
        part = seqs[i:i + 500]
        out.update((int(s), body_of(t)) for s, t in conn.execute(
            sa.select(store.landing.c.seq, store.landing.c.text).where(store.landing.c.seq.in_(part))))
    return out


def of_window(conn: sa.Connection, character_id: str, window_ns: int) -> dict[str, str | None]:
    """msg_id → body of a stored window's judged lines."""
    v, l = store.verdicts, store.landing
    rows = conn.execute(sa.select(v.c.msg_id, l.c.text).join(l, l.c.seq == v.c.seq)
                        .where(v.c.character_id == character_id, v.c.window_ns == window_ns))
    return {m: body_of(t) for m, t in rows}


def of_msg(conn: sa.Connection, msg_id: str) -> str | None:
    """The body of a judged line (a pick-up's card)."""
    v, l = store.verdicts, store.landing
    text = conn.execute(sa.select(l.c.text).join(v, v.c.seq == l.c.seq).where(v.c.msg_id == msg_id)).scalar()
    return body_of(text)
