"""Golden agreement for persona: planner labels against rule codes.

`reply_empty` and `profile_unmapped` turns are listed with their reason and left out of the
denominators. A mismatch is placed at the first rule (in rule order) either side names.
"""

from __future__ import annotations

import pandas as pd

from evals.divergence import step_finder, wrong_cases
from evals.markdown import md_table
from evals.report import SMALL_DENOMINATOR_NOTE, Report, golden_report, record_metric
from evals.report import count_labels, golden_loader, labels_of, pair_labels, quarantined_ids, rows_by_id
from evals.shared_metrics import agreement_metric, checks_metric, flag_metrics, quarantine_metric
from evals.stats import Ratio
from rules.common.checks import CheckResult
from rules.persona import verdicts as V
from rules.persona.config import PersonaConfig

STEPS = {
    V.PROFILE_UNMAPPED: "설정 연결 단계",
    V.REPLY_EMPTY: "빈 응답 단계",
    V.FORBIDDEN_TOPIC: "금지 주제 단계",
    V.AGE_CONFLICT: "나이 단계",
    V.JOB_CONFLICT: "직업 단계",
}
OUTSIDE = "판정 코드 밖"
DECIDING = {
    STEPS[V.PROFILE_UNMAPPED]: ("character_code_raw", "character_code"),
    STEPS[V.REPLY_EMPTY]: ("reply_text",),
    STEPS[V.FORBIDDEN_TOPIC]: ("topic_tag", "forbidden_topic", "age"),
    STEPS[V.AGE_CONFLICT]: ("stated_age", "age"),
    STEPS[V.JOB_CONFLICT]: ("stated_job", "job"),
}
"""Per step, the fields whose values decide it (from the verdict row and its evidence)."""
LOOK_AT = {
    STEPS[V.PROFILE_UNMAPPED]: "character_code_raw 를 profiles.character_code 와 대조합니다 (앞뒤 공백을 지우고 대소문자는 가립니다).",
    STEPS[V.REPLY_EMPTY]: "reply_text 가 정말 비었는지, 수집 단계에서 잘리지 않았는지 봅니다.",
    STEPS[V.FORBIDDEN_TOPIC]: "topic_tag 를 그 캐릭터의 forbidden_topic 과 미성년 제한 주제 목록(rules/persona/config.yaml)에 견줍니다.",
    STEPS[V.AGE_CONFLICT]: "stated_age 를 profiles.age 와, 빈 설정 항목 정책(config.yaml)과 견줍니다.",
    STEPS[V.JOB_CONFLICT]: "stated_job 을 profiles.job 과, 빈 설정 항목 정책(config.yaml)과 견줍니다.",
    OUTSIDE: "라벨이나 판정이 여섯 코드 밖입니다. 골든 파일의 그 줄을 고칩니다.",
}
"""Per step, what governs it: the next steps name it beside the cases that diverged there."""
EXCLUDED_REASONS = {
    V.REPLY_EMPTY: "응답이 비어 있어 대조할 내용이 없습니다",
    V.PROFILE_UNMAPPED: "설정 목록에 없는 캐릭터라 대조할 설정이 없습니다",
}
HONESTY = [
    "topic_tag, stated_age, stated_job은 데이터에 붙은 값을 그대로 믿었습니다. 발화에서 이 값을 뽑는 단계의 오류는 이 수치에 들어 있지 않습니다.",
    "빈 설정 항목에 대한 판정(설정을 채워야 한다는 충돌)은 기획 기준에 따라 바뀔 수 있는 정책입니다.",
    SMALL_DENOMINATOR_NOTE,
]


load_golden = golden_loader("turn_no", "persona_code")
diverging_step = step_finder(STEPS, OUTSIDE, V.RULE_ORDER)


FLAG_AGREEMENT = "어긋남 여부 일치"


def _inconsistent(code: str) -> bool:
    """The yes/no reading of a code: the reply breaks the profile."""
    return code in V.INCONSISTENT


def build_report(rows: list[dict], golden: list[dict] | None, *, checks: list[CheckResult], quarantine: pd.DataFrame | None,
                 reconciliation: dict, config: PersonaConfig, scope: str,
                 extra_sections: list[tuple[str, str]] | None = None) -> Report:
    predicted = rows_by_id(rows, "turn_no")
    codes = labels_of(predicted, "persona_code")
    judged = {k: c for k, c in codes.items() if c not in V.EXCLUDED}
    paired = pair_labels(judged, golden, "turn_no", "persona_code", quarantined_ids(quarantine), "격리된 턴이라 판정하지 않았습니다")
    for g in golden or []:
        if codes.get(g["turn_no"]) in V.EXCLUDED:
            paired.not_judged.append({"id": g["turn_no"], "reason": f"{codes[g['turn_no']]}: 판정에서 뺀 턴입니다"})
    excluded = [
        {"id": k, "code": c, "reason": EXCLUDED_REASONS[c]} for k, c in sorted(codes.items()) if c in V.EXCLUDED
    ]
    minimum = config.report.verdict_agreement_min
    # Without judged labels there is no agreement to report.
    golden_metrics = [
        agreement_metric("규칙 코드가 기획자 라벨과 같은 턴 / 라벨이 있고 판정한 턴", paired, minimum),
        *flag_metrics(paired, _inconsistent, minimum,
                      (FLAG_AGREEMENT, "어긋남(나이·직업·금지 주제) 여부가 라벨과 같은 턴 / 라벨이 있고 판정한 턴"),
                      ("라벨의 어긋남을 규칙도 잡았나", "규칙도 어긋남으로 본 턴 / 라벨이 어긋남인 턴"),
                      ("규칙이 잡은 어긋남이 라벨과 맞나", "라벨도 어긋남인 턴 / 규칙이 어긋남으로 본 턴")),
    ] if paired.pairs else []
    metrics = [
        *golden_metrics,
        checks_metric(checks),
        record_metric("판정에서 뺀 턴", "빈 응답·설정 없음 턴 / 전체 턴", Ratio(len(excluded), len(codes)), "데이터", census=True),
        quarantine_metric(reconciliation, "두"),
    ]
    return golden_report("persona", scope, paired, checks, quarantine, reconciliation, HONESTY,
                         metrics=metrics, labels=list(V.ORDER[:4]),
                         wrong_cases=wrong_cases(paired, diverging_step, predicted, "summary", DECIDING,
                                                 also=[(FLAG_AGREEMENT, lambda g, p: _inconsistent(g) != _inconsistent(p))]),
                         verdict_counts=count_labels(codes.values(), V.ORDER), excluded=excluded,
                         extra_sections=extra_sections or [], step_hints=LOOK_AT, judged=len(codes))


def render_review_queue(queue: pd.DataFrame, candidates: int, size: int) -> str:
    head = (f"# 검토 대기열: 사용자가 설정을 바꿔 부른 턴\n\n후보 {candidates}턴 가운데 {len(queue)}턴 (표본 크기 {size}). "
            "규칙 판정을 보고 이 연출을 어긋남으로 볼지 `reviewer_decision`에 적어 주세요.\n\n")
    rows = [[r["turn_no"], r["cue_phrase"], r["user_text"], r["reply_text"], r["persona_code"], ""] for r in queue.to_dict("records")]
    return head + md_table(["turn_no", "신호 문구", "사용자 발화", "응답", "규칙 판정", "사람 판단"], rows)
