"""Character-sheet versions and tuning suggestions, in the warehouse.

- `live_pick_sheet_versions`: every version of every character's sheet (every field), when it was
  made and from which source (the sheet file for version 1, a suggestion after that), by whom
  when known, and `effective_ns`, the instant from which it is in force (null for version 1).
- `live_pick_sheet_suggestions`: suggestions made when a broadcast closes, with their evidence and
  rationale; `open`, `applied` (with the version it made) or `rejected` (with a reason), with who
  decided and when. An open suggestion is reported `stale` only when the value it changes (the
  cooldown, or its topic's threshold) was changed by a version made after its base version: the
  broadcast's other suggestions stay open after one is applied, and apply on top of it.
- `live_pick_broadcast_figures`: per closed broadcast, the figures the suggestions rest on.

Every path that judges (window job, nightly chain, live service) reads these versions through
`rules.live_pick.sheets.with_history` and lets the engine pick the version in force when each
window opened; the live path stores version 1 from the sheet file the first time it sees a
character (the daily chain reads the table and treats a character with none as its file row,
version 1). Free of Dagster.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import sqlalchemy as sa

from live import store
from rules.common import timestamps
from rules.live_pick.config import LivePickConfig
from rules.live_pick.sheets import EFFECTIVE, JSON_FIELDS, SHEET_FIELDS, VERSION, VERSIONS_TABLE, changed, moved_since, with_history
from rules.live_pick.suggest import Suggested, suggest

JSON = store.JSON
OPEN, APPLIED, REJECTED, STALE = "open", "applied", "rejected", "stale"

versions = sa.Table(
    VERSIONS_TABLE, store.metadata,
    sa.Column("character_id", sa.Text, primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("character_name", sa.Text, nullable=False),
    sa.Column("world_topic_tags", JSON, nullable=False),
    sa.Column("banned_tags", JSON, nullable=False),
    sa.Column("min_closeness_by_topic", JSON, nullable=False),
    sa.Column("reply_cooldown_sec", sa.Integer, nullable=False),
    sa.Column("note", sa.Text),
    sa.Column("effective_ns", sa.BigInteger),
    sa.Column("created_ns", sa.BigInteger, nullable=False),
    sa.Column("created_at", sa.Text, nullable=False),
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("source_ref", sa.Text),
    sa.Column("suggestion_id", sa.Text),
    sa.Column("author", sa.Text),
)
suggestions = sa.Table(
    "live_pick_sheet_suggestions", store.metadata,
    sa.Column("suggestion_id", sa.Text, primary_key=True),
    sa.Column("broadcast_id", sa.Text, nullable=False, index=True),
    sa.Column("character_id", sa.Text, nullable=False),
    sa.Column("rule", sa.Text, nullable=False),
    sa.Column("field", sa.Text, nullable=False),
    sa.Column("topic", sa.Text),
    sa.Column("current_value", sa.Float, nullable=False),
    sa.Column("proposed_value", sa.Float, nullable=False),
    sa.Column("base_version", sa.Integer, nullable=False),
    sa.Column("evidence", JSON, nullable=False),
    sa.Column("rationale", sa.Text, nullable=False),
    sa.Column("strength", sa.Integer, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("created_ns", sa.BigInteger, nullable=False),
    sa.Column("decided_ns", sa.BigInteger),
    sa.Column("decided_by", sa.Text),
    sa.Column("reason", sa.Text),
    sa.Column("applied_version", sa.Integer),
)
figures = sa.Table(
    "live_pick_broadcast_figures", store.metadata,
    sa.Column("broadcast_id", sa.Text, primary_key=True),
    sa.Column("character_id", sa.Text, nullable=False),
    sa.Column("first_window_ns", sa.BigInteger, nullable=False),
    sa.Column("last_window_ns", sa.BigInteger, nullable=False),
    sa.Column("sheet_version", sa.Integer, nullable=False),
    sa.Column("totals", JSON, nullable=False),
    sa.Column("per_topic", JSON, nullable=False),
    sa.Column("notes", JSON, nullable=False),
    sa.Column("thin", sa.Boolean, nullable=False),
    sa.Column("made_ns", sa.BigInteger, nullable=False),
)


class SuggestionError(Exception):
    """A suggestion that cannot be applied or rejected; `kind` is unknown, stale, rejected or applied."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@dataclass
