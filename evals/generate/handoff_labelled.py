"""The handoff evaluation rooms: 165 conversations with the manager's labels, appended to the sample.

Together with the sample's 35 hand-labelled rooms they make the 200 labelled conversations the
seed's evaluation runner names. Rooms open on 2026-10-04, every five minutes from 08:00 (no day
of the hand-written part reads that day; the persona sample uses it too, so the demo runs no
extra nightly day); re-entries and one room across midnight reach 10-05.

Every room is built from a scenario that says what it is meant to show: which message asks for
a human and which phrase it should match, which AI answers lack a valid citation, when the
counsellor answers, when the customer comes back. From that the scenario states the room's
status, verdict and derived fields (`Room.expected`) without running the rules, so the tests
hold both the engine and the row-by-row reference to an oracle written another way. The label
is the scenario's verdict (`목록에 올리지 않음` for rooms no rule lists) except in the four rooms
where the (synthetic) manager judges otherwise; `note` says why.

Hard cases are mixed in at random places: phrases typed without or with extra spaces, with
ideographic spaces or as decomposed jamo, two phrases in one message, a phrase said in
negation; citations null, empty, unknown, of a malformed article, in another case, padded;
waits one second over the limit and exactly on it; re-entries at 24 h, 24 h 17 s (rounds to
24.00) and 24 h 18 s (rounds to 24.01); request times written in UTC; `closed_by` padded.

    python -m evals.generate.handoff_labelled          # rewrite the generated part of the sample
    python -m evals.generate.handoff_labelled --check  # exit 1 when the sample differs from it
"""

from __future__ import annotations

import argparse
import random
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

from evals.generate import SEEDS, dumps
from rules.handoff import verdicts as V

SAMPLE = SEEDS / "handoff"
SEOUL = ZoneInfo("Asia/Seoul")
DAY = "2026-10-04"
ROOM_PREFIX, MESSAGE_PREFIX, CUSTOMER_PREFIX = "R-56", "M-96", "C-56"
"""Ids no hand-written row uses: how the generated part of a file is told from the rest."""
ROOMS = 165
LABELLED_BY = "상담 매니저 (합성)"
SEED = "handoff-labelled:1"

ARTICLES = {f"A-{n}" for n in range(101, 111)}
"""Valid help articles after the sample's gates (A-111 is a malformed row, so absent)."""

# (phrase as in the table, first_reply_min) after the gates: 상담사 keeps its first row (15 min).
JIKWON, SANGDAMWON_CONNECT, SANGDAMWON, SANGDAMSA, REFUND, REAL_PERSON = (
    ("직원 연결", 10), ("상담원 연결", 10), ("상담원", 10), ("상담사", 15), ("환불", 20), ("진짜 사람", 5))
PHRASES = (JIKWON, SANGDAMWON_CONNECT, SANGDAMWON, SANGDAMSA, REFUND, REAL_PERSON, ("진짜사람", 5))

# (customer's request, the phrase it matches): spacing, jamo and two-phrase forms included.
REQUESTS = (
    ("직원 연결 부탁드려요", JIKWON),
    ("직원연결 해 주세요", JIKWON),
    ("직 원 연 결 해 주실래요", JIKWON),
    ("상담원 연결해 주세요", SANGDAMWON_CONNECT),   # 상담원 matches at the same place: the longer wins
    ("상담원연결이요", SANGDAMWON_CONNECT),
    ("상담원이랑 얘기하고 싶어요", SANGDAMWON),
    ("상담원 바꿔 주세요", SANGDAMWON),
    (unicodedata.normalize("NFD", "상담원 불러 주세요"), SANGDAMWON),  # typed as separate jamo
    ("상담사님 계신가요", SANGDAMSA),
    ("상\u3000담\u3000사 불러 주세요", SANGDAMSA),           # ideographic spaces
    ("환불 절차는 사람한테 듣고 싶어요", REFUND),
    ("진짜 사람 맞아요? 사람이랑 할래요", REAL_PERSON),
    ("진짜사람이랑 얘기할래요", REAL_PERSON),             # both 진짜 사람 and 진짜사람: table order
    ("환불 말고 상담사 불러 주세요", SANGDAMSA),         # 15 min beats 20 min
    ("진짜 사람 아니면 환불해 주세요", REAL_PERSON),     # 5 min beats 20 min
    ("환불이든 직원 연결이든 해 주세요", JIKWON),         # 10 min beats 20 min, though 환불 comes first
)

