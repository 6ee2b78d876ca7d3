"""Evidence rows, summaries and hedges for each listed room.

The verdict is already decided; this module only says why, citing the values it rests on.
Evidence names its dataset and copies a cited row's value as normalised (ids and times
trimmed, citations as written). With `agg` the value is re-computable:

- `count` on chat_messages.sender: ai messages after the first request (= ai_after_trigger);
- `count` on help_articles.article_id: valid rows of the help-article list.

Quoted customer text is cut at its first sentence end, so a summary stays one polite sentence
however the customer wrote.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pandas as pd

from rules.common import evidence
from rules.common.explain import per_verdict
from rules.common.cells import trim
from rules.common.korean import inline, josa
from rules.handoff import verdicts as V
from rules.handoff.config import HandoffConfig

PROVISIONAL_HEDGE = "다음 날 데이터가 아직 없어 재문의 여부는 잠정입니다."
_SENTENCE_END = re.compile(r"[.?!]+(?=\s|$)")
_NATIVE = {1: "한", 2: "두", 3: "세", 4: "네", 5: "다섯", 6: "여섯", 7: "일곱", 8: "여덟", 9: "아홉", 10: "열"}


def ev(dataset: str, field: str, value, agg: str | None = None) -> dict:
    return evidence.row("dataset", dataset, field, value, agg)


def explain(f: pd.DataFrame, config: HandoffConfig) -> tuple[list, list, list]:
    build = {
        V.KEPT_ANSWERING: _kept_answering,
        V.UNCITED: _uncited,
        V.REENTRY: _reentry,
        V.LATE_REPLY: _late,
        V.AI_ENDED: _ai_ended,
    }
    return per_verdict(f, "verdict", build, config, hedge=_provisional)


def _provisional(r: dict, hedge: str | None) -> str | None:
    """A room judged before the next day's data arrives says in its hedge that re-entry is provisional."""
    if not r.get("provisional"):
        return hedge
    return f"{hedge} {PROVISIONAL_HEDGE}" if hedge else PROVISIONAL_HEDGE


# -- wording helpers ------------------------------------------------------------------------------


def quote(text: object, limit: int = 30) -> str:
    """A customer's words in quotes, up to their first sentence end, on one line."""
    t = " ".join(str(text).split()) if isinstance(text, str) else ""
    end = _SENTENCE_END.search(t)
    if end:
        t = t[: end.start()]
    t = t.strip(" ~,")
    if len(t) > limit:
        t = t[:limit].rstrip() + "…"
    return f"'{t}'" if t else "'(내용 없음)'"


def times(n: int) -> str:
    """'세 번', '12번'."""
    return f"{_NATIVE[n]} 번" if n in _NATIVE else f"{n}번"


def number(v) -> str:
    """A number as written in the output: 36, 1.75."""
    if isinstance(v, Decimal):
        return str(int(v)) if v == v.to_integral_value() else str(v.normalize())
    return str(int(v)) if float(v).is_integer() else str(v)


def duration(us: int) -> str:
    """'1시간 45분', '7분 30초', '24시간 17초' (whole seconds)."""
    total = int(us) // 1_000_000
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    parts = [f"{h}시간" if h else "", f"{m}분" if m else "", f"{s}초" if s else ""]
    return " ".join(p for p in parts if p) or "0초"


def _also(r: dict, after: str) -> list[str]:
    """The later rules this room also meets, as noun phrases (for 'A도 있지만 … 먼저입니다')."""
    order = V.RULE_ORDER.index(after)
    items = []
    if order < 1 and r["rule_2"]:
        items.append(f"인용 없는 답 {', '.join(inline(i) for i in r['uncited_message_ids'])}")
    if order < 2 and r["rule_3"]:
        items.append(f"{number(r['reentry_hours'])}시간 만의 재문의")
    if order < 3 and r["rule_4"]:
        items.append(f"응답 대기 {number(r['reply_wait_min'])}분(기준 {r['first_reply_min']}분)")
    return items