class Applied:
    suggestion_id: str
    broadcast_id: str
    character_id: str
    version: int
    changed: bool
    """False when the suggestion had been applied already (nothing was written)."""
    message: str


# -- versions -----------------------------------------------------------------------------


def _iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).isoformat(timespec="seconds")


def seed_versions(engine: sa.Engine, sheet: pd.DataFrame, source_ref: str | Path, now_ns: int) -> int:
    """Version 1 of every character of a normalised sheet that has no version yet; returns how many."""
    store.ensure_tables(engine)
    with engine.begin() as conn:
        known = set(conn.execute(sa.select(versions.c.character_id).distinct()).scalars())
        rows = [{**{k: r.get(k) for k in SHEET_FIELDS}, "version": 1, "effective_ns": None, "created_ns": now_ns,
                 "created_at": _iso(now_ns), "source": "file", "source_ref": str(source_ref), "suggestion_id": None,
                 "author": None}
                for r in sheet.to_dict("records") if r["character_id"] not in known]
        for r in rows:
            r["reply_cooldown_sec"] = int(r["reply_cooldown_sec"])
        if rows:
            conn.execute(versions.insert(), rows)
    return len(rows)


def versioned_sheet(engine: sa.Engine, file_sheet: pd.DataFrame) -> pd.DataFrame:
    """Every stored version of the characters of a normalised sheet file, in the engine's sheet columns."""
    with engine.connect() as conn:
        rows = conn.execute(sa.select(versions).where(versions.c.character_id.in_(list(file_sheet["character_id"])))).mappings().all()
    # Python objects, not pandas' float for a nullable integer: nanosecond instants stay exact.
    return with_history(file_sheet, pd.DataFrame([dict(r) for r in rows], dtype=object) if rows else None)


def newest_versions(engine: sa.Engine) -> tuple:
    """(character_id, newest version) of every character: changes when a suggestion is applied."""
    store.ensure_tables(engine)
    with engine.connect() as conn:
        return tuple(sorted(conn.execute(sa.select(versions.c.character_id, sa.func.max(versions.c.version))
                                         .group_by(versions.c.character_id)).all()))


def _sheet_row(r: dict) -> dict:
    out = {k: store.load_json(r[k]) if k in JSON_FIELDS else r[k] for k in SHEET_FIELDS}
    return {**out, VERSION: r["version"], EFFECTIVE: r["effective_ns"]}


def history(engine: sa.Engine, character_id: str) -> list[dict]:
    """Every version of one character, oldest first, as stored (JSON columns decoded)."""
    store.ensure_tables(engine)
    with engine.connect() as conn:
        return _history(conn, character_id)


def _history(conn, character_id: str) -> list[dict]:
    rows = [dict(r._mapping) for r in conn.execute(
        sa.select(versions).where(versions.c.character_id == character_id).order_by(versions.c.version))]
    for r in rows:
        for k in JSON_FIELDS:
            r[k] = store.load_json(r[k])
    return rows


def _latest(conn, character_id: str) -> dict | None:
    r = conn.execute(sa.select(versions).where(versions.c.character_id == character_id)
                     .order_by(versions.c.version.desc()).limit(1)).first()
    if r is None:
        return None
    out = dict(r._mapping)
    for k in JSON_FIELDS:
        out[k] = store.load_json(out[k])
    return out


# -- suggestions ----------------------------------------------------------------------------


def broadcast_id(character_id: str, first_window_ns: int, tz: str) -> str:
    """`CH-0007-20260908T211400`: the character and the local start of the broadcast's first window."""
    start = timestamps.format_ns(first_window_ns, "", tz)[:19]
    return f"{character_id}-{start.replace('-', '').replace(':', '')}"


def broadcast_rows(engine: sa.Engine, character_id: str, first_window_ns: int, last_window_ns: int) -> list[dict]:
    q = sa.select(store.verdicts.c.row).where(
        store.verdicts.c.character_id == character_id,
        store.verdicts.c.window_ns >= first_window_ns, store.verdicts.c.window_ns <= last_window_ns,
    ).order_by(store.verdicts.c.window_ns, store.verdicts.c.seq)
    with engine.connect() as conn:
        return [store.load_json(r) for r in conn.execute(q).scalars()]


