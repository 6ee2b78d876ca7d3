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


SYNTHETIC_NOTE = "이벤트 로그와 접점 목록도 규칙을 쓴 같은 손으로 만들었습니다. 실제 재시도 탐지 품질은 실제 사용 로그와 제품 담당자의 표시가 있어야 잴 수 있습니다."
"""Shown when the input is synthetic (the sample data, or generated)."""


DOMAIN = Domain(
    SPEC, reporting, board, generate, synthetic_note=SYNTHETIC_NOTE,
    verdicts_description="One verdict per event: did the user try again (same text, reworded, across surfaces) or finish in one go?",
    preview=preview,
    report_columns=("event_id", "verdict", "surface_key", "surface_baseline", "max_overlap"),
)
