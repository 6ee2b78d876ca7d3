"""live_pick as Dagster assets: the shared daily chain over the live_pick rules."""

import pandas as pd
import sqlalchemy as sa

from assets.common.chain import build_assets, seed_checks
from assets.common.metadata import md_table
from assets.common.wiring import chain_for
from rules.live_pick import verdicts as V
from rules.common.gates import Normalised, empty_quarantine
from rules.live_pick.engine import judge
from rules.live_pick.normalise import JSON_COLUMNS
from rules.live_pick.summaries import write_summaries
from rules.live_pick.sheets import VERSIONS_TABLE, with_history
from schemas.live_pick import DOMAIN


def _preview(rows: list[dict]) -> str:
    picks = [[r["window_start"], r["character_id"], r["rank_in_window"], r["msg_id"], r["summary"]]
             for r in rows if r["verdict"] == V.PICK][:30]
    return md_table(["window_start", "character_id", "rank", "msg_id", "summary"], picks) if picks else ""


def _sheet_history(tables: dict, warehouse, config, day: str) -> dict:
    """Every stored version of the day's characters' sheets (the day's sheet row is version 1 of a
    character with none stored), so a day is judged with the version in force when each window opened."""
    with warehouse.engine.connect() as conn:
        # Rows as Python objects: nanosecond instants must not pass through float.
        rows = conn.execute(sa.text(f'SELECT * FROM "{VERSIONS_TABLE}"')).mappings().all() if sa.inspect(conn).has_table(VERSIONS_TABLE) else []
    stored = pd.DataFrame([dict(r) for r in rows], dtype=object) if rows else None
    return {**tables, "character_sheet": with_history(tables["character_sheet"], stored)}


CHAIN = chain_for(
    DOMAIN,
    time_fields={"live_chat": "sent_at"},
    json_columns=JSON_COLUMNS,
    # tagger and summary writer come from the live_pick configuration (config.yaml: tagger, summary_writer)
    judge=lambda t, cfg: write_summaries(judge(t["live_chat"], t["character_sheet"], t["viewer_relation"], cfg, cfg.tagger),
                                         Normalised(tables=t, quarantine=empty_quarantine()), cfg, cfg.summary_writer),
    check_titles=seed_checks(DOMAIN),
    verdicts_description="One verdict per judged chat line: which three lines each character answers per 30-second window, and why the others were left out.",
    preview=_preview,
    verdict_json_columns=("evidence", "provenance"),
    history=_sheet_history,
)

assets = build_assets(CHAIN)