# (article, customer question, AI answer): no question contains a handoff phrase.
TOPICS = (
    ("A-101", "주문한 소파 배송 조회는 어디서 하나요", "마이페이지 주문 내역에서 배송 조회를 누르시면 됩니다."),
    ("A-102", "의자 색상을 교환하고 싶어요", "교환 신청은 주문 내역의 교환 신청 버튼으로 하실 수 있습니다."),
    ("A-103", "협탁 반품 신청하려고요", "반품 신청은 받으신 날부터 7일 안에 주문 내역에서 하실 수 있습니다."),
    ("A-104", "교환하면 배송비가 드나요", "단순 변심 교환은 왕복 배송비가 부과됩니다."),
    ("A-105", "토요일에도 배송 되나요", "주말 배송은 수도권 일부 지역만 가능합니다."),
    ("A-106", "방금 한 주문 취소할게요", "출고 전 주문은 주문 내역에서 바로 취소하실 수 있습니다."),
    ("A-107", "적립금은 언제 쓸 수 있나요", "적립금은 구매 확정 다음 날부터 사용하실 수 있습니다."),
    ("A-108", "쿠폰이 적용이 안 돼요", "쿠폰은 최소 주문 금액 이상일 때 적용됩니다."),
    ("A-109", "골드 등급 혜택이 뭐예요", "골드 등급은 매달 무료 배송 쿠폰 두 장을 드립니다."),
    ("A-110", "책장 조립도 해 주시나요", "가구 조립 서비스는 배송 당일 신청하실 수 있습니다."),
)
FOLLOW_UPS = ("그럼 언제쯤 받을 수 있나요", "다른 방법은 없나요", "알겠습니다 하나만 더 여쭐게요", "그건 어디서 확인하나요")
AI_FILLERS = ("확인해 보니 주문 내역 화면에서 바로 처리하실 수 있습니다.", "추가로 궁금하신 점이 있으면 말씀해 주세요.",
              "요청하신 내용은 안내드린 방법으로 진행하실 수 있습니다.", "잠시만 기다려 주시면 다시 안내드리겠습니다.")
COUNSELOR_LINES = ("안녕하세요, 상담원입니다. 바로 도와드리겠습니다.", "기다려 주셔서 감사합니다. 확인해 드릴게요.",
                   "주문 정보 확인했습니다. 처리해 드리겠습니다.")
UNCITED_CITES = (None, "A-099", "A-111", "a-103", "", "A-112")
"""Citations that are not a valid article: null, unknown, malformed in the list, another case, empty."""


@dataclass
class Msg:
    sender: str
    text: str
    at: datetime
    cited: str | None = None
    utc: bool = False
    """Written in UTC with `Z`, as one collector does."""
    uncited: bool = False
    request: tuple[str, int] | None = None
    message_id: str = ""

    @property
    def written(self) -> str:
        if self.utc:
            return self.at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        return self.at.astimezone(SEOUL).isoformat()


@dataclass
class Room:
    room_id: str
    customer_id: str
    closed_by: str
    msgs: list[Msg]
    verdict: str | None
    """What the rules should say; None when no rule lists the room."""
    in_scope: bool = True
    label: str | None = None
    """The manager's label when it differs from the rules, with `note`."""
    note: str | None = None
    next_room: Room | None = None

    @property
    def closed_at(self) -> datetime:
        return self.msgs[-1].at

    @property
    def opened_at(self) -> datetime:
        return self.msgs[0].at

    def expected(self) -> dict:
        """The room as the rules should report it, derived from how it was built."""
        trigger = next((i for i, m in enumerate(self.msgs) if m.request), None)
        ai_after = counselor_first = None
        if trigger is not None:
            ai_after = sum(m.sender == "ai" for m in self.msgs[trigger + 1:])
            counselor_first = next((m for m in self.msgs[trigger + 1:] if m.sender == "counselor"), None)
        req = self.msgs[trigger] if trigger is not None else None
        by_ai = self.closed_by.strip() == "ai"
        nxt = self.next_room if by_ai else None
        status = (V.LISTED if self.verdict else V.UNLISTED) if self.in_scope else V.OUT_OF_SCOPE
        return {
            "room_id": self.room_id,
            "opened_day": self.opened_at.astimezone(SEOUL).date().isoformat(),
            "status": status,
            "verdict": self.verdict if self.in_scope else None,
            "customer_id": self.customer_id,
            "first_trigger_message_id": req.message_id if req else None,
            "matched_phrase": req.request[0] if req else None,
            "ai_after_trigger": ai_after or 0,
            "counselor_message_count": sum(m.sender == "counselor" for m in self.msgs),
            "uncited_message_ids": [m.message_id for m in self.msgs if m.uncited],
            "handoff_at": req.written if counselor_first else None,
            "first_counselor_at": counselor_first.written if counselor_first else None,
            "reply_wait_min": _round2(Decimal((counselor_first.at - req.at).total_seconds()) / 60) if counselor_first else None,
            "first_reply_min": req.request[1] if counselor_first else None,
            "closed_at": self.msgs[-1].written if by_ai else None,
            "next_room_id": nxt.room_id if nxt else None,
            "reentry_hours": _round2(Decimal((nxt.opened_at - self.closed_at).total_seconds()) / 3600) if nxt else None,
        }

    def golden(self) -> dict:
        agreed = self.verdict if self.in_scope and self.verdict else V.NOT_LISTED
        return {"room_id": self.room_id, "verdict": self.label or agreed, "labelled_by": LABELLED_BY, "note": self.note}

    def row(self) -> dict:
        return {"room_id": self.room_id, "customer_id": self.customer_id, "shop_name": "모아리빙", "closed_by": self.closed_by}


