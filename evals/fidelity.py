"""What each report figure rests on and where it stops, in seed 004's manner, and the next steps
the figures call for (criteria missed, denominators too thin to read, checks failed)."""

from __future__ import annotations

from evals.report import MET, NOT_MET, NO_DATA, PERSON, Metric, Report
from rules.common.korean import josa

THIN = 10
"""Below this denominator a share is not read as a rate (no percentage is shown either)."""

_SHARED = {
    "판정 일치": "규칙과 합성 라벨을 같은 팀이 썼으므로 규칙이 자기 시험을 통과했다는 뜻 이상이 아닙니다. 라벨은 사람 검수 전이고, 격리되거나 판정에서 뺀 항목의 라벨은 분모에 들지 않습니다.",
    "자동 검증 통과": "코드가 판정 행을 입력 행에서 다시 계산해 대조합니다. 입력 자체가 틀린 경우(태그·추출 값의 오류)는 잡지 못합니다.",
    "격리된 행": "스키마와 데이터 품질 관문에서 빠진 행입니다. 기준 데이터(설정표·목록)는 날마다 다시 읽으므로 그 잘못된 행은 날마다 다시 셉니다.",
    "판정에서 뺀 턴": "빈 응답과 설정 없는 캐릭터는 대조할 것이 없어 분모 밖에 둡니다. 비율이 높으면 수집 단계를 먼저 봐야 합니다.",
}
_BY_DOMAIN = {
    "persona": {
        "어긋남 여부 일치": "코드 여섯 개를 '어긋남인가'라는 예/아니오로 줄여 센 값입니다. 어떤 어긋남인지가 틀려도 여기서는 맞은 것으로 셉니다.",
        "라벨의 어긋남을 규칙도 잡았나": "라벨이 어긋남인 턴만 분모에 둡니다. topic_tag·stated_age·stated_job 을 데이터 값 그대로 믿으므로 추출 오류는 들어 있지 않습니다.",
        "규칙이 잡은 어긋남이 라벨과 맞나": "규칙이 어긋남으로 본 턴만 분모에 둡니다. 빈 설정 항목을 충돌로 보는 정책에 따라 값이 달라집니다.",
    },
    "live_pick": {
        "답변 선택 일치": "'지금 답변인가'의 예/아니오만 봅니다. 빠진 사유가 틀려도 여기서는 맞은 것으로 셉니다.",
        "운영자가 고른 줄을 규칙도 골랐나": "운영자 라벨은 합성입니다. 실제 운영자는 방송 흐름을 보고 후원 순위를 건너뛰기도 합니다.",
        "규칙이 고른 줄을 운영자도 골랐나": "태그를 수집기의 정답 태그로 넣어 잰 값입니다. 모델 태거가 틀리는 경우는 들어 있지 않습니다.",
    },
    "retry": {
        "다시 시도 여부 일치": "one_shot 인지 아닌지만 봅니다. 기준선은 판정한 범위 안에서만 세므로 범위가 바뀌면 값도 바뀝니다.",
        "라벨의 다시 시도를 규칙도 잡았나": "라벨이 다시 시도인 이벤트만 분모에 둡니다. 세션 경계는 로그의 session_id 를 그대로 믿었습니다.",
        "규칙이 잡은 다시 시도가 라벨과 맞나": "규칙이 다시 시도로 본 이벤트만 분모에 둡니다. 겹침은 분수 그대로 비교했습니다.",
    },
    "handoff": {
        "판정 대상": "AI 가 한 번이라도 답했거나 연결이 늦은 대화만 판정 대상입니다. 대상 밖 대화는 목록에 없지만 여기 셉니다.",
        "목록에 올린 대화": "판정 차례(①→⑤)에서 처음 걸린 사유 하나만 남깁니다. 둘 이상 걸린 대화의 뒤 사유는 보이지 않습니다.",
        "제때 연결": "연결 문구별 first_reply_min 을 기준으로 셉니다. 문구 목록이 바뀌면 이 값도 바뀝니다.",
        "판정 보류": "빠진 줄이 있는 대화만 보류합니다. 보류가 늘면 판정한 대화의 대표성이 줄어듭니다.",
        "재문의 잠정": "다음 날 데이터가 아직 없어 24시간 창을 다 보지 못한 대화입니다.",
    },
}
_PERSON = "사람이 표본을 보고 동의한 비율입니다. 표본은 해시로 고른 재현 가능한 20건이며, 한 사람의 판단이라 사람 사이 일치는 재지 않았습니다."


def basis_of(domain: str, m: Metric) -> str:
    """The basis and known limits of one figure."""
    if m.status.startswith(PERSON):
        return _PERSON if m.ratio is not None else "아직 판단이 없습니다. " + _PERSON
    text = _BY_DOMAIN.get(domain, {}).get(m.name) or _SHARED.get(m.name)
    if text is None and m.name.startswith("판정별 일치"):
        text = "그 판정이 정답인 대화만 분모에 둡니다. 분모가 작으면 한두 건으로 크게 움직입니다."
    return text or "규칙이 센 값을 그대로 적었습니다."


def next_steps(report: Report, has_rows: bool = True) -> list[str]:
    """What the figures ask for, most pressing first."""
    out = []
    if not has_rows:
        out.append("이 범위에는 판정한 항목이 없습니다. 입력 파일이 이 날을 담고 있는지, 격리된 행이 모두 여기서 빠진 것은 아닌지 확인합니다.")
    for c in report.checks:
        if not c.passed:
            out.append(f"자동 검증 {c.id}({c.title})에서 실패가 나왔습니다: {c.detail or ', '.join(c.failing_ids[:5])}. 규칙이나 입력을 고치기 전에는 이 범위의 수치를 믿지 않습니다.")
    for m in report.metrics:
        if m.status == NOT_MET:
            out.append(f"{josa(m.name, '이/가')} 기준({m.criterion})에 못 미칩니다 ({m.ratio.format()}). 틀린 사례의 갈라진 단계부터 봅니다.")
    for m in report.metrics:
        if m.ratio is not None and 0 < m.ratio.denominator < THIN and m.status in (MET, NOT_MET):
            out.append(f"{m.name}의 분모가 {m.ratio.denominator}뿐이라 기준 판정을 믿기 어렵습니다. 라벨을 더 모읍니다.")
        elif m.status == NO_DATA:
            out.append(f"{josa(m.name, '은/는')} 분모가 0이라 재지 못했습니다.")
    undecided = [m for m in report.metrics if m.status.startswith(PERSON) and m.ratio is None and m.key]
    if undecided:
        out.append("사람이 볼 표본이 아직 판단 전입니다: " + ", ".join(f"{m.key} {m.name}" for m in undecided) + ".")
    rec = report.reconciliation
    if rec and not all(r["reconciles"] for r in rec.values()):
        out.append("원본 = 정규화 + 격리가 맞지 않는 데이터셋이 있습니다. 행이 조용히 사라졌는지 먼저 확인합니다.")
    return out
