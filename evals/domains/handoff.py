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


SYNTHETIC_NOTE = "대화 로그, 연결 문구 목록, 도움말 목록도 규칙을 쓴 같은 손으로 만들었습니다. 실제 연결 판단의 품질은 실제 상담 로그가 있어야 잴 수 있습니다."
"""Shown when the input is synthetic (the sample data, or generated)."""


DOMAIN = Domain(
    SPEC, reporting, board, generate, synthetic_note=SYNTHETIC_NOTE,
    verdicts_description="One verdict per listed support room of the day: should the AI have handed it to a counsellor? "
                         "Reads the normalised days D−1…D+1 for rooms across midnight and re-entry the next day.",
    preview=preview,
    # Every room of the day judged or checked, and the rows that held rooms back.
    report_tables=lambda judged, config: day_tables(judged.tables, config),
    report_columns=("room_id", "verdict", "first_trigger_message_id"),
)
