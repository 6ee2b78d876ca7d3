"""Judging a batch of closed windows from the landing table, and closing a broadcast.

Free of Dagster: the window job, the tests and the command line all call these.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import sqlalchemy as sa

from live import sheets, store
from rules.common import timestamps
from rules.common.reconcile import empty_quarantine
from rules.common.jsonl import dataset_path, read_raw
from rules.live_pick import verdicts as V
from rules.live_pick.checks import run_checks
from rules.live_pick.config import LivePickConfig
from rules.live_pick.engine import judge, records
from rules.live_pick.normalise import normalise
from rules.live_pick.summaries import summary_counts, write_summaries
from rules.live_pick.names import canonical
from rules.live_pick.tags import tag_source


def references(raw_dir: Path, engine: sa.Engine, config: LivePickConfig, now_ns: int) -> dict[str, pd.DataFrame]:
    """Raw reference lines: character sheets from the file; viewer relations from the live
    state, seeded from the file (through the same gates) the first time."""
    sheet = read_raw(dataset_path(raw_dir, "character_sheet"), "character_sheet")
    if store.viewer_state_empty(engine):  # gated only to seed the state, so only then
        store.seed_viewer_state(engine, seed_relations(raw_dir, sheet, config), now_ns)
    return {"character_sheet": sheet, "viewer_relation": store.viewer_lines(engine)}


def seed_relations(raw_dir: Path, sheet: pd.DataFrame, config: LivePickConfig) -> pd.DataFrame:
    """The viewer relations of `raw_dir`'s file through the same gates, as the viewer state is seeded with."""
    relation = read_raw(dataset_path(raw_dir, "viewer_relation"), "viewer_relation")
    no_lines = relation.iloc[0:0].assign(dataset="live_chat")
    return normalise({"live_chat": no_lines, "character_sheet": sheet, "viewer_relation": relation}, config).tables["viewer_relation"]


def judge_windows(
    engine: sa.Engine, keys: list[tuple[str, int]], raw_dir: Path, config: LivePickConfig, tags: str,
    run_id: str | None, clock, summaries: str = "template",
) -> dict:
    """Judge the given windows (those not judged yet), run the seed's checks on what was judged,
    and store verdicts, checks and latency in one transaction.

    `tags` names the tagger (`rules.live_pick.tags`), `summaries` the summary writer."""
    keys = [k for k in keys if k not in store.already_judged(engine, keys)]
    if not keys:
        return {"windows": 0, "lines": 0, "latencies": {}, "late": store.record_late(engine)}
    now = clock()
    lines = store.lines_for(engine, keys)
    # Lines whose window cannot be known ride along, to be quarantined with their reason.
    stray = store.unwindowed(engine, now, 0)
    chat_raw = pd.concat([lines[["dataset", "file", "line", "text"]], stray], ignore_index=True)
    raw = {"live_chat": chat_raw, **references(raw_dir, engine, config, now)}
    norm = normalise(raw, config)
    sheet, relation = versioned_sheet(engine, norm.tables["character_sheet"], raw_dir, now), norm.tables["viewer_relation"]
    chat = norm.tables["live_chat"]
    q = norm.quarantine[norm.quarantine["dataset"] == "live_chat"].copy() if len(norm.quarantine) else empty_quarantine()
    repeated = chat["msg_id"].isin(store.judged_msg_ids(engine, list(chat["msg_id"])))
    if repeated.any():  # judged in an earlier window: the first one stands
        q = pd.concat([q, _quarantine_rows(chat[repeated], "duplicate_id", "msg_id was judged in an earlier window")], ignore_index=True)
        chat = chat[~repeated]
    window_of_line = dict(zip(lines["line"], zip(lines["character_id"], lines["window_ns"])))
    window_of = {m: window_of_line[int(l)] for m, l in zip(chat["msg_id"], chat["line"])}
    # Checks and summary vetting see the sheet versions the lines were judged with.
    judged = dataclasses.replace(norm, tables={**norm.tables, "live_chat": chat, "character_sheet": sheet})
    rows = records(write_summaries(judge(chat, sheet, relation, config, tag_source(tags)), judged, config, summaries))
    audit = window_audit(rows, run_checks(judged, rows, config), window_of, canonical(tags), summaries, keys)
    q["window"] = [window_of_line.get(int(l)) for l in q["line"]]
    step = config.window_seconds * timestamps.NS_PER_SEC
    forms = dict(zip(chat["msg_id"], chat["sent_at_form"]))
    meta = {}
    for key in keys:
        form = next((forms[m] for m, w in window_of.items() if w == key), "")
        meta[key] = {"window_start": timestamps.format_ns(key[1], form, config.timezone), "window_end_ns": key[1] + step,
                     "lines": sum(1 for w in window_of_line.values() if w == key)}
    tags_of = {r["msg_id"]: r["provenance"]["tags"] for r in rows}  # what the rules used: written back on close
    seq_of = {m: int(l) for m, l in zip(chat["msg_id"], chat["line"])}
    latencies = store.store_windows(engine, keys, rows, window_of, q, meta, tags_of, seq_of, now, run_id, clock, audit)
    failed = sorted({c for a in audit.values() for c in a["checks_failed"]})
    return {"windows": len(latencies), "lines": len(rows), "latencies": latencies, "late": store.record_late(engine),
            "checks_failed": failed, "summaries": summary_counts(rows)}