def _also_sentence(r: dict, verdict: str, first: str) -> str | None:
    items = _also(r, verdict)
    return f"{'·'.join(items)}도 있지만 {first} 먼저입니다." if items else None


def _join(*parts: str | None) -> str | None:
    kept = [p for p in parts if p]
    return " ".join(kept) if kept else None


# -- one builder per verdict ----------------------------------------------------------------------


def _kept_answering(r: dict, config: HandoffConfig):
    n = r["ai_after_trigger"]
    e = [
        ev("chat_messages", "text", r["trigger_text"]),
        ev("handoff_phrases", "trigger_phrase", r["matched_phrase"]),
        ev("chat_messages", "sender", n, agg="count"),
    ]
    if r["uncited_message_ids"]:
        e.append(ev("chat_messages", "cited_article_id", r["uncited_first_cited"]))
    s = f"고객이 {josa(quote(r['trigger_text']), '으로/로')} 상담원을 찾은 뒤에도 AI가 {times(n)} 더 답했고 상담원은 들어오지 않았습니다."
    return e, s, _join(_literal_sentence(r), _also_sentence(r, V.KEPT_ANSWERING, "상담원 요청 무시가"))


def _literal_sentence(r: dict) -> str | None:
    """What matching without removing whitespace would have found, when it differs."""
    if "literal_trigger_id" not in r or r.get("literal_trigger_id") == r["first_trigger_message_id"]:
        return None
    if r.get("literal_trigger_id") is None:
        return "띄어쓰기를 지우지 않고 찾으면 상담원 요청을 찾지 못합니다."
    n = r["literal_ai_after"]
    head = f"띄어쓰기를 지우지 않고 찾으면 첫 요청이 {josa(quote(r['literal_trigger_text']), '으로/로')} 밀리지만"
    if n >= 2:
        return f"{head}, 그 뒤 AI 답변도 {times(n)}이라 판정은 같습니다."
    if n == 0:
        return f"{head}, 그 뒤 AI 답변이 없어 이 판정에 이르지 않습니다."
    return f"{head}, 그 뒤 AI 답변은 {times(n)}뿐이라 이 판정에 이르지 않습니다."


def _uncited(r: dict, config: HandoffConfig):
    ids = r["uncited_message_ids"]
    first, cited = inline(ids[0]), r["uncited_first_cited"]
    shown = inline(trim(cited)) if isinstance(cited, str) and trim(cited) else None
    if shown:
        e = [ev("chat_messages", "cited_article_id", cited), ev("help_articles", "article_id", r["article_count"], agg="count")]
        s = f"AI가 {first} 답변에서 인용한 {josa(shown, '은/는')} 지금 도움말 목록 {r['article_count']}편 안에 없습니다."
    else:
        e = [ev("chat_messages", "message_id", first), ev("chat_messages", "cited_article_id", cited),
             ev("chat_messages", "text", r["uncited_first_text"])]
        s = f"AI가 {first} 답변에서 도움말을 인용하지 않고 답했습니다."
    if len(ids) > 1:
        e += [ev("chat_messages", "message_id", i) for i in ids[1:]]
        s += f" 인용 없는 AI 답변은 모두 {len(ids)}건입니다."
    return e, s, _also_sentence(r, V.UNCITED, "도움말에 없는 답변이")


def _reentry_evidence(r: dict) -> list[dict]:
    return [ev("chat_messages", "sent_at", r["closed_at"]), ev("chat_messages", "sent_at", r["next_first_sent_at"])]


