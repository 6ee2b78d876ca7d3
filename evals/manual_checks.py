"""The manual checks (수동 검증) each seed lists, as samples a person decides on.

A check names which items are candidates (from the verdict rows and the judged input), and a
reproducible sample of them: candidates ordered by a hash of the check's seed and the item id,
so the same input gives the same sample and new items do not reshuffle it (persona's first
check uses the review queue's seed, so the page and `verdicts review` show the same turns).

A person's decision per item is agree, disagree or note (a remark, no verdict). Once decisions
exist, the report's person-checked row for that check is filled as agreed / decided with a
Wilson interval over the items of this run's sample; undecided items stay out of the denominator.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Callable

import pandas as pd

from evals.report import PERSON, Metric, Report
from evals.stats import Ratio

AGREE, DISAGREE, NOTE = "agree", "disagree", "note"
DECISIONS = (AGREE, DISAGREE, NOTE)
DECISION_WORDS = {AGREE: "동의", DISAGREE: "동의하지 않음", NOTE: "메모만"}
SAMPLE_SIZE = 20
DEFAULT_SEED = 20261001


@dataclass(frozen=True)
class ManualCheck:
    key: str
    """`<domain>.<n>`: n is the number in the seed's 수동 검증 list; the report metric carries the same key."""
    domain: str
    title: str
    """The seed's wording."""
    who: str
    agree_means: str
    """What "agree" says about an item."""
    candidates: Callable[[list[dict], dict[str, pd.DataFrame]], list[str]]
    """(verdict rows, judged tables) → ids of the items that may be sampled."""
    size: int = SAMPLE_SIZE
    seed: Callable[[], int] = lambda: DEFAULT_SEED


def sample(check: ManualCheck, rows: list[dict], tables: dict[str, pd.DataFrame]) -> list[str]:
    """Up to `size` candidate ids, the same ones for the same input; sorted by id for reading."""
    seed = check.seed()
    ids = sorted(set(check.candidates(rows, tables)), key=lambda i: hashlib.sha256(f"{seed}:{i}".encode()).hexdigest())
    return sorted(ids[: check.size])


def _ids(rows, field: str, keep: Callable[[dict], bool]) -> list[str]:
    return [r[field] for r in rows if isinstance(r.get(field), str) and keep(r)]


# -- persona ---------------------------------------------------------------------------------------


def _persona_seed() -> int:
    from rules.persona.config import load_config

    return load_config().review.seed


def _renamed_turns(rows, tables) -> list[str]:
    from rules.persona.config import load_config
    from rules.persona.review import cue_of

    phrases = load_config().review.cue_phrases
    turns = tables.get("turns", pd.DataFrame())
    if turns.empty:
        return []
    cued = set(turns.loc[turns["user_text"].map(lambda t: cue_of(t, phrases) is not None), "turn_no"])
    return _ids(rows, "turn_no", lambda r: r["turn_no"] in cued)


def _empty_profile_field(rows, tables) -> list[str]:
    profiles = tables.get("profiles", pd.DataFrame())
    if profiles.empty:
        return []
    gaps = profiles[["age", "job", "forbidden_topic"]].isna().any(axis=1)
    holey = set(profiles.loc[gaps, "profile_no"])
    return _ids(rows, "turn_no", lambda r: r.get("profile_no") in holey)


# -- live_pick -------------------------------------------------------------------------------------


def _picks(rows, tables) -> list[str]:
    from rules.live_pick import verdicts as V

    return _ids(rows, "msg_id", lambda r: r.get("verdict") == V.PICK)


def _cooldown_known(rows, tables) -> list[str]:
    return _ids(rows, "msg_id", lambda r: r.get("cooldown_elapsed_sec") is not None)


# -- handoff ---------------------------------------------------------------------------------------


def _cited_answers(rows, tables) -> list[str]:
    messages, articles = tables.get("chat_messages", pd.DataFrame()), tables.get("help_articles", pd.DataFrame())
    if messages.empty or articles.empty:
        return []
    known = set(articles["article_id"])
    cited = messages[(messages["sender"] == "ai") & messages["cited_article_id"].isin(known)]
    rooms = set(cited["room_id"])
    return _ids(rows, "room_id", lambda r: r["room_id"] in rooms)


