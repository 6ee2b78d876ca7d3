"""The manual checks (수동 검증) each seed lists, as samples a team of people decides on.

Only the seeds that list manual checks have them: persona (seed 000), live_pick (001) and
handoff (003); retry's seed 002 lists none, so its report has no person-checked row.

A check names which items are candidates (from the verdict rows and the judged input), and a
reproducible sample of them: candidates ordered by a hash of the check's seed and the item id,
so the same input gives the same sample and new items do not reshuffle it (persona's first
check uses the review queue's seed, so the page and `verdicts review` show the same turns).

Every report path (`verdicts agree`, `verdicts eval`, the admin report, the Dagster report)
goes through the same two calls: `attach` draws each check's sample for the run and adds its
person-checked row (its own sample, or "표본 없음" and why), and `fill_decisions` fills that row
from the stored decisions (the warehouse table `review_decisions`): each item's majority of
agree / disagree over decided items, with a Wilson interval, and the team's progress and
agreement between reviewers (`evals.review_team`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Callable

import pandas as pd

from evals.report import PERSON, Metric, Report, person_metric
from evals.review_team import AGREE, DISAGREE, NOTE, SPLIT, load_config, outcome, pair_text, summarise
from evals.stats import Ratio

DECISIONS = (AGREE, DISAGREE, NOTE)
DECISION_WORDS = {AGREE: "동의", DISAGREE: "동의하지 않음", NOTE: "메모만", SPLIT: "의견 갈림"}
SAMPLE_SIZE = 20
DEFAULT_SEED = 20261001
NO_SAMPLE = "표본 없음"

Decisions = dict[str, dict[str, dict[str, dict]]]
"""check key → item id → reviewer → {decision, note, decided_at, scope}: what `review_decisions` holds."""


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
    name: str = ""
    """The report row's name."""
    candidates_are: str = ""
    """What a candidate is, in words ("지금 답변할 질문으로 뜬 줄")."""
    datasets: tuple[str, ...] = ()
    """Input tables `candidates` reads besides the verdict rows (none: the rows are enough)."""
    columns: tuple[str, ...] = ()
    """The columns of those tables it reads, whichever table holds them (none: every column); a
    stored day's tables are read with these alone."""
    size: int = SAMPLE_SIZE
    seed: Callable[[], int] = lambda: DEFAULT_SEED


def sample(check: ManualCheck, rows: list[dict], tables: dict[str, pd.DataFrame]) -> list[str]:
    """Up to `size` candidate ids, the same ones for the same input; sorted by id for reading."""
    return sample_of(check, set(check.candidates(rows, tables)))


def sample_of(check: ManualCheck, candidates: set[str]) -> list[str]:
    seed = check.seed()
    ids = sorted(candidates, key=lambda i: hashlib.sha256(f"{seed}:{i}".encode()).hexdigest())
    return sorted(ids[: check.size])


def _ids(rows, field: str, keep: Callable[[dict], bool]) -> list[str]:
    return [r[field] for r in rows if isinstance(r.get(field), str) and keep(r)]


def _always(row: dict) -> bool:
    return True


# -- persona ---------------------------------------------------------------------------------------


def _persona_seed() -> int:
    from rules.persona.config import load_config

    return load_config().review.seed


