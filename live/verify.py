"""The record's side of the live service: every window the service finished is judged again
with the batch path (the window's lines, gated, tagged and judged together, as `verdicts judge`
does) and compared with the streamed verdicts, field for field. Free of Dagster."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import sqlalchemy as sa

from evals.markdown import md_cell, md_table
from live import store
from live.judge import references, versioned_sheet
from rules.live_pick.config import LivePickConfig
from rules.live_pick.engine import judge, records
from rules.live_pick.normalise import normalise
from rules.live_pick.tags import tag_source


def rejudge_windows(engine: sa.Engine, keys: list[tuple[str, int]], raw_dir: Path, config: LivePickConfig, tags: str,
                    run_id: str | None, now_ns: int) -> list[dict]:
    """Re-judge each window from the lines the service judged in it; store and return the outcome."""
    out = []
    refs = references(raw_dir, engine, config, now_ns)
    for key in keys:
        with engine.connect() as conn:
            streamed = {m: store.load_json(r) for m, r in conn.execute(
                sa.select(store.verdicts.c.msg_id, store.verdicts.c.row)
                .where(store.verdicts.c.character_id == key[0], store.verdicts.c.window_ns == key[1]))}
            lines = conn.execute(sa.select(store.landing.c.seq, store.landing.c.text)
                                 .where(store.landing.c.seq.in_(sa.select(store.verdicts.c.seq).where(
                                     store.verdicts.c.character_id == key[0], store.verdicts.c.window_ns == key[1])))
                                 .order_by(store.landing.c.seq)).all()
            window_start = conn.execute(sa.select(store.windows.c.window_start).where(
                store.windows.c.character_id == key[0], store.windows.c.window_ns == key[1])).scalar_one()
        raw = pd.DataFrame({"dataset": "live_chat", "file": "live_pick_landing", "line": [int(s) for s, _ in lines],
                            "text": [t for _, t in lines]}, columns=["dataset", "file", "line", "text"])
        norm = normalise({"live_chat": raw, **refs}, config)
        sheet = versioned_sheet(engine, norm.tables["character_sheet"], raw_dir, now_ns)  # the versions the service used
        batch = {r["msg_id"]: r for r in records(judge(norm.tables["live_chat"], sheet,
                                                       norm.tables["viewer_relation"], config, tag_source(tags)))}
        differing = sorted(m for m in set(batch) | set(streamed) if not same_verdict(batch.get(m), streamed.get(m)))
        outcome = {"character_id": key[0], "window_ns": key[1], "window_start": window_start, "matches": not differing,
                   "differing": differing, "lines": len(streamed), "checked_ns": now_ns, "run_id": run_id}
        with engine.begin() as conn:
            conn.execute(sa.delete(store.rejudged).where(store.rejudged.c.character_id == key[0], store.rejudged.c.window_ns == key[1]))
            conn.execute(store.rejudged.insert(), outcome)
        out.append(outcome)
    return out


def same_verdict(batch: dict | None, streamed: dict | None) -> bool:
    """Field for field, but for a sentence a model summary writer was asked for: the re-judgement
    writes the template, and a model's sentence is its own (the checks vetted it when streamed)."""
    if batch is None or streamed is None:
        return batch is streamed
    p = streamed.get("provenance") or {}
    if p.get("summary") in (None, "template") and p.get("summary_fallback") is None:
        return batch == streamed
    return _without_sentence(batch) == _without_sentence(streamed)


def _without_sentence(row: dict) -> dict:
    return {**row, "summary": None, "provenance": {**(row.get("provenance") or {}), "summary": None, "summary_fallback": None}}


def comparison_markdown(outcomes: list[dict]) -> str:
    bad = [o for o in outcomes if not o["matches"]]
    head = f"{len(outcomes) - len(bad)} of {len(outcomes)} live windows match the batch re-judgement field for field."
    if not bad:
        return head
    rows = [[md_cell(o["character_id"]), md_cell(o["window_start"]), len(o["differing"]), md_cell(", ".join(o["differing"][:20]))]
            for o in bad]
    return head + "\n\n" + md_table(["character", "window_start", "differing", "msg_ids"], rows)


def latest_outcomes(engine: sa.Engine, limit: int = 200) -> list[dict]:
    with engine.connect() as conn:
        rows = conn.execute(sa.select(store.rejudged).order_by(store.rejudged.c.checked_ns.desc()).limit(limit)).all()
    return [{**r._mapping, "differing": store.load_json(r.differing)} for r in rows]