def closed_broadcasts(engine: sa.Engine, tz: str) -> list[dict]:
    """Every closed broadcast, newest first, with its id."""
    store.ensure_tables(engine)
    with engine.connect() as conn:
        rows = [dict(r._mapping) for r in conn.execute(
            sa.select(store.broadcasts).order_by(store.broadcasts.c.closed_ns.desc(), store.broadcasts.c.character_id))]
    return [{**r, "broadcast_id": broadcast_id(r["character_id"], int(r["first_window_ns"]), tz)} for r in rows]


def find_broadcast(engine: sa.Engine, bid: str, tz: str) -> dict | None:
    return next((b for b in closed_broadcasts(engine, tz) if b["broadcast_id"] == bid), None)


def suggest_broadcast(engine: sa.Engine, broadcast: dict, config: LivePickConfig, now_ns: int) -> Suggested:
    """Figures and suggestions for one closed broadcast, stored; decisions already taken are kept.

    The suggestions rest on the sheet version the broadcast's lines were judged with (the newest
    of them when a change came into force mid-broadcast).
    """
    store.ensure_tables(engine)
    character, first, last = broadcast["character_id"], int(broadcast["first_window_ns"]), int(broadcast["last_window_ns"])
    bid = broadcast_id(character, first, config.timezone)
    rows = broadcast_rows(engine, character, first, last)
    used = [r.get(VERSION) for r in rows if r.get(VERSION) is not None]
    with engine.connect() as conn:
        if used:
            base = conn.execute(sa.select(versions).where(versions.c.character_id == character,
                                                          versions.c.version == max(used))).first()
            base = dict(base._mapping) if base else None
        else:
            base = _latest(conn, character)
    if base is None:
        raise LookupError(f"{character} has no sheet version; judge a window first (that stores version 1)")
    sheet = {**_sheet_row(base)}
    result = suggest(rows, sheet, bid, config)
    with engine.begin() as conn:
        conn.execute(sa.delete(figures).where(figures.c.broadcast_id == bid))
        conn.execute(figures.insert(), {
            "broadcast_id": bid, "character_id": character, "first_window_ns": first, "last_window_ns": last,
            "sheet_version": sheet[VERSION], "totals": result.totals, "per_topic": result.figures.to_dict("records"),
            "notes": result.notes, "thin": result.thin, "made_ns": now_ns,
        })
        known = set(conn.execute(sa.select(suggestions.c.suggestion_id).where(suggestions.c.broadcast_id == bid)).scalars())
        fresh = [s for s in result.suggestions if s.suggestion_id not in known]
        if fresh:
            conn.execute(suggestions.insert(), [
                {**{k: v for k, v in s.to_dict().items()}, "base_version": s.base_version or sheet[VERSION],
                 "status": OPEN, "created_ns": now_ns}
                for s in fresh
            ])
    return result


def list_suggestions(engine: sa.Engine, broadcast: str | None = None) -> list[dict]:
    """Suggestions (of one broadcast, or all), strongest first, with `status` stale where the sheet moved on."""
    store.ensure_tables(engine)
    q = sa.select(suggestions).order_by(suggestions.c.created_ns.desc(), suggestions.c.broadcast_id,
                                        suggestions.c.strength.desc(), suggestions.c.suggestion_id)
    if broadcast is not None:
        q = q.where(suggestions.c.broadcast_id == broadcast)
    with engine.connect() as conn:
        rows = [dict(r._mapping) for r in conn.execute(q)]
        histories = {c: _history(conn, c) for c in sorted({r["character_id"] for r in rows})}
    for r in rows:
        r["evidence"] = store.load_json(r["evidence"])
        for k in ("current_value", "proposed_value"):
            r[k] = int(r[k]) if float(r[k]).is_integer() else r[k]
        versions_of = histories[r["character_id"]]
        r["newest_version"] = versions_of[-1]["version"] if versions_of else None
        moved = moved_since(versions_of, r["base_version"], r["field"], r["topic"])
        r["moved_in_version"] = moved["version"] if moved else None
        if r["status"] == OPEN and moved is not None:
            r["status"] = STALE
    return rows


def broadcast_figures(engine: sa.Engine, bid: str) -> dict | None:
    store.ensure_tables(engine)
    with engine.connect() as conn:
        r = conn.execute(sa.select(figures).where(figures.c.broadcast_id == bid)).first()
    if r is None:
        return None
    out = dict(r._mapping)
    for k in ("totals", "per_topic", "notes"):
        out[k] = store.load_json(out[k])
    return out