def _renamed_turns(rows, tables) -> list[str]:
    import re

    import pyarrow as pa
    import pyarrow.compute as pc

    from rules.persona.config import load_config

    phrases = load_config().review.cue_phrases
    turns = tables.get("turns", pd.DataFrame())
    if turns.empty or not phrases:
        return []
    # The review queue's test (`rules.persona.review.cue_of`: any cue phrase in the text), over the column at once.
    texts = pa.array(turns["user_text"].map(lambda t: t if isinstance(t, str) else ""), pa.string())
    hit = pc.match_substring_regex(texts, "|".join(map(re.escape, phrases))).to_numpy(zero_copy_only=False)
    cued = set(turns["turn_no"].to_numpy()[hit])
    return [i for i in _ids(rows, "turn_no", _always) if i in cued]


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
                    "검토자", "규칙 판정이 맞습니다 (이 연출을 규칙이 본 대로 봅니다)", _renamed_turns,
                    "사용자가 설정을 바꿔 부르는 연출을 어긋남으로 볼까", "사용자가 설정을 바꿔 부른 턴", ("turns",), ("turn_no", "user_text"),
                    seed=_persona_seed),
        ManualCheck("persona.2", "persona", "설정 항목이 비어 있는 캐릭터를 어디까지 판정할지는 기획 기준을 따라 담당자가 정합니다.",
                    "기획 담당자", "빈 설정 항목에 대한 이 판정이 기획 기준과 맞습니다", _empty_profile_field,
                    "설정 항목이 비어 있는 캐릭터를 어디까지 판정할까", "설정 항목이 빈 캐릭터의 턴", ("profiles",),
                    ("profile_no", "age", "job", "forbidden_topic")),
    ),
    "live_pick": (
        ManualCheck("live_pick.1", "live_pick", "지금 답변할 질문으로 뜬 줄을 운영자가 실제로 캐릭터에게 넘기는지 표본 20건을 따라가 봅니다.",
                    "운영자", "운영자가 이 줄을 실제로 캐릭터에게 넘겼습니다", _picks,
                    "지금 답변할 질문을 운영자가 실제로 넘기나", "지금 답변할 질문으로 뜬 줄"),
        ManualCheck("live_pick.2", "live_pick", "쿨다운이 팬이 느끼기에 적당한 간격인지 방송 뒤 채팅 반응을 보고 정합니다.",
                    "운영자", "이 줄의 마지막 답변 뒤 간격에 대한 판정이 팬 반응과 맞습니다", _cooldown_known,
                    "쿨다운이 팬이 느끼기에 적당한가", "마지막 답변 뒤 간격을 잰 줄"),
    ),
    "handoff": (
        ManualCheck("handoff.1", "handoff", "인용이 있는 AI 답이 그 도움말 내용과 맞는지는 상담원이 봅니다.",
                    "상담원", "이 대화에서 AI가 인용한 도움말이 답의 내용과 맞습니다", _cited_answers,
                    "인용한 도움말이 답과 맞나", "AI가 목록에 있는 도움말을 인용한 대화", ("chat_messages", "help_articles"),
                    ("room_id", "sender", "cited_article_id", "article_id")),
        ManualCheck("handoff.2", "handoff", "연결 문구에 걸린 메시지가 실제로 상담원을 원한 것인지는 상담 매니저가 펼쳐 보고 정합니다.",
                    "상담 매니저", "연결 문구에 걸린 메시지는 실제로 상담원을 원한 것입니다", _triggered,
                    "연결 문구에 걸린 메시지가 정말 상담원 요청인가", "연결 문구에 걸린 대화"),
    ),
}
"""Exactly the seeds' 수동 검증 lists; a domain whose seed lists none (retry) has no entry."""


def checks_of(domain: str) -> tuple[ManualCheck, ...]:
    return CHECKS.get(domain, ())


def check_by_key(key: str) -> ManualCheck:
    for checks in CHECKS.values():
        for c in checks:
            if c.key == key:
                return c
    raise KeyError(key)


def tally(sampled: list[str], decisions: dict[str, dict[str, dict]]) -> tuple[int, int, int]:
    """(agreed, decided, notes only) items over the sample, each item by its reviewers' majority;
    `decisions`: item id → reviewer → {decision, note}."""
    team = summarise(sampled, decisions, load_config().reviewers_per_item)
    return team.agreed, team.decided, team.notes_only


def item_review(votes: dict[str, dict]) -> dict:
    """One item's review: its outcome (majority), each reviewer's decision and the notes, for files and pages."""
    return {"reviewer_decision": outcome(votes),
            "reviewer_note": " / ".join(f"{r}: {v['note']}" for r, v in sorted(votes.items()) if v.get("note")) or None,
            "decisions": {r: {"decision": v.get("decision"), "note": v.get("note")} for r, v in sorted(votes.items())}}


def draw(domain: str, rows: list[dict], tables: dict[str, pd.DataFrame] | None) -> dict[str, dict]:
    """Each of the domain's checks' sample for this run: {ids, candidates, size, why}; `why` says
    why there is no sample (no candidate in scope, or no input tables to find them in)."""
    out = {}
    for c in checks_of(domain):
        if tables is None and c.datasets:
            out[c.key] = {"ids": [], "candidates": None, "size": c.size,
                          "why": f"입력 표({', '.join(c.datasets)}) 없이 만든 리포트라 후보를 고르지 못했습니다"}
            continue
        found = set(c.candidates(rows, tables or {}))
        ids = sample_of(c, found)
        out[c.key] = {"ids": ids, "candidates": len(found), "size": c.size,
                      "why": "" if ids else f"이 범위에 후보({c.candidates_are})가 없습니다"}
    return out


def sample_note(check: ManualCheck, drawn: dict) -> str:
    """The row's own sample in words: "표본 20건 (후보 57건: …)" or "표본 없음 — why"."""
    if not drawn["ids"]:
        return f"{NO_SAMPLE} — {drawn['why']}"
    return f"표본 {len(drawn['ids'])}건 (후보 {drawn['candidates']}건: {check.candidates_are}, 해시로 고름)"


