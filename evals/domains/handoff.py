"""handoff in the evaluation layer: its report (with every room of the day), board and generator."""

from __future__ import annotations

from evals.domains.domain import Domain
from evals.generate.handoff import generate
from evals.markdown import md_table
from rules.handoff.engine import day_tables
from rules.handoff.spec import SPEC


def reporting():
    from evals.handoff import build_report, load_golden

    return build_report, load_golden


def board():
    from evals.boards.handoff import BOARD

    return BOARD


def preview(rows: list[dict]) -> str:
    shown = [[r["room_id"], r["verdict"], r["summary"]] for r in rows][:30]
    return md_table(["room_id", "verdict", "summary"], shown) if shown else ""


DOMAIN = Domain(
    SPEC, reporting, board, generate,
    verdicts_description="One verdict per listed support room of the day: should the AI have handed it to a counsellor? "
                         "Reads the normalised days D−1…D+1 for rooms across midnight and re-entry the next day.",
    preview=preview,
    # Every room of the day judged or checked, and the rows that held rooms back.
    report_tables=lambda judged, config: day_tables(judged.tables, config),
)