def _reentry(r: dict, config: HandoffConfig):
    nxt, window = inline(r["next_room_id"]), number(config.reentry_window_hours)
    e = [*_reentry_evidence(r), ev("rooms", "room_id", nxt), ev("rooms", "customer_id", r["customer_id"])]
    opened = (f"{josa(quote(r['next_first_text']), '으로/로')} 새 대화 {josa(nxt, '을/를')}"
              if r["next_first_text"] is not None else f"새 대화 {josa(nxt, '을/를')}")
    exact_hours = Decimal(r["reentry_us"]) / Decimal(3_600_000_000)
    # The rule compares the rounded hours; past the window only by rounding, the sentence says so.
    compared = (f"규칙은 소수 둘째 자리로 반올림한 {float(r['reentry_hours']):.2f}시간을 기준 {window}시간과 비교해 기준 안으로 봅니다."
                if exact_hours > config.reentry_window_hours else f"재문의까지 {number(r['reentry_hours'])}시간으로 기준 {window}시간 안입니다.")
    s = f"AI가 답하고 대화를 닫은 지 {duration(r['reentry_us'])} 만에 같은 고객이 {opened} 열었습니다. {compared}"
    rounding = None
    if exact_hours > config.reentry_window_hours:
        rounding = f"반올림하기 전으로는 기준 {window}시간을 넘으므로, 창 경계를 정할 때 반올림 규칙을 함께 봐야 합니다."
    elif exact_hours == config.reentry_window_hours:
        rounding = f"다음 대화가 정확히 {window}시간 만에 열려 기준 안으로 셉니다."
    handled = None
    if r["next_on_time"] and r["next_wait_us"] is not None:
        handled = f"새 대화 {josa(nxt, '은/는')} {duration(r['next_wait_us'])} 만에 상담원이 받아 그 대화 자체는 목록에 올리지 않습니다."
    return e, s, _join(rounding, handled, _also_sentence(r, V.REENTRY, "재문의가"))


def _late(r: dict, config: HandoffConfig):
    e = [
        ev("chat_messages", "sent_at", r["handoff_at"]),
        ev("chat_messages", "sent_at", r["first_counselor_at"]),
        ev("handoff_phrases", "first_reply_min", r["first_reply_min"]),
        ev("handoff_phrases", "trigger_phrase", r["matched_phrase"]),
    ]
    s = (f"{josa(quote(r['trigger_text']), '으로/로')} 상담원을 찾은 고객이 상담원에게 넘어간 뒤 첫 응답까지 "
         f"{number(r['reply_wait_min'])}분을 기다려 기준 {r['first_reply_min']}분을 넘었습니다.")
    return e, s, None


def _ai_ended(r: dict, config: HandoffConfig):
    cited = r["first_ai_cited"]
    e = [ev("chat_messages", "cited_article_id", cited)]
    aid = inline(trim(cited)) if isinstance(cited, str) else cited
    window = number(config.reentry_window_hours)
    hedge = None
    if r["next_room_id"] is not None:
        e += _reentry_evidence(r)
        s = (f"AI가 도움말 {josa(aid, '을/를')} 인용해 답하고 대화를 닫았고, 같은 고객은 {number(r['reentry_hours'])}시간 뒤에 "
             f"새 대화 {josa(inline(r['next_room_id']), '을/를')} 열어 재문의 기준 {window}시간 밖입니다.")
        over = int(r["reentry_us"]) - int(config.reentry_window_hours * 3_600_000_000)
        hedge = f"다음 대화가 {window}시간을 {duration(over)} 넘겨 열려 재문의로 세지 않았습니다."
    else:
        e.append(ev("chat_messages", "text", r["last_text"]))
        s = f"AI가 도움말 {josa(aid, '을/를')} 인용해 답하고 대화를 닫았으며 같은 고객의 다음 대화는 없습니다."
    if r["first_trigger_message_id"] is not None and r["counselor_message_count"] == 0:
        n = r["ai_after_trigger"]
        after = f"AI가 {times(n)} 답해 두 번에 못 미쳐" if n else "AI가 더 답하지 않아"
        hedge = _join(hedge, f"고객이 {josa(quote(r['trigger_text']), '으로/로')} 상담원을 찾은 뒤 {after} "
                             "상담원 요청을 계속 받은 것으로 보지 않았습니다.")
    return e, s, hedge