def attach(report: Report, rows: list[dict], tables: dict[str, pd.DataFrame] | None) -> Report:
    """The run's sample of each manual check its seed defines, and one person-checked row per check."""
    report.manual = draw(report.domain, rows, tables)
    rows_of_checks = []
    for c in checks_of(report.domain):
        ids = report.manual[c.key]["ids"]
        status = f"{PERSON} · 표본 {len(ids)}건, 판단 전" if ids else f"{PERSON} · {NO_SAMPLE}"
        rows_of_checks.append(replace(person_metric(c.name, c.title, sample_note(c, report.manual[c.key]), key=c.key), status=status))
    report.metrics = [m for m in report.metrics if not m.key] + rows_of_checks
    return report


def fill_decisions(report: Report, decisions: Decisions) -> Report:
    """Each person-checked row as agreed / decided items of its sample (each item by its reviewers'
    majority), and the team's review (progress per reviewer, agreement between reviewers)."""
    config = load_config()
    metrics: list[Metric] = []
    for m in report.metrics:
        drawn = report.manual.get(m.key) if m.key else None
        if drawn is None or not drawn["ids"]:
            metrics.append(m)
            continue
        ids = drawn["ids"]
        team = summarise(ids, decisions.get(m.key, {}), config.per_item(m.key))
        report.reviewers[m.key] = team.to_dict()
        check = check_by_key(m.key)
        parts = [sample_note(check, drawn), f"검토자 {len(team.reviewers)}명 · 항목당 {team.per_item}명 · 다 본 항목 {team.complete} / {len(ids)}"]
        if team.split:
            parts.append(f"의견이 갈린 {len(team.split)}건은 분모 밖({', '.join(team.split[:5])})")
        if team.notes_only:
            parts.append(f"메모만 남긴 {team.notes_only}건은 분모 밖")
        if team.decided:
            m = replace(m, ratio=Ratio(team.agreed, team.decided), status=f"{PERSON} · 판단 {team.decided} / 표본 {len(ids)}건",
                        note=" · ".join(parts + ["동의한 항목 / 판단한 항목 (항목마다 검토자 다수)"]))
        else:
            m = replace(m, note=" · ".join(parts))
        metrics.append(m)
    report.metrics = metrics
    return report


def reviewer_lines(report: Report) -> list[tuple[str, list[str]]]:
    """Per check with decisions: (key, lines on progress per reviewer and agreement between reviewers)."""
    from evals.review_team import Pair

    out = []
    for key, team in report.reviewers.items():
        if not team["reviewers"]:
            out.append((key, ["아직 아무도 판단하지 않았습니다."]))
            continue
        lines = ["검토자별 진행: " + ", ".join(f"{r} {v['votes']} / {team['sampled']}건" + (f" (메모 {v['notes']})" if v["notes"] else "")
                                            for r, v in sorted(team["reviewers"].items()))]
        pairs = [Pair(**p) for p in team["pairs"]]
        lines.append("검토자 간 일치 (Cohen's kappa): " + ("; ".join(pair_text(p) for p in pairs) if pairs
                                                      else "두 사람이 함께 판단한 항목이 아직 없습니다"))
        out.append((key, lines))
    return out


def queue_markdown(check: ManualCheck, rows: list[dict], id_field: str, verdict_key: str, candidates: int) -> str:
    """A check's sample as a team's queue: one column per reviewer, each item's majority, then the
    progress per reviewer and the agreement between reviewers (`rows` carry `item_review`'s fields)."""
    from evals.markdown import md_table

    reviewers = sorted({r for row in rows for r in row.get("decisions") or {}})
    votes = {row[id_field]: {r: d for r, d in (row.get("decisions") or {}).items()} for row in rows}
    team = summarise([row[id_field] for row in rows], votes, load_config().per_item(check.key))
    table = [[row[id_field], row.get(verdict_key), *[DECISION_WORDS.get((row.get("decisions") or {}).get(r, {}).get("decision"), "—")
                                                      for r in reviewers],
              DECISION_WORDS.get(row.get("reviewer_decision"), "판단 전"), row.get("reviewer_note") or ""] for row in rows]
    out = [f"# {check.key} {check.title}", "",
           f"후보 {candidates}건 가운데 표본 {len(rows)}건 · 항목마다 검토자 {team.per_item}명 · 다 본 항목 {team.complete} / {len(rows)}", "",
           md_table([id_field, "규칙 판정", *reviewers, "다수 판단", "메모"], table), ""]
    out += ["- 검토자별 진행: " + (", ".join(f"{r} {v['votes']} / {len(rows)}건" for r, v in sorted(team.reviewers.items())) or "아직 없음")]
    out += ["- 검토자 간 일치 (Cohen's kappa): " + ("; ".join(pair_text(p) for p in team.pairs) or "두 사람이 함께 판단한 항목이 아직 없습니다")]
    return "\n".join(out) + "\n"
