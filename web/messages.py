"""One Korean wording for what people read on the pages: reason codes, check titles, errors and
states. English stays in logs and machine output (the JSON endpoints keep their codes); a page shows
`reason(code)`, `check_title(id)`, `error(key)` or `state(key)`, and the console's script reads the
same catalogue (`catalogue()`, handed to the page as JSON).

A code with no entry is shown as it is, after `UNKNOWN_PREFIX`, so a new code is visible, never hidden.
"""

from __future__ import annotations

import json

from starlette.responses import JSONResponse

from rules.common import reason_words
from web.bodies import BodyError, json_body
from web.security import token_ok

UNKNOWN_PREFIX = reason_words.UNKNOWN_PREFIX

REASONS = reason_words.REASONS
"""Quarantine reason codes in Korean (`rules.common.reason_words`, which the boards read too)."""

CHECKS: dict[str, str] = {
    "schema": "출력 형식(JSON Schema)",
    "1.verdict_enum": "판정 값이 다섯 가지 중 하나",
    "2.required_filled": "필수 필드가 모두 채워짐",
    "3.ranges": "순위·경과 초의 범위",
    "4.cooldown": "쿨다운 경과 시간 재계산",
    "5.rank": "구간 순위 재계산",
    "6.evidence_fields": "근거 필드가 실제 컬럼",
    "7.evidence_values": "근거 값이 원본과 같음",
    "8.polite": "요약이 존댓말 문장",
    "9.empty_tags": "태그 없는 줄은 세계관 밖",
    "10.rule_order": "판정 순서(앞에서 걸리면 멈춤)",
    "11.closeness": "주제별 친밀 기준",
    "12.vocabulary": "태그가 캐릭터 주제 어휘 안",
    "13.filled_when": "경과 초는 기록이 있으면 언제나",
    "recompute": "모든 판정을 입력에서 다시 계산",
}

ERRORS: dict[str, str] = {
    "not_found": "찾는 페이지가 없습니다.",
    "no_judged_line": "판정된 줄 가운데 그런 메시지 번호가 없습니다.",
    "already_a_pick": "이미 답변할 질문으로 뽑힌 줄입니다.",
    "msg_id_required": "메시지 번호(msg_id)가 필요합니다.",
    "character_required": "캐릭터 번호(character_id)가 필요합니다.",
    "unknown_character": "설정표에 없는 캐릭터입니다.",
    "bad_json": "요청 본문을 JSON 으로 읽을 수 없습니다.",
    "token_required": "이 서비스의 토큰이 필요합니다. 주소에 ?token=… 을 붙여 다시 여세요.",
    "network": "서비스에 닿지 못했습니다. 잠시 뒤 다시 시도하세요.",
}

STATES: dict[str, str] = {
    "connecting": "연결 중…",
    "live": "연결됨 · 실시간",
    "down": "끊김",
    "ready": "판정 도우미 준비됨",
    "starting": "판정 도우미 띄우는 중",
    "off": "판정 도우미 없음(서비스가 직접 판정)",
    "failed": "판정 도우미 멈춤(서비스가 직접 판정)",
    "closed": "방송을 닫았습니다",
    "nothing_to_close": "지난 닫기 뒤로 판정한 구간이 없습니다",
}


DATASET_ERRORS: tuple[tuple[str, str], ...] = (
    (r"no line is a JSON object", "JSON 객체인 줄이 하나도 없습니다. JSON Lines 파일(한 줄에 JSON 객체 하나)인지 확인하세요."),
    (r"required column is missing from every row", "모든 행에 필수 열이 없습니다."),
    (r"is a directory, not a JSON Lines file", "폴더입니다. JSON Lines 파일을 올리세요."),
    (r"(?:file|folder) not found", "파일이 없습니다."),
    (r"cannot be read \((?P<why>.*)\)", "파일을 읽을 수 없습니다 ({why})."),
    (r"not UTF-8 text \(.* on line (?P<line>\d+)\)", "UTF-8 텍스트가 아닙니다 ({line}번째 줄)."),
    (r"no line has a readable timestamp", "날짜를 정할 수 있는 시각이 있는 줄이 없습니다."),
)
"""A dataset's load errors (`rules.common.jsonl.DatasetError`, English in logs) as a page says them."""


def dataset_error(reason: str | None) -> str:
    """The Korean of a dataset load error; any other failure is named only as one (its English is in the log)."""
    import re

    for pattern, korean in DATASET_ERRORS:
        m = re.search(pattern, reason or "")
        if m:
            return korean.format(**m.groupdict())
    return "판정하는 중에 오류가 났습니다. 자세한 내용은 서비스 로그에 있습니다."


reason = reason_words.label


def check_title(check_id: str) -> str:
    return CHECKS.get(check_id, check_id)


def error(key: str) -> str:
    return ERRORS.get(key, key)


def refused(code: str, status_code: int, detail: str | None = None) -> JSONResponse:
    """An error of an action a page takes, as JSON: the code for machines, the Korean message for people."""
    return JSONResponse({"error": detail or code, "code": code, "message": error(code)}, status_code=status_code)


async def action_body(request, token: str | None, expected: str = "") -> tuple[object, JSONResponse | None]:
    """The JSON body of a console action, or the refusal to answer with instead: no valid token (403),
    or a body that is not JSON (`bad_json`, its reason after `expected`)."""
    if not token_ok(request, token):
        return None, refused("token_required", 403, "a valid token is required")
    try:
        return await json_body(request), None
    except BodyError as exc:
        return None, refused("bad_json", exc.status, expected + exc.reason)


def state(key: str) -> str:
    return STATES.get(key, key)


def catalogue() -> dict[str, dict[str, str]]:
    """Everything above, for a page's script."""
    return {"reasons": REASONS, "checks": CHECKS, "errors": ERRORS, "states": STATES, "unknown": {"prefix": UNKNOWN_PREFIX}}


def catalogue_json() -> str:
    return json.dumps(catalogue(), ensure_ascii=False)