def _round2(value: Decimal) -> int | float:
    """Rounded half up to two places, as JSON writes it (21, 10.5, 24.01)."""
    r = value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return int(r) if r == r.to_integral_value() else float(r)


# ---- building one room --------------------------------------------------------------------------


class Talk:
    """A conversation written message by message, each a few seconds to minutes after the last."""

    def __init__(self, rng: random.Random, start: datetime):
        self.rng, self.at, self.msgs = rng, start, []

    def _add(self, msg: Msg, gap: float | None) -> Msg:
        if self.msgs:   # the first message is written at the start itself
            self.at = self.at + timedelta(seconds=gap if gap is not None else self.rng.randint(20, 90))
        msg.at = self.at
        self.msgs.append(msg)
        return msg

    def customer(self, text: str, gap: float | None = None, request=None, utc=False) -> Msg:
        return self._add(Msg("customer", text, self.at, request=request, utc=utc), gap)

    def ai(self, text: str, cited: str | None, gap: float | None = None) -> Msg:
        valid = isinstance(cited, str) and cited.strip() in ARTICLES
        return self._add(Msg("ai", text, self.at, cited=cited, uncited=not valid), gap)

    def counselor(self, text: str, gap: float | None = None) -> Msg:
        return self._add(Msg("counselor", text, self.at), gap)

    def system(self, text: str, gap: float | None = None) -> Msg:
        return self._add(Msg("system", text, self.at), gap)

    def qa(self, topic=None, cited: str | None = "valid") -> None:
        """A question and the AI's answer, cited with its own article unless told otherwise."""
        article, question, answer = topic or self.rng.choice(TOPICS)
        self.customer(question)
        self.ai(answer, article if cited == "valid" else cited, gap=self.rng.randint(15, 40))

    def request(self, choice=None, utc=False) -> Msg:
        text, phrase = choice or self.rng.choice(REQUESTS)
        return self.customer(text, request=phrase, utc=utc)

    def fillers(self, n: int, cited: str | None = "valid") -> None:
        for _ in range(n):
            self.ai(self.rng.choice(AI_FILLERS), self.rng.choice(sorted(ARTICLES)) if cited == "valid" else cited)

    def end(self) -> None:
        self.system("대화가 종료되었습니다", gap=self.rng.randint(120, 300))


Scenario = Callable[[Talk], tuple[str, str | None, dict]]
"""Writes a conversation; returns (closed_by, verdict, extra Room fields)."""


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


def _reentry_first(t: Talk, uncited_too: bool = False):
    t.qa(cited=t.rng.choice(UNCITED_CITES) if uncited_too else "valid")
    t.end()
    return "ai", V.UNCITED if uncited_too else V.REENTRY, {}


def _different_topic_return(t: Talk):
    t.qa(TOPICS[6])
    t.end()
    return "ai", V.REENTRY, {"label": V.AI_ENDED,
                             "note": "세 시간 뒤 돌아왔지만 적립금 문의를 마치고 쿠폰을 새로 물었다. 같은 문의가 아니다."}


def _second_room(t: Talk):
    """What the returning customer does: one of the ordinary scenarios, chosen at random."""
    return t.rng.choice((ai_ended, uncited, answered_not_closed_by_ai, counselor_only))(t)


def _coupon_question(t: Talk):
    t.qa(TOPICS[7])
    t.end()
    return "ai", V.AI_ENDED, {}


# ---- the whole set ------------------------------------------------------------------------------

