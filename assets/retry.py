"""retry as Dagster assets: the shared daily chain over the retry rules.

The baseline of each surface is taken over the day's events, the partition being the judged
scope; the report carries the baseline sweep.
"""

from assets.common.chain import build_assets, seed_checks
from assets.common.metadata import md_table
from assets.common.wiring import chain_for
from rules.retry import verdicts as V
from rules.retry.engine import judge
from schemas.retry import DOMAIN


def _preview(rows: list[dict]) -> str:
    shown = [[r["event_id"], r["session_id"], r["surface_key"], r["verdict"], r["matched_event_id"] or "—", r["reason"]]
             for r in rows if r["verdict"] != V.ONE_SHOT][:30]
    return md_table(["event_id", "session_id", "surface_key", "verdict", "matched", "reason"], shown) if shown else ""


CHAIN = chain_for(
    DOMAIN,
    judge=lambda t, cfg: judge(t["interaction_events"], t["surface_catalog"], cfg),
    check_titles=seed_checks(DOMAIN),
    verdicts_description="One verdict per event: did the user try again (same text, reworded, across surfaces) or finish in one go?",
    preview=_preview,
)

assets = build_assets(CHAIN)
