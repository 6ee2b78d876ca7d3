"""A character's broadcast going on air, and where each character's current broadcast begins.

The viewer relations a broadcast is judged with are those in force when it starts (they change only
when a broadcast closes), so starting one records how many there are. A broadcast still open when the
next starts (windows judged since its last close) is closed first, as `close_broadcast` does, and only
when the operator says so: its answers then reach the new broadcast's relations.

The current broadcast of a character is its windows after both its last close and the window its
last start fell in; windows before are earlier broadcasts (the console puts them behind a link, the
store's figures per broadcast leave them out).
"""

from __future__ import annotations

import sqlalchemy as sa

from live import store
from live.judge import close_broadcast
from rules.common import timestamps
from rules.live_pick.config import LivePickConfig

EARLIEST = -(2**62)


def current_from(conn: sa.Connection) -> dict[str, int]:
    """character_id → the instant (ns) after which its windows are the current broadcast's."""
    b, s = store.broadcasts, store.starts
    cut: dict[str, int] = {}
    for c, last in conn.execute(sa.select(b.c.character_id, sa.func.max(b.c.last_window_ns)).group_by(b.c.character_id)):
        cut[c] = int(last)
    for c, first in conn.execute(sa.select(s.c.character_id, sa.func.max(s.c.first_window_ns)).group_by(s.c.character_id)):
        cut[c] = max(cut.get(c, EARLIEST), int(first) - 1)
    return cut


def on_air(conn: sa.Connection) -> dict[str, dict]:
    """character_id → its start not ended by a close: when, the first window, the viewer relations
    in force then."""
    s = store.starts
    rows = conn.execute(sa.select(s).where(s.c.ended_ns.is_(None)).order_by(s.c.started_ns))
    return {r.character_id: {"started_ns": int(r.started_ns), "first_window_ns": int(r.first_window_ns),
                             "viewers": int(r.viewers), "started_by": r.started_by} for r in rows}


def still_open(conn: sa.Connection, character_id: str) -> dict | None:
    """The windows judged since the character's last close (a broadcast not closed yet), or None.
    Judged as a close counts them: windows with verdicts (one whose every line was quarantined has none)."""
    b, v = store.broadcasts, store.verdicts
    last = conn.execute(sa.select(sa.func.max(b.c.last_window_ns)).where(b.c.character_id == character_id)).scalar_one()
    q = (sa.select(sa.func.count(sa.distinct(v.c.window_ns)), sa.func.min(v.c.window_ns), sa.func.max(v.c.window_ns))
         .where(v.c.character_id == character_id))
    if last is not None:
        q = q.where(v.c.window_ns > last)
    n, first, newest = conn.execute(q).one()
    return {"windows": int(n), "first_window_ns": int(first), "last_window_ns": int(newest)} if n else None


def start_broadcast(engine: sa.Engine, character_id: str, config: LivePickConfig, clock, close_previous: bool = False,
                    by: str | None = None) -> dict:
    """Put the character's broadcast on air from the window holding now.

    With a broadcast still open (windows judged since the last close: the one on air, or one never
    started) and `close_previous` false nothing is written: the answer says what is open (`started`
    false, `previous`, and `on_air` when it was started), for the operator to confirm closing it.
    On air already with nothing judged since: that start stands (`already`), nothing is written."""
    store.ensure_tables(engine)
    with engine.connect() as conn:
        previous, current = still_open(conn, character_id), on_air(conn).get(character_id)
    out: dict = {"character_id": character_id, "started": False, "previous": previous, "on_air": current, "closed": None}
    if previous is None and current is not None:  # on air already, nothing judged since: the same broadcast
        return _already(out, current)
    if previous is not None:
        if not close_previous:
            return out
        out["closed"] = close_broadcast(engine, character_id, config, clock)
    now = clock()
    first = timestamps.floor_ns(now, config.window_seconds)
    try:
        with engine.begin() as conn:
            newest = conn.execute(sa.select(sa.func.max(store.starts.c.started_ns))
                                  .where(store.starts.c.character_id == character_id)).scalar_one()
            now = max(now, int(newest) + 1) if newest is not None else now  # a paused (event) clock: still one row a start
            viewers = conn.execute(sa.select(sa.func.count()).select_from(store.viewer_state)).scalar_one()
            conn.execute(store.starts.insert(), {"character_id": character_id, "started_ns": now, "first_window_ns": first,
                                                 "viewers": int(viewers), "started_by": by})
    except sa.exc.IntegrityError:  # another process put it on air meanwhile: that start stands
        with engine.connect() as conn:
            current = on_air(conn).get(character_id)
        if current is None:
            raise
        return _already(out, current)
    return {**out, "started": True, "started_ns": now, "first_window_ns": first, "viewers": int(viewers)}


def _already(out: dict, current: dict) -> dict:
    """The answer for a start that found its broadcast on air: that start stands."""
    return {**out, "started": True, "already": True, **{k: current[k] for k in ("started_ns", "first_window_ns", "viewers")}}
