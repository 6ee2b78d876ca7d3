"""The verdict keys, used verbatim in code, schema, reports and UI."""

AI_ENDED = "AI 응대로 끝남"
KEPT_ANSWERING = "상담원 요청을 AI가 계속 받음"
UNCITED = "도움말에 없는 답변"
REENTRY = "같은 문의가 다시 들어옴"
LATE_REPLY = "넘긴 뒤 상담원 응답이 늦음"

ORDER = (AI_ENDED, KEPT_ANSWERING, UNCITED, REENTRY, LATE_REPLY)
"""The schema's enum order."""

RULE_ORDER = (KEPT_ANSWERING, UNCITED, REENTRY, LATE_REPLY, AI_ENDED)
"""First match wins, in this order; one verdict per room."""

HELD = "판정 보류"
"""Not a verdict: a room left unjudged because one of its rows was excluded or it has no rooms row."""

NOT_LISTED = "목록에 올리지 않음"
"""Not a verdict: a judged room that no rule lists (golden labels may say so)."""

# What happened to each room opened on the judged day.
LISTED, UNLISTED, OUT_OF_SCOPE, HELD_STATUS = "listed", "in_scope_unlisted", "out_of_scope", "held"