def build(seed: str = SEED) -> list[Room]:
    """Every generated room, in room-id order, with message ids assigned."""
    rng = random.Random(seed)
    # (scenario, its arguments, seconds until the customer's next room or None, what that room holds)
    plan: list[tuple[Scenario, dict, float | None, Scenario]] = []
    for count, scenario, kwargs in SCENARIOS:
        plan += [(scenario, kwargs, None, _second_room)] * count
    plan += [(_reentry_first, {}, g, _second_room) for g in REENTRY_GAPS * 2]
    plan += [(_reentry_first, {"uncited_too": True}, g, _second_room) for g in REENTRY_GAPS[:3]]
    plan += [(ai_ended, {}, g, _second_room) for g in RETURN_GAPS]
    plan.append((_different_topic_return, {}, 3 * 3600, _coupon_question))
    rng.shuffle(plan)
    midnight = next(i for i, p in enumerate(plan) if p[0] is ai_ended and p[2] is None)

    rooms: list[Room] = []
    seq = iter(range(1, 10_000))
    first = datetime.fromisoformat(f"{DAY}T08:00:00").replace(tzinfo=SEOUL)
    for i, (scenario, kwargs, gap, second) in enumerate(plan):
        start = first + timedelta(minutes=5 * i)
        if i == midnight:   # a room that opens before midnight and closes after it
            start = datetime.fromisoformat(f"{DAY}T23:58:00").replace(tzinfo=SEOUL)
        room = _room(next(seq), f"{CUSTOMER_PREFIX}{i + 1:03d}", Talk(rng, start), scenario, kwargs)
        rooms.append(room)
        if gap is not None:
            nxt = _room(next(seq), room.customer_id, Talk(rng, room.closed_at + timedelta(seconds=gap)), second, {})
            room.next_room = nxt
            rooms.append(nxt)
    if len(rooms) != ROOMS:
        raise AssertionError(f"the plan makes {len(rooms)} rooms, not {ROOMS}")
    return rooms


def _room(n: int, customer: str, talk: Talk, scenario: Scenario, kwargs: dict) -> Room:
    closed_by, verdict, extra = scenario(talk, **kwargs)
    room = Room(f"{ROOM_PREFIX}{n:03d}", customer, closed_by, talk.msgs, verdict, **extra)
    for k, m in enumerate(room.msgs):
        m.message_id = f"{MESSAGE_PREFIX}{n:03d}{k}"
    return room


# ---- writing into the sample --------------------------------------------------------------------

def generated(row: dict | None, dataset: str) -> bool:
    key, prefix = ("message_id", MESSAGE_PREFIX) if dataset == "chat_messages" else ("room_id", ROOM_PREFIX)
    return isinstance(row, dict) and str(row.get(key, "")).startswith(prefix)


def contents(rooms: list[Room], folder: Path = SAMPLE) -> dict[str, str]:
    """Each file's text: its hand-written lines, then the generated ones."""
    from rules.common.bounded_json import parse_object

    msgs = sorted(((m, r) for r in rooms for m in r.msgs), key=lambda p: (p[0].at, p[0].message_id))
    new = {
        "chat_messages": [dumps({"message_id": m.message_id, "room_id": r.room_id, "sender": m.sender, "text": m.text,
                                 "sent_at": m.written, "cited_article_id": m.cited}) for m, r in msgs],
        "rooms": [dumps(r.row()) for r in rooms],
        "golden": [dumps(r.golden()) for r in rooms],
    }
    out = {}
    for name, lines in new.items():
        path = folder / f"{name}.jsonl"
        old = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        hand = [t for t in old if not generated(parse_object(t), name)]
        out[name] = "\n".join(hand + lines) + "\n"
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evals.generate.handoff_labelled", description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true", help="compare with the sample instead of writing; exit 1 on a difference")
    p.add_argument("--folder", type=Path, default=SAMPLE, help="the handoff sample folder (default seeds/handoff)")
    args = p.parse_args(argv)
    files = contents(build(), args.folder)
    stale = [n for n, text in files.items() if not (args.folder / f"{n}.jsonl").exists()
             or (args.folder / f"{n}.jsonl").read_text(encoding="utf-8") != text]
    if args.check:
        for n in stale:
            print(f"{args.folder / n}.jsonl differs from what the generator writes", file=sys.stderr)
        return 1 if stale else 0
    for n in stale:
        (args.folder / f"{n}.jsonl").write_text(files[n], encoding="utf-8")
    print(f"{ROOMS} rooms; rewrote {', '.join(stale) or 'nothing'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