def _triggered(rows, tables) -> list[str]:
    return _ids(rows, "room_id", lambda r: isinstance(r.get("first_trigger_message_id"), str))


CHECKS: dict[str, tuple[ManualCheck, ...]] = {
    "persona": (
        ManualCheck("persona.1", "persona", "사용자가 설정을 바꿔 부르는 연출을 어긋남으로 볼지 표본 20건을 눈으로 확인합니다.",
                    "검토자", "규칙 판정이 맞습니다 (이 연출을 규칙이 본 대로 봅니다)", _renamed_turns, seed=_persona_seed),
        ManualCheck("persona.2", "persona", "설정 항목이 비어 있는 캐릭터를 어디까지 판정할지는 기획 기준을 따라 담당자가 정합니다.",
                    "기획 담당자", "빈 설정 항목에 대한 이 판정이 기획 기준과 맞습니다", _empty_profile_field),
    ),
    "live_pick": (
        ManualCheck("live_pick.1", "live_pick", "지금 답변할 질문으로 뜬 줄을 운영자가 실제로 캐릭터에게 넘기는지 표본 20건을 따라가 봅니다.",
                    "운영자", "운영자가 이 줄을 실제로 캐릭터에게 넘겼습니다", _picks),
        ManualCheck("live_pick.2", "live_pick", "쿨다운이 팬이 느끼기에 적당한 간격인지 방송 뒤 채팅 반응을 보고 정합니다.",
                    "운영자", "이 줄의 마지막 답변 뒤 간격에 대한 판정이 팬 반응과 맞습니다", _cooldown_known),
    ),
    "handoff": (
        ManualCheck("handoff.1", "handoff", "인용이 있는 AI 답이 그 도움말 내용과 맞는지는 상담원이 봅니다.",
                    "상담원", "이 대화에서 AI가 인용한 도움말이 답의 내용과 맞습니다", _cited_answers),
        ManualCheck("handoff.2", "handoff", "연결 문구에 걸린 메시지가 실제로 상담원을 원한 것인지는 상담 매니저가 펼쳐 보고 정합니다.",
                    "상담 매니저", "연결 문구에 걸린 메시지는 실제로 상담원을 원한 것입니다", _triggered),
    ),
}


def checks_of(domain: str) -> tuple[ManualCheck, ...]:
    return CHECKS.get(domain, ())


def check_by_key(key: str) -> ManualCheck:
    for checks in CHECKS.values():
        for c in checks:
            if c.key == key:
                return c
    raise KeyError(key)


def tally(sampled: list[str], decisions: dict[str, dict]) -> tuple[int, int, int]:
    """(agreed, decided, notes only) over the sampled ids; `decisions` is id → {decision, note}."""
    got = [decisions[i]["decision"] for i in sampled if i in decisions]
    return got.count(AGREE), got.count(AGREE) + got.count(DISAGREE), got.count(NOTE)


def fill_person_metrics(report: Report, samples: dict[str, list[str]], decisions: dict[str, dict[str, dict]]) -> Report:
    """The report with each person-checked metric whose key has decisions filled as agreed / decided.

    `samples`: check key → sampled ids of this run; `decisions`: check key → id → decision.
    """
    metrics: list[Metric] = []
    for m in report.metrics:
        key = getattr(m, "key", "")
        if m.status == PERSON and key in samples:
            agreed, decided, notes = tally(samples[key], decisions.get(key, {}))
            sampled = len(samples[key])
            if decided:
                m = replace(m, ratio=Ratio(agreed, decided), status=f"{PERSON} · {decided} / {sampled}건 판단",
                            note=(m.note + " · " if m.note else "") + "동의한 표본 / 판단한 표본"
                            + (f", 메모만 남긴 {notes}건은 분모 밖" if notes else ""))
            else:
                m = replace(m, status=f"{PERSON} · 표본 {sampled}건, 판단 전")
        metrics.append(m)
    report.metrics = metrics
    return report
