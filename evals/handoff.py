"""Golden agreement for handoff: hand labels per room against rule verdicts.

A labelled room that was judged but not listed counts as `목록에 올리지 않음`; a held room is
shown as not judged. A mismatch is placed at the first rule (in rule order) either side names,
and mismatched rooms are listed for a review of the phrase list and the verdict order. The
header counts (rooms of the day, held, in scope, listed per verdict, on-time handoffs) come
from every room of the day, listed or not.
"""

from __future__ import annotations

import pandas as pd

from evals.divergence import step_finder, wrong_cases
from evals.markdown import md_table
from evals.report import SMALL_DENOMINATOR_NOTE, Report, WrongCase, golden_report, record_metric, values_text
from evals.report import count_labels, golden_loader, labels_of, pair_labels, rows_by_id
from evals.shared_metrics import AGREEMENT, RULE_AND_LABELS, agreement_metric, checks_metric, quarantine_metric
from evals.stats import Ratio
from rules.common.checks import CheckResult
from rules.handoff import verdicts as V
from rules.handoff.config import HandoffConfig
from rules.handoff.engine import day_summary

STEPS = {
    V.KEPT_ANSWERING: "상담원 요청 단계 (연결 문구 목록)",
    V.UNCITED: "도움말 인용 단계",
    V.REENTRY: "재문의 단계 (24시간 창)",
    V.LATE_REPLY: "연결 지연 단계",
    V.AI_ENDED: "AI 종료 단계",
}
OUTSIDE = "판정 키 밖"
DECIDING = {
    STEPS[V.KEPT_ANSWERING]: ("matched_phrase", "first_trigger_message_id", "ai_after_trigger", "counselor_message_count"),
    STEPS[V.UNCITED]: ("uncited_message_ids", "cited_article_id"),
    STEPS[V.REENTRY]: ("reentry_hours", "next_room_id", "closed_at"),
    STEPS[V.LATE_REPLY]: ("reply_wait_min", "first_reply_min", "matched_phrase"),
    STEPS[V.AI_ENDED]: ("closed_at", "counselor_message_count"),
}
"""Per step, the fields whose values decide it (from the verdict row and its evidence)."""
LOOK_AT = {
    STEPS[V.KEPT_ANSWERING]: "matched_phrase 와 연결 문구 목록(handoff_phrases), ai_after_trigger·counselor_message_count 를 봅니다.",
    STEPS[V.UNCITED]: "uncited_message_ids 의 cited_article_id 가 도움말 목록(help_articles)에 있는지 봅니다.",
    STEPS[V.REENTRY]: "reentry_hours 와 next_room_id 를 봅니다 (24시간 이하면 재문의, 다음 날 데이터가 없으면 잠정).",
    STEPS[V.LATE_REPLY]: "reply_wait_min 을 연결 문구의 first_reply_min 과 견줍니다.",
    STEPS[V.AI_ENDED]: "rooms.closed_by 와 closed_at, 앞선 네 조건에 걸리지 않았는지 봅니다.",
    OUTSIDE: "라벨이나 판정이 다섯 키(와 목록에 올리지 않음) 밖입니다. 골든 파일의 그 줄을 고칩니다.",
}
"""Per step, what governs it: the next steps name it beside the cases that diverged there."""
LABELS = [*V.RULE_ORDER, V.NOT_LISTED]
HONESTY = [
    "인용이 있는 AI 답이 그 도움말 내용과 맞는지는 규칙이 보지 않습니다. 상담원이 펼쳐 보고 판단합니다.",
    "연결 문구에 걸린 메시지가 실제로 상담원을 원한 것인지는 상담 매니저가 정합니다. 문구 목록이 바뀌면 판정도 바뀝니다.",
    "재문의는 다음 날 데이터까지 봐야 정해집니다. 다음 날이 아직 없으면 재문의 판정은 잠정이고 보고서가 그렇게 표시합니다.",
    SMALL_DENOMINATOR_NOTE,
]


load_golden = golden_loader("room_id", "verdict")
diverging_step = step_finder(STEPS, OUTSIDE, V.RULE_ORDER)


