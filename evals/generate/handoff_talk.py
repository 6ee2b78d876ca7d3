"""The handoff evaluation rooms' building blocks: messages, rooms, the talk that writes a conversation,
the phrases, topics and lines it draws from (`handoff_labelled` says what the rooms are for)."""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal
from zoneinfo import ZoneInfo

from evals.generate import SEEDS
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
