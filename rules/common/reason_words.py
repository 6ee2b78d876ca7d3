"""Quarantine reason codes as people read them, in Korean: one wording for the console, the admin
pages and the boards. The codes stay what logs and machine output carry."""

from __future__ import annotations

UNKNOWN_PREFIX = "기타 사유"

REASONS: dict[str, str] = {
    # the gates (rules.common.gates, rules.common.bounded_json, rules.common.timestamps)
    "schema": "입력 형식에 맞지 않음",
    "missing_id": "id 가 없는 행",
    "duplicate_id": "이미 받은 id 의 사본",
    "invalid_json": "JSON 으로 읽을 수 없는 줄",
    "non_finite_number": "무한대·NaN 같은 쓸 수 없는 숫자",
    "integer_out_of_range": "정수가 허용 범위를 벗어남",
    "lone_surrogate": "깨진 유니코드 문자",
    "too_deep": "중첩이 너무 깊은 줄",
    "bad_timestamp": "시각을 읽을 수 없음",
    "timestamp_out_of_range": "시각이 허용 범위를 벗어남",
    "not_utf8": "UTF-8 이 아닌 바이너리",
    "nul_character": "NUL 문자가 든 줄",
    "too_many_lines": "한 프레임에 줄이 너무 많음",
    # live_pick's own
    "unknown_character": "설정표에 없는 캐릭터",
    "reply_after_line": "답변 시각이 채팅보다 앞섬",
    "window_out_of_range": "구간 시각이 지금과 너무 멀리 떨어짐",
}


def label(code: str | None) -> str:
    """The Korean of a reason code; a code with no entry is shown as it is, after `UNKNOWN_PREFIX`."""
    if not code:
        return UNKNOWN_PREFIX
    return REASONS.get(code, f"{UNKNOWN_PREFIX} ({code})")