def window_audit(rows: list[dict], checks, window_of: dict, tagger: str, summaries: str, keys=None) -> dict:
    """Per window (`keys`, else those of the rows): the tagger and writer, summaries kept / fallen
    back, checks run and failed (a check fails for a window when one of its failing ids is a line
    of that window)."""
    out: dict = {}
    for key in set(window_of.values()) if keys is None else keys:
        lines = [r for r in rows if window_of[r["msg_id"]] == key]
        ids = {r["msg_id"] for r in lines}
        counts = summary_counts(lines)
        failed = {c.id: sorted(ids.intersection(c.failing_ids)) for c in checks if not c.passed}
        failed = {c: i for c, i in failed.items() if i}
        out[key] = {"tagger": tagger, "summary_writer": summaries, "summaries_kept": counts["kept"],
                    "summaries_fallback": counts["fallback"], "checks_run": len(checks), "checks_failed": failed}
    return out


def versioned_sheet(engine: sa.Engine, file_sheet: pd.DataFrame, raw_dir: Path, now_ns: int) -> pd.DataFrame:
    """Every stored version of the characters in the sheet file; the file is version 1 of a new character."""
    sheets.seed_versions(engine, file_sheet, dataset_path(raw_dir, "character_sheet"), now_ns)
    return sheets.versioned_sheet(engine, file_sheet)


def _quarantine_rows(chat: pd.DataFrame, code: str, reason: str) -> pd.DataFrame:
    return pd.DataFrame({"dataset": "live_chat", "file": chat["file"], "line": chat["line"], "id": chat["msg_id"],
                         "reason_code": code, "reason": reason, "raw": None})