def build_report(rows: list[dict], golden: list[dict] | None, *, checks: list[CheckResult], quarantine: pd.DataFrame | None,
                 reconciliation: dict, config: HandoffConfig, scope: str,
                 day_rooms: pd.DataFrame | None = None, held_rows: pd.DataFrame | None = None) -> Report:
    listed = rows_by_id(rows, "room_id")
    predicted = labels_of(listed, "verdict")
    verdict_counts = count_labels(predicted.values(), V.ORDER)
    held: set[str] = set()
    if day_rooms is not None and len(day_rooms):
        for room, status in zip(day_rooms["room_id"], day_rooms["status"]):
            if status == V.HELD_STATUS:
                held.add(room)
            elif status != V.LISTED and room not in predicted:
                predicted[room] = V.NOT_LISTED
    paired = pair_labels(predicted, golden, "room_id", "verdict", held, f"{V.HELD}: 판정하지 않은 대화입니다")
    counts = day_summary(day_rooms) if day_rooms is not None else {}

    metrics = [
        agreement_metric("규칙 판정이 사람 라벨과 같은 대화 / 라벨이 있고 판정한 대화", paired, config.report.verdict_agreement_min),
        *[record_metric(f"판정별 일치 · {v}", f"규칙도 {v}인 대화 / 라벨이 {v}인 대화",
                        Ratio(sum(a == b for _, a, b in paired.pairs if a == v), sum(a == v for _, a, _ in paired.pairs)),
                        RULE_AND_LABELS)
          for v in LABELS],
        checks_metric(checks),
        quarantine_metric(reconciliation, "네"),
    ]
    if counts:  # counts of every room in scope, not samples: no interval
        opened = "그날 열린 대화" if len(_days(day_rooms)) == 1 else "범위 안에 열린 대화"
        metrics[:0] = [
            record_metric("판정 대상", "AI가 답했거나 연결이 늦은 대화 / 판정한 대화", Ratio(counts["in_scope"], counts["judged"]), "데이터",
                          "대상 밖 대화는 목록에 없지만 여기 셉니다", census=True),
            record_metric("목록에 올린 대화", "목록에 올린 대화 / 판정 대상", Ratio(counts["listed"], counts["in_scope"]), "규칙", census=True),
            record_metric("제때 연결", "기준 시간 안에 상담원이 받은 연결 / 상담원에게 넘긴 대화", Ratio(counts["on_time_handoffs"], counts["handoffs"]),
                          "규칙 · 데이터", census=True),
            record_metric("판정 보류", f"판정 보류 대화 / {opened}", Ratio(counts["held"], counts["rooms"]), "데이터",
                          "빠진 줄이 있는 대화만 보류하고 나머지는 그대로 판정합니다", census=True),
        ]
        if counts["provisional"]:
            metrics.insert(0, record_metric("재문의 잠정", "다음 날 데이터가 없어 재문의가 잠정인 대화 / 목록에 올린 대화",
                                            Ratio(counts["provisional"], counts["listed"]), "데이터",
                                            "다음 날 파티션이 들어오면 다시 판정합니다", census=True))
    if not paired.pairs:
        metrics = [m for m in metrics if not m.name.startswith((AGREEMENT, "판정별 일치"))]
    wrong = wrong_cases(paired, diverging_step, listed, "summary", DECIDING)
    if counts:
        verdict_counts[f"{V.NOT_LISTED} (대상 안)"] = counts["in_scope_unlisted"]
        verdict_counts["판정 대상 밖"] = counts["out_of_scope"]
        verdict_counts[V.HELD] = counts["held"]
    return golden_report("handoff", scope, paired, checks, quarantine, reconciliation, HONESTY,
                         metrics=metrics, labels=LABELS, wrong_cases=wrong, verdict_counts=verdict_counts,
                         excluded=held_group(held_rows), step_hints=LOOK_AT,
                         judged=counts["judged"] if counts else None,
                         extra_sections=[s for s in (_header_section(counts, day_rooms), _held_section(held_rows), _review_section(wrong)) if s])


