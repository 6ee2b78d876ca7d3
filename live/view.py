"""The operator's view of the live path: latest windows per broadcast, Markdown."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pandas as pd
import sqlalchemy as sa

from evals.markdown import md_cell, md_table
from live import store
from rules.live_pick import verdicts as V
from rules.live_pick.config import load_config


def latest_windows_markdown(engine: sa.Engine, per_character: int = 3) -> str:
    with engine.connect() as conn:
        wins = pd.read_sql(sa.select(store.windows).order_by(store.windows.c.window_ns.desc()), conn)
        audit = {(a.character_id, int(a.window_ns)): a for a in conn.execute(sa.select(store.audit))}
        late = conn.execute(sa.select(sa.func.count()).select_from(store.late)).scalar_one()
        quarantined = conn.execute(sa.select(sa.func.count()).select_from(store.quarantine)).scalar_one()
    if wins.empty:
        return "No window has been judged yet."
    out = [f"Windows judged: {len(wins)} · latency p50 {wins['latency_ms'].median() / 1000:.1f} s, "
           f"max {wins['latency_ms'].max() / 1000:.1f} s · late lines: {late} · quarantined lines: {quarantined}", ""]
    for character in sorted(set(wins["character_id"])):  # not a group-by: it reads text only up to a NUL
        group = wins[wins["character_id"] == character]
        for w in group.head(per_character).itertuples():
            rows = _rows(engine, character, int(w.window_ns))
            out.append(f"### {md_cell(character)} · {md_cell(w.window_start)} · {w.lines} lines · "
                       f"close → stored {w.latency_ms / 1000:.1f} s")
            a = audit.get((character, int(w.window_ns)))
            if a is not None:
                failed = store.load_json(a.checks_failed) or {}
                checks = (f"checks {a.checks_run - len(failed)}/{a.checks_run} passed"
                          + (f" (failed: {md_cell(', '.join(failed))})" if failed else ""))
                out.append(f"tagger {md_cell(a.tagger)} · summaries {md_cell(a.summary_writer)}: {a.summaries_kept} model, "
                           f"{a.summaries_fallback} fell back to the template · {checks}")
            picks = sorted((r for r in rows if r["verdict"] == V.PICK), key=lambda r: r["rank_in_window"])
            out += ["", md_table(["rank", "msg_id", "viewer", "summary"],
                                 [[r["rank_in_window"], r["msg_id"], r["viewer_id"], r["summary"]] for r in picks]) if picks else "no pick", ""]
            for verdict in V.ORDER[1:]:
                ids = [r["msg_id"] for r in rows if r["verdict"] == verdict]
                if ids:
                    out.append(f"- **{md_cell(verdict)}** ({len(ids)}): {md_cell(', '.join(ids))}")
            out.append("")
    return "\n".join(out)


def _rows(engine: sa.Engine, character: str, window_ns: int) -> list[dict]:
    with engine.connect() as conn:
        q = sa.select(store.verdicts.c.row).where(store.verdicts.c.character_id == character, store.verdicts.c.window_ns == window_ns)
        return [store.load_json(r) for r in conn.execute(q).scalars()]


def live_board_html(engine: sa.Engine) -> str:
    """The operator's HTML board over everything the live path has judged, with each window's
    close → stored latency. Built on demand (the board's report code stays off the live runs)."""
    from evals.board import Board, render_board
    from evals import domains

    with engine.connect() as conn:
        rows = [store.load_json(r) for r in conn.execute(sa.select(store.verdicts.c.row)).scalars()]
        wins = conn.execute(sa.select(store.windows.c.character_id, store.windows.c.window_start, store.windows.c.latency_ms)).all()
    latency = {(c, w): ms / 1000 for c, w, ms in wins}
    domain = domains.get("live_pick")
    report = domain.report(rows, None, [], None, {}, scope="live_pick · live windows")
    return render_board(Board("live_pick", rows, report, domains.get("live_pick").board(), latency=latency))


def suggestions_markdown(engine: sa.Engine, broadcast_id: str) -> str:
    """One closed broadcast: its figures per topic, its suggestions with their status and rationale,
    and the Launchpad config that applies each open one."""
    from live import sheets

    tz = load_config().timezone
    fig = sheets.broadcast_figures(engine, broadcast_id)
    if fig is None:
        return f"No figures for broadcast {md_cell(broadcast_id)} yet."
    t = fig["totals"]
    out = [f"**{md_cell(broadcast_id)}** · judged with sheet version {fig['sheet_version']} · {t['lines']} lines: "
           f"{t['answered']} answered, {t['cooldown_held']} held by cooldown, {t['closeness_held']} held by closeness, "
           f"{t['deferred']} deferred by rank, {t['out_of_world']} out of world · repeat askers {t['repeat_askers']}", ""]
    if fig["per_topic"]:
        out += [md_table(["topic", "lines", "answered", "held: cooldown", "elapsed s (held)", "held: closeness", "levels (held)",
                          "deferred", "repeat askers"],
                         [[p["topic"], p["lines"], p["answered"], p["cooldown_held"], _short(p["elapsed"]), p["closeness_held"],
                           _short(p["levels"]), p["deferred"], p["repeat_askers"]] for p in fig["per_topic"]]), ""]
    found = sheets.list_suggestions(engine, broadcast_id)
    if found:
        out += ["### Suggestions", "", md_table(
            ["id", "change", "current → proposed", "status", "rationale"],
            [[s["suggestion_id"], s["field"] + (f"[{s['topic']}]" if s["topic"] else ""),
              f"{s['current_value']} → {s['proposed_value']}", decision(s, tz), s["rationale"]] for s in found]), ""]
        open_ids = [s["suggestion_id"] for s in found if s["status"] == "open"]
        if open_ids:
            out += ["Apply one from the Launchpad of the `apply_sheet_suggestion` job:", "", "```yaml",
                    "ops:", "  apply_suggestion:", "    config:", f"      suggestion_id: {open_ids[0]}", "```", ""]
    else:
        out += ["No suggestion for this broadcast.", ""]
    out += [f"- {md_cell(n)}" for n in fig["notes"]]
    return "\n".join(out)


def _short(values: list, n: int = 12) -> str:
    return ", ".join(str(v) for v in values[:n]) + (" …" if len(values) > n else "")


def history_markdown(engine: sa.Engine, character_id: str) -> str:
    """Every version of a character's sheet: when, from what, by whom, and what changed."""
    from live import sheets
    from rules.live_pick.sheets import diff

    tz = load_config().timezone
    rows, prev, table = sheets.history(engine, character_id), None, []
    for r in rows:
        since = "from the start" if r["effective_ns"] is None else local_instant(r["effective_ns"], tz)
        table.append([r["version"], local_instant(r["created_ns"], tz), since, r["source"], r["suggestion_id"] or r["source_ref"],
                      r["author"] or "—", r["reply_cooldown_sec"], ", ".join(f"{k} {v}" for k, v in r["min_closeness_by_topic"].items()),
                      "; ".join(diff(prev, r)) or "as loaded"])
        prev = r
    if not table:
        return f"No sheet version of {md_cell(character_id)} yet."
    return md_table(["version", "made", "in force from", "source", "from", "by", "reply_cooldown_sec", "min_closeness_by_topic", "change"],
                    table)


def local_instant(ns: int | None, tz: str) -> str:
    """An instant on the operator's wall clock, as the pages show it: `2026-09-08 21:05:03 KST`."""
    if ns is None:
        return "—"
    return datetime.fromtimestamp(int(ns) / 1e9, tz=ZoneInfo(tz)).strftime("%Y-%m-%d %H:%M:%S %Z")


def decision(s: dict, tz: str) -> str:
    """A suggestion's status with who decided and when: `applied (v2) · by kim · 2026-09-09 10:00:00 KST`."""
    out = s["status"] + (f" (v{s['applied_version']})" if s.get("applied_version") else "") + (f": {s['reason']}" if s.get("reason") else "")
    if s.get("decided_ns") is not None:
        out += (f" · by {s['decided_by']}" if s.get("decided_by") else "") + f" · {local_instant(s['decided_ns'], tz)}"
    return out