def _suggestion(conn, suggestion_id: str) -> dict:
    s = conn.execute(sa.select(suggestions).where(suggestions.c.suggestion_id == suggestion_id)).first()
    if s is None:
        raise SuggestionError("unknown", f"no suggestion '{suggestion_id}' (list them with `verdicts suggest live_pick --broadcast ID`)")
    return dict(s._mapping)


def apply_suggestion(engine: sa.Engine, suggestion_id: str, now_ns: int, by: str | None = None) -> Applied:
    """Write the next sheet version from a suggestion and mark it applied, in one transaction.

    Applying an applied suggestion changes nothing. An unknown id, a rejected suggestion, or one
    whose value was changed by a version made after its base version (stale) raises
    SuggestionError. The new version is the newest with this one value changed, in force from
    `now_ns`: windows that open from then on use it. `by` (who applied) and the instant are kept
    with the version and the decision.
    """
    store.ensure_tables(engine)
    try:
        with engine.begin() as conn:
            s = _suggestion(conn, suggestion_id)
            character = s["character_id"]
            if s["status"] == APPLIED:
                return Applied(suggestion_id, s["broadcast_id"], character, s["applied_version"], False,
                               f"{suggestion_id} was applied already: {character} sheet version {s['applied_version']}; nothing changed")
            if s["status"] == REJECTED:
                raise SuggestionError("rejected", f"{suggestion_id} was rejected ({s['reason']}); it cannot be applied")
            versions_of = _history(conn, character)
            if not versions_of:
                raise SuggestionError("stale", f"{suggestion_id} is stale: {character} has no sheet version")
            latest = versions_of[-1]
            moved = moved_since(versions_of, s["base_version"], s["field"], s["topic"])
            if moved is not None:
                what = f"{s['field']}[{s['topic']}]" if s["topic"] else s["field"]
                raise SuggestionError(
                    "stale", f"{suggestion_id} is stale: it was made on version {s['base_version']} of {character}'s sheet, "
                             f"and version {moved['version']} changed {what} since; close a newer broadcast for fresh suggestions")
            value = int(s["proposed_value"]) if float(s["proposed_value"]).is_integer() else s["proposed_value"]
            fields = changed(latest, s["field"], s["topic"], value)
            version = latest["version"] + 1
            conn.execute(versions.insert(), {
                **fields, "version": version, "effective_ns": now_ns, "created_ns": now_ns, "created_at": _iso(now_ns),
                "source": "suggestion", "source_ref": s["broadcast_id"], "suggestion_id": suggestion_id, "author": by,
            })
            conn.execute(suggestions.update().where(suggestions.c.suggestion_id == suggestion_id).values(
                status=APPLIED, applied_version=version, decided_ns=now_ns, decided_by=by))
    except sa.exc.IntegrityError as exc:  # another apply wrote the same version number first
        raise SuggestionError("stale", f"{suggestion_id} is stale: the sheet changed while it was being applied") from exc
    what = f"{s['field']}[{s['topic']}]" if s["topic"] else s["field"]
    return Applied(suggestion_id, s["broadcast_id"], character, version, True,
                   f"{character} sheet version {version}: {what} {_num(s['current_value'])} → {_num(value)}")


def reject_suggestion(engine: sa.Engine, suggestion_id: str, reason: str, now_ns: int, by: str | None = None) -> dict:
    """Mark a suggestion rejected with a reason; rejecting it again keeps the first decision."""
    reason = (reason or "").strip()
    if not reason:
        raise SuggestionError("no_reason", "a rejection needs a reason")
    store.ensure_tables(engine)
    with engine.begin() as conn:
        s = _suggestion(conn, suggestion_id)
        if s["status"] == APPLIED:
            raise SuggestionError("applied", f"{suggestion_id} was applied as version {s['applied_version']}; it cannot be rejected")
        if s["status"] == REJECTED:
            return {**s, "changed": False}
        conn.execute(suggestions.update().where(suggestions.c.suggestion_id == suggestion_id).values(
            status=REJECTED, reason=reason, decided_ns=now_ns, decided_by=by))
    return {**s, "status": REJECTED, "reason": reason, "changed": True}


def _num(v) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)