UNKNOWN_ROOM = "(대화 모름)"
"""The id shown for a left-out row whose room is not known."""


def held_group(held_rows: pd.DataFrame | None) -> list[dict]:
    """Every row that held a room back (or belongs to no room), with its reason."""
    if held_rows is None or not len(held_rows):
        return []
    out = []
    for r in held_rows.to_dict("records"):
        r = {k: None if not isinstance(v, (list, dict)) and pd.isna(v) else v for k, v in r.items()}
        where = f"{r['dataset']} {int(r['line'])}행" if r["line"] is not None else r["dataset"]
        out.append({"id": r["room_id"] or UNKNOWN_ROOM, "code": r["reason_code"], "reason": f"{where} · {r['id'] or '—'}: {r['reason']}"})
    return out


AGGREGATES = "집계"
"""The header section's heading starts with this (a day's: "하루 집계 · 2026-10-01")."""


def _days(day_rooms: pd.DataFrame | None) -> list[str]:
    if day_rooms is None or not len(day_rooms) or "opened_day" not in day_rooms:
        return []
    return sorted({d for d in day_rooms["opened_day"] if isinstance(d, str)})


def aggregates_heading(days: list[str]) -> str:
    """"하루 집계 · D" for one day; for several, how many and from when to when (a whole folder is not a day)."""
    if len(days) == 1:
        return f"하루 {AGGREGATES} · {days[0]}"
    if not days:
        return f"{AGGREGATES} · 열린 대화 없음"
    return f"{AGGREGATES} · {len(days)}일 ({days[0]} ~ {days[-1]})"


def is_aggregates(heading: str) -> bool:
    return heading.startswith((AGGREGATES, f"하루 {AGGREGATES}"))


def _header_section(counts: dict, day_rooms: pd.DataFrame | None) -> tuple[str, str] | None:
    if not counts:
        return None
    opened = "그날 열린 대화" if len(_days(day_rooms)) == 1 else "범위 안에 열린 대화"
    rows = [
        [opened, counts["rooms"]],
        [V.HELD, counts["held"]],
        ["판정한 대화", counts["judged"]],
        ["판정 대상 (AI 답변 또는 늦은 연결)", counts["in_scope"]],
        ["목록에 올린 대화", counts["listed"]],
        *[[f"· {v}", n] for v, n in counts["listed_per_verdict"].items()],
        ["대상이지만 목록 밖", counts["in_scope_unlisted"]],
        ["판정 대상 밖", counts["out_of_scope"]],
        ["상담원에게 넘긴 대화", counts["handoffs"]],
        ["· 제때 연결", counts["on_time_handoffs"]],
        ["· 늦은 연결", counts["late_handoffs"]],
        ["재문의 잠정", counts["provisional"]],
    ]
    return aggregates_heading(_days(day_rooms)), md_table(["항목", "대화 수"], rows)


def _held_section(held_rows: pd.DataFrame | None) -> tuple[str, str] | None:
    if held_rows is None or not len(held_rows):
        return None
    rooms = sorted({r for r in held_rows["room_id"] if isinstance(r, str)})
    loose = int(held_rows["room_id"].isna().sum())
    body = (f"보류한 대화 {len(rooms)}개: {', '.join(rooms) or '없음'}. 이 대화들만 판정에서 빼고 나머지 대화는 그대로 판정했습니다."
            + (f" 어느 대화인지 모르는 줄 {loose}개는 판정에서 빼고 위 표에 사유를 적었습니다." if loose else ""))
    return V.HELD, body


def _review_section(wrong: list[WrongCase]) -> tuple[str, str] | None:
    if not wrong:
        return None
    rows = [[w.id, w.gold, w.predicted, w.step, values_text(w.values), w.summary] for w in wrong]
    body = ("연결 문구 목록과 판정 차례를 다시 볼 대화입니다.\n\n"
            + md_table(["room_id", "사람 라벨", "규칙 판정", "갈라진 단계", "가른 값", "규칙 요약"], rows))
    return "검토할 대화", body
