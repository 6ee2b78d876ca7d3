"""The handoff evaluation rooms' scenarios: each writes one conversation and states what it is meant to
show (its closing, its verdict, the room fields a re-computation must find), without running the rules."""

from __future__ import annotations

from datetime import timedelta

from rules.handoff import verdicts as V
from evals.generate.handoff_talk import COUNSELOR_LINES, REFUND, REQUESTS, SANGDAMWON_CONNECT, Scenario, TOPICS, Talk, UNCITED_CITES

def ai_ended(t: Talk):
    for _ in range(t.rng.randint(1, 3)):
        t.qa()
    t.end()
    return "ai", V.AI_ENDED, {}


def ai_ended_padded_code(t: Talk):
    t.qa(TOPICS[5], cited=" A-106 ")   # padded citation is trimmed and counts
    t.end()
    return " ai ", V.AI_ENDED, {}


def ai_ended_written_in_utc(t: Talk):
    article, question, answer = t.rng.choice(TOPICS)
    t.customer(question, utc=True)
    t.ai(answer, article, gap=25)
    t.end()
    return "ai", V.AI_ENDED, {}


def ai_ended_near_miss(t: Talk):
    # 환급, 상담 예약, 직원 할인: words close to a phrase that are not one
    t.customer(t.rng.choice(("관부가세 환급도 되나요", "매장 상담 예약은 어디서 하나요", "직원 할인 쿠폰이 있나요")))
    t.ai("자세한 내용은 쿠폰 사용 안내를 확인해 주세요.", "A-108", gap=30)
    t.end()
    return "ai", V.AI_ENDED, {}


def kept_answering(t: Talk, choice=None, utc=False):
    if t.rng.random() < 0.6:
        t.qa()
    t.request(choice, utc=utc)
    t.fillers(t.rng.randint(2, 4))
    closed = t.rng.choice(("timeout", "ai", "customer"))
    if closed == "ai":
        t.end()
    return closed, V.KEPT_ANSWERING, {}


def kept_answering_and_uncited(t: Talk):
    t.qa(cited=t.rng.choice(UNCITED_CITES))
    t.request()
    t.fillers(2)
    return "timeout", V.KEPT_ANSWERING, {}   # the first rule wins over the uncited answer


def uncited(t: Talk):
    n = t.rng.randint(1, 3)
    bad = t.rng.randrange(n)
    for i in range(n):
        t.qa(cited=t.rng.choice(UNCITED_CITES) if i == bad else "valid")
    closed = t.rng.choice(("ai", "customer", "counselor", "timeout"))
    if closed == "counselor":
        t.counselor(t.rng.choice(COUNSELOR_LINES))
    if closed == "ai":
        t.end()
    return closed, V.UNCITED, {}


def uncited_with_one_answer_after_request(t: Talk):
    t.qa(cited=None)
    t.request()
    t.fillers(1)   # one AI answer after the request is not two
    return "timeout", V.UNCITED, {}


def late_reply(t: Talk, over_s: int | None = None, choice=None, utc=False, ai_after: int = 0):
    if t.rng.random() < 0.7:
        t.qa()
    req = t.request(choice, utc=utc)
    t.fillers(ai_after)
    limit_s = req.request[1] * 60
    over = over_s if over_s is not None else t.rng.choice((30, 90, 300, 1800))
    t.system("상담원을 연결하고 있습니다", gap=5)
    wait = limit_s + over
    t.counselor(t.rng.choice(COUNSELOR_LINES), gap=(req.at + timedelta(seconds=wait) - t.at).total_seconds())
    t.customer("네 감사합니다")
    return t.rng.choice(("counselor", "customer")), V.LATE_REPLY, {}


def on_time_handoff(t: Talk, off_limit_s: int | None = None, with_ai: bool = False):
    """Answered within the phrase's limit: `off_limit_s` seconds from it (0: exactly on it), else at random."""
    if with_ai:
        t.qa()
    req = t.request()
    limit_s = req.request[1] * 60
    wait = limit_s + off_limit_s if off_limit_s is not None else t.rng.randint(60, limit_s - 30)
    t.counselor(t.rng.choice(COUNSELOR_LINES), gap=wait)
    t.customer("해결됐어요 고맙습니다")
    return "counselor", None, {"in_scope": with_ai}


def answered_not_closed_by_ai(t: Talk):
    t.qa()
    return t.rng.choice(("customer", "timeout")), None, {}


def counselor_only(t: Talk):
    t.customer(t.rng.choice(TOPICS)[1])
    t.counselor(t.rng.choice(COUNSELOR_LINES))
    t.counselor("처리 완료되었습니다. 좋은 하루 보내세요.")
    return "counselor", None, {"in_scope": False}


# ---- the manager's four disagreements -----------------------------------------------------------