def close_broadcast(engine: sa.Engine, character_id: str, config: LivePickConfig, clock) -> dict:
    """Write the lines answered since the last close back to the viewer state, in one transaction,
    then make the broadcast's sheet tuning suggestions.

    Answered: the window's picks and the skipped lines an operator picked up on the console.

    `answered_topics` gains the line's tags; `last_replied_at` becomes the end of the window in
    which the line was picked (the reply goes out after the window closes), in the line's form.
    """
    now = clock()
    step = config.window_seconds * timestamps.NS_PER_SEC
    with engine.begin() as conn:
        ended = conn.execute(sa.update(store.starts).where(store.starts.c.character_id == character_id)
                             .where(store.starts.c.ended_ns.is_(None)).values(ended_ns=now)).rowcount > 0
        last_closed = conn.execute(
            sa.select(sa.func.max(store.broadcasts.c.last_window_ns)).where(store.broadcasts.c.character_id == character_id)
        ).scalar_one()
        q = sa.select(store.verdicts.c.row, store.verdicts.c.tags, store.verdicts.c.window_ns).where(
            store.verdicts.c.character_id == character_id)
        if last_closed is not None:
            q = q.where(store.verdicts.c.window_ns > last_closed)
        judged = sorted(((store.load_json(r), store.load_json(t), int(w)) for r, t, w in conn.execute(q)), key=lambda x: x[2])
        if not judged:  # a broadcast started with nothing judged yet still goes off air
            return {"character_id": character_id, "answered": 0, "closed": False, "ended": ended}
        states = {v: store.load_json(r) for v, r in conn.execute(sa.select(store.viewer_state.c.viewer_id, store.viewer_state.c.row))}
        # Lines the operator picked up on the console count as answered too.
        picked = set(conn.execute(sa.select(store.pickups.c.msg_id).where(store.pickups.c.character_id == character_id)).scalars())
        answered = 0
        for row, tags, window_ns in judged:
            if row["verdict"] != V.PICK and row["msg_id"] not in picked:
                continue
            answered += 1
            state = states.get(row["viewer_id"]) or {
                "viewer_id": row["viewer_id"], "nickname": row["viewer_id"], "answered_topics": [],
                "closeness_level": config.first_time_viewer.closeness_level, "last_replied_at": None, "note": None,
            }
            topics = list(state.get("answered_topics") or [])
            topics += [t for t in tags or [] if t not in topics]
            form = row["window_start"][19:]  # "" (naive), "Z" or "+09:00": the line's own form
            state = {**state, "answered_topics": topics,
                     "last_replied_at": timestamps.format_ns(window_ns + step, form, config.timezone)}
            states[row["viewer_id"]] = state
            conn.execute(sa.delete(store.viewer_state).where(store.viewer_state.c.viewer_id == row["viewer_id"]))
            conn.execute(store.viewer_state.insert(), {"viewer_id": row["viewer_id"], "row": state, "updated_ns": now})
        conn.execute(store.broadcasts.insert(), {
            "character_id": character_id, "first_window_ns": judged[0][2], "last_window_ns": judged[-1][2],
            "closed_ns": now, "answered": answered,
        })
    # The closed broadcast's figures and sheet tuning suggestions, for the operator to decide on.
    broadcast = {"character_id": character_id, "first_window_ns": judged[0][2], "last_window_ns": judged[-1][2]}
    suggested = sheets.suggest_broadcast(engine, broadcast, config, now)
    return {"character_id": character_id, "answered": answered, "closed": True, "ended": ended,
            "broadcast_id": sheets.broadcast_id(character_id, judged[0][2], config.timezone),
            "suggestions": [s.suggestion_id for s in suggested.suggestions], "thin": suggested.thin}


def broadcasts_to_close(engine: sa.Engine, now_ns: int, gap_seconds: float) -> list[str]:
    """Characters whose last line arrived more than the gap ago, with windows judged since their last
    close, and no broadcast started and not closed."""
    gap = int(gap_seconds * timestamps.NS_PER_SEC)
    last_line = (
        sa.select(store.landing.c.character_id, sa.func.max(store.landing.c.arrived_ns).label("last"))
        .where(store.landing.c.character_id.is_not(None)).group_by(store.landing.c.character_id).subquery()
    )
    last_close = (
        sa.select(store.broadcasts.c.character_id, sa.func.max(store.broadcasts.c.last_window_ns).label("closed"))
        .group_by(store.broadcasts.c.character_id).subquery()
    )
    # judged: windows with verdicts, as a close counts them (a window whose every line was
    # quarantined has none, and would keep the broadcast due to close forever); looked up per
    # window, not by a scan of every verdict
    w, v = store.windows, store.verdicts
    has_verdicts = sa.exists().where(v.c.character_id == w.c.character_id, v.c.window_ns == w.c.window_ns)
    newest = (
        sa.select(w.c.character_id, sa.func.max(w.c.window_ns).label("judged"))
        .where(has_verdicts).group_by(w.c.character_id).subquery()
    )
    # a broadcast an operator started is theirs to close, however long its pauses
    on_air = sa.select(store.starts.c.character_id).where(store.starts.c.ended_ns.is_(None))
    q = (
        sa.select(last_line.c.character_id)
        .join(newest, newest.c.character_id == last_line.c.character_id)
        .outerjoin(last_close, last_close.c.character_id == last_line.c.character_id)
        .where(last_line.c.last <= now_ns - gap)
        .where(last_line.c.character_id.not_in(on_air))
        .where(sa.or_(last_close.c.closed.is_(None), newest.c.judged > last_close.c.closed))
    )
    with engine.connect() as conn:
        return [c for (c,) in conn.execute(q)]
