"""Evidence rows, summaries and hedges for each persona code.

Evidence cites `source` ∈ {profile, turn}; without `agg` its value is the cited row's value as
written. `count` on profile.character_code is the number of profiles with the turn's
(trimmed) code: 0 for an unmapped turn.

Built column-wise (`column_wise`): each code's rows at once, from the columns that code cites, with
every sentence worded once per distinct value. Plain lists and f-strings rather than pandas' string
methods, which call Python per cell too and would add a Series per template. No builder cites a
(source, field) twice in one row, so there is nothing to de-duplicate.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from rules.common.evidence_table import Cited, Slot
from rules.common.explain import column_wise, each
from rules.common.json_columns import Encoded
from rules.common.korean import inline, josa
from rules.persona import verdicts as V
from rules.persona.config import PersonaConfig

MINOR_HEDGE = "합성 기준 판정이라 연출 의도로 허용하는 구간이 있을 수 있습니다."
UNFILLED_HEDGE = "설정 항목이 비어 있는 캐릭터를 어디까지 판정할지는 기획 기준에 따라 담당자가 정합니다."
BLANK_CODE = "캐릭터 코드가 비어 있어 어느 설정과 맞춰야 할지 정하지 못합니다."
EMPTY_REPLY = "응답이 비어 있어 대조할 내용이 없습니다."
NOTHING_STATED = "발화가 나이나 직업을 밝히지 않았고 설정이 막은 주제도 건드리지 않았습니다."

READS = ("character_code_raw", "prompt_ver", "reply_text", "stated_age", "stated_job", "topic_tag", "user_topic_tag",
         "character_code", "profile_job", "profile_forbidden_topic", "topic", "forbidden", "job", "stated_job_clean", "age",
         "avoided")
"""The feature columns the builders below read: the only ones made into plain values."""


def _turn(field: str, values: list, where: np.ndarray | None = None, agg: str | None = None) -> Slot:
    return Slot("source", "turn", field, values, where, agg)


def _profile(field: str, values: list, where: np.ndarray | None = None, agg: str | None = None) -> Slot:
    return Slot("source", "profile", field, values, where, agg)


def explain(f: pd.DataFrame, config: PersonaConfig, encoded: bool = False) -> tuple[list | Encoded, list, list]:
    """Evidence, summary and hedge of each row; `encoded`: the evidence as each row's JSON text."""
    build = {
        V.PROFILE_UNMAPPED: _unmapped,
        V.REPLY_EMPTY: _empty,
        V.FORBIDDEN_TOPIC: _forbidden,
        V.AGE_CONFLICT: _age,
        V.JOB_CONFLICT: _job,
        V.CONSISTENT: _consistent,
    }
    return column_wise(f, "persona_code", build, config, READS, encoded)


def _unmapped(c, config):
    n = len(c["character_code_raw"])
    e = Cited([_turn("character_code_raw", c["character_code_raw"]), _profile("character_code", [0] * n, agg="count")], n)
    s = each(lambda code: f"설정 목록에 없는 캐릭터 코드 {josa(inline(code), '이라/라')} 무엇과 맞춰야 할지 정하지 못합니다."
             if code else BLANK_CODE, c["character_code"])
    return e, s, [None] * n


def _empty(c, config):
    n = len(c["reply_text"])
    return Cited([_turn("reply_text", c["reply_text"]), _turn("prompt_ver", c["prompt_ver"])], n), [EMPTY_REPLY] * n, [None] * n


def _forbidden(c, config):
    # Forbidden by the profile itself, or (otherwise) a restricted topic for a minor.
    direct = [forbidden is not None and topic == forbidden for topic, forbidden in zip(c["topic"], c["forbidden"])]
    by_profile = np.array(direct, dtype=bool)
    e = Cited([_turn("topic_tag", c["topic_tag"]), _profile("forbidden_topic", c["profile_forbidden_topic"], by_profile),
               _profile("age", c["age"], ~by_profile)], len(direct))
    s = [f"설정이 막아 둔 {tag} 주제를 그대로 이어 말했습니다." if d else f"{age}세 미성년 설정 캐릭터가 {tag} 주제를 받아 이어 말했습니다."
         for d, tag, age in zip(direct, each(inline, c["topic"]), c["age"])]
    return e, s, [None if d else MINOR_HEDGE for d in direct]