def negated_request(t: Talk):
    t.qa(TOPICS[0])
    t.customer("상담원 연결은 괜찮고 그냥 알려 주세요", request=SANGDAMWON_CONNECT)
    t.fillers(2)
    t.end()
    return "ai", V.KEPT_ANSWERING, {"label": V.AI_ENDED,
                                     "note": "'상담원 연결은 괜찮고'는 연결을 원하지 않는다는 말이다. AI가 끝까지 잘 답했다."}


def refund_question(t: Talk):
    t.customer("환불 규정이 궁금해요", request=REFUND)
    t.fillers(2)
    t.end()
    return "ai", V.KEPT_ANSWERING, {"label": V.AI_ENDED, "note": "환불 규정을 물었을 뿐 사람을 찾지 않았다."}


def wrong_article(t: Talk):
    t.customer("책장 조립 기사님은 몇 시에 오나요")
    t.ai("조립 기사님은 배송 기사님과 같은 날 오후에 방문합니다.", "A-105", gap=30)  # cites the weekend-delivery article
    t.end()
    return "ai", V.AI_ENDED, {"label": V.UNCITED,
                              "note": "주말 배송 안내(A-105)를 인용했지만 답은 조립 방문 시간이다. 도움말에 없는 답이다."}


# ---- re-entries: the first room and the customer's next one -------------------------------------

REENTRY_GAPS = (1800, 2 * 3600, 6 * 3600, 12 * 3600, 23 * 3600 + 3540, 24 * 3600, 24 * 3600 + 17)
"""Seconds from closing to the next room that round to at most 24.00 h: a re-entry."""
RETURN_GAPS = (24 * 3600 + 18, 24 * 3600 + 30, 25 * 3600 + 288, 26 * 3600)
"""…that round to more than 24.00 h (24 h 18 s rounds half up to 24.01): not a re-entry."""

SCENARIOS: list[tuple[int, Scenario, dict]] = [
    # (how many, scenario, keyword arguments)
    (20, ai_ended, {}),
    (2, ai_ended_padded_code, {}),
    (2, ai_ended_written_in_utc, {}),
    (3, ai_ended_near_miss, {}),
    *[(1, kept_answering, {"choice": c}) for c in REQUESTS],
    (1, kept_answering, {"choice": REQUESTS[0], "utc": True}),
    (5, kept_answering, {}),
    (3, kept_answering_and_uncited, {}),
    (22, uncited, {}),
    (3, uncited_with_one_answer_after_request, {}),
    (1, late_reply, {"over_s": 1}),                                     # 10.02 min against 10
    (1, late_reply, {"over_s": 1, "choice": REQUESTS[11]}),             # 5.02 against 5
    (1, late_reply, {"choice": REQUESTS[13], "over_s": 120}),           # 17 min: late against 상담사's 15
    (1, late_reply, {"choice": REQUESTS[15], "over_s": 120}),           # 12 min: late against 10, on time against 20
    (1, late_reply, {"choice": REQUESTS[10], "over_s": 60}),            # 환불 alone: 21 min
    (1, late_reply, {"utc": True}),
    (2, late_reply, {"ai_after": 1}),
    (13, late_reply, {}),
    (1, on_time_handoff, {"off_limit_s": 0, "with_ai": True}),          # exactly on the limit: on time
    (1, on_time_handoff, {"off_limit_s": -1, "with_ai": True}),
    (3, on_time_handoff, {"with_ai": True}),
    (3, on_time_handoff, {}),
    (6, answered_not_closed_by_ai, {}),
    (6, counselor_only, {}),
    (1, negated_request, {}),
    (1, refund_question, {}),
    (1, wrong_article, {}),
]
REENTRIES = len(REENTRY_GAPS) * 2 + 3
"""Re-entry pairs: every gap twice, plus three where the first room is also uncited (rule 2 wins)."""
RETURNS = len(RETURN_GAPS)


def reentry_first(t: Talk, uncited_too: bool = False):
    t.qa(cited=t.rng.choice(UNCITED_CITES) if uncited_too else "valid")
    t.end()
    return "ai", V.UNCITED if uncited_too else V.REENTRY, {}


def different_topic_return(t: Talk):
    t.qa(TOPICS[6])
    t.end()
    return "ai", V.REENTRY, {"label": V.AI_ENDED,
                             "note": "세 시간 뒤 돌아왔지만 적립금 문의를 마치고 쿠폰을 새로 물었다. 같은 문의가 아니다."}


def second_room(t: Talk):
    """What the returning customer does: one of the ordinary scenarios, chosen at random."""
    return t.rng.choice((ai_ended, uncited, answered_not_closed_by_ai, counselor_only))(t)


def coupon_question(t: Talk):
    t.qa(TOPICS[7])
    t.end()
    return "ai", V.AI_ENDED, {}
