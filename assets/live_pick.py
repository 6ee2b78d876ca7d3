"""live_pick as Dagster assets: the shared daily chain over the live_pick rules."""

from assets.common.chain import build_assets, seed_checks
from assets.common.metadata import md_table
from assets.common.wiring import chain_for
from rules.live_pick import verdicts as V
from rules.common.gates import Normalised, empty_quarantine
from rules.live_pick.engine import judge
from rules.live_pick.normalise import JSON_COLUMNS
from rules.live_pick.summaries import write_summaries
from schemas.live_pick import DOMAIN


def _preview(rows: list[dict]) -> str:
    picks = [[r["window_start"], r["character_id"], r["rank_in_window"], r["msg_id"], r["summary"]]
             for r in rows if r["verdict"] == V.PICK][:30]
    return md_table(["window_start", "character_id", "rank", "msg_id", "summary"], picks) if picks else ""


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
)

assets = build_assets(CHAIN)
