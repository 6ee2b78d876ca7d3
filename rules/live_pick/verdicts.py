"""The verdict keys, used verbatim in code, schema, reports and UI."""

PICK = "지금 답변할 질문"
OUT_OF_WORLD = "세계관 밖이라 넘김"
JUST_ANSWERED = "방금 답한 주제"
BELOW_CLOSENESS = "관계 단계에 아직 못 미침"
DEFERRED = "다음 차례로 미룸"

ORDER = (PICK, OUT_OF_WORLD, JUST_ANSWERED, BELOW_CLOSENESS, DEFERRED)
"""Display order: picks first, then the reasons in rule order."""

FILTERS = (OUT_OF_WORLD, JUST_ANSWERED, BELOW_CLOSENESS)
"""Rule order of the filters; the first that matches decides."""

RANKED = (PICK, DEFERRED)
