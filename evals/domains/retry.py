"""retry in the evaluation layer: its report, board and generator.

The baseline of each surface is taken over the judged scope (a day in Dagster); the report carries the baseline sweep.
"""

from __future__ import annotations

from evals.domains.domain import Domain
from evals.generate.retry import generate
from evals.markdown import md_table
from rules.retry import verdicts as V
from rules.retry.spec import SPEC


def reporting():
    from evals.retry import build_report, load_golden

    return build_report, load_golden


def board():
    from evals.boards.retry import BOARD

    return BOARD


def preview(rows: list[dict]) -> str:
    shown = [[r["event_id"], r["session_id"], r["surface_key"], r["verdict"], r["matched_event_id"] or "—", r["reason"]]
             for r in rows if r["verdict"] != V.ONE_SHOT][:30]
    return md_table(["event_id", "session_id", "surface_key", "verdict", "matched", "reason"], shown) if shown else ""


DOMAIN = Domain(
    SPEC, reporting, board, generate,
    verdicts_description="One verdict per event: did the user try again (same text, reworded, across surfaces) or finish in one go?",
    preview=preview,
)