def _age(c, config):
    stated, ages = c["stated_age"], c["age"]
    e = Cited([_turn("stated_age", stated), _profile("age", ages)], len(ages))
    s = [f"설정에 나이가 비어 있는데 발화가 {s}세라고 단정해 설정을 채워야 합니다." if a is None
         else f"설정 나이 {a}세보다 {abs(s - a)}살 {'많게' if s - a > 0 else '적게'} 말했습니다."
         for s, a in zip(stated, ages)]
    return e, s, [UNFILLED_HEDGE if a is None else None for a in ages]


def _job(c, config):
    e = Cited([_turn("stated_job", c["stated_job"]), _profile("job", c["profile_job"])], len(c["stated_job"]))
    as_ro = each(lambda v: josa(inline(v), "으로/로"), c["stated_job_clean"])
    as_ira = each(lambda v: josa(inline(v), "이라/라"), c["stated_job_clean"])
    jobs = each(lambda v: None if v is None else inline(v), c["job"])
    s = [f"설정에 직업이 비어 있는데 발화가 직업을 {ro} 단정해 설정을 채워야 합니다." if job is None
         else f"설정은 {job}인데 발화에서는 {ira}고 말했습니다."
         for job, ro, ira in zip(jobs, as_ro, as_ira)]
    return e, s, [UNFILLED_HEDGE if job is None else None for job in jobs]


def _consistent(c, config):
    avoided_text = each(lambda v: f"금지 주제인 {josa(inline(v), '을/를')} 요청받았지만 답을 피해 설정을 지켰습니다.", c["forbidden"])
    job_text = each(lambda v: None if v is None else f"직업 {inline(v)}", c["stated_job_clean"])
    same = lru_cache(maxsize=None)(lambda words: f"발화에서 밝힌 {josa(words, '이/가')} 설정과 같습니다.")
    # Only under the "ignore" null-field policy: an empty profile field is not compared.
    skipped = lru_cache(maxsize=None)(lambda words: f"발화에서 밝힌 {josa(words, '은/는')} 설정 항목이 비어 있어 대조하지 않았습니다.")
    summaries = []
    for avoided, said, stated_age, age, job, job_said in zip(
            c["avoided"], avoided_text, c["stated_age"], c["age"], c["job"], job_text):
        parts, matched, unchecked = [], [], []
        if avoided:
            parts.append(said)
        if stated_age is not None:
            (matched if age is not None else unchecked).append(f"나이 {stated_age}세")
        if job_said is not None:
            (matched if job is not None else unchecked).append(job_said)
        if matched:
            parts.append(same(", ".join(matched)))
        if unchecked:
            parts.append(skipped(", ".join(unchecked)))
        summaries.append(" ".join(parts) if parts else NOTHING_STATED)
    n = len(summaries)
    avoided = np.array(c["avoided"], dtype=bool)
    age_said = np.array(c["stated_age"], dtype=object) != None  # noqa: E711 - elementwise
    job_said = np.array(job_text, dtype=object) != None  # noqa: E711 - elementwise
    nothing = ~(avoided | age_said | job_said)
    cited = Cited([
        _turn("user_topic_tag", c["user_topic_tag"], avoided), _turn("topic_tag", c["topic_tag"], avoided),
        _profile("forbidden_topic", c["profile_forbidden_topic"], avoided),
        _turn("stated_age", c["stated_age"], age_said), _profile("age", c["age"], age_said),
        _turn("stated_job", c["stated_job"], job_said), _profile("job", c["profile_job"], job_said),
        _turn("stated_age", [None] * n, nothing), _turn("stated_job", c["stated_job"], nothing),
        _turn("topic_tag", c["topic_tag"], nothing),
    ], n)
    return cited, summaries, [None] * n
