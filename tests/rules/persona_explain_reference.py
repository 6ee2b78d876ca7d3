"""Persona's explanation read row by row: a dict per row handed to its code's builder, evidence
de-duplicated per row (`per_verdict`). The column-wise `rules.persona.explain` is held to it."""

from __future__ import annotations

import pandas as pd

from rules.common import evidence
from rules.common.explain import per_verdict
from rules.common.korean import inline, josa
from rules.persona import verdicts as V
from rules.persona.explain import MINOR_HEDGE, READS, UNFILLED_HEDGE


def ev(source: str, field: str, value, agg: str | None = None) -> dict:
    return evidence.row("source", source, field, value, agg)


def explain(f: pd.DataFrame, config) -> tuple[list, list, list]:
    build = {
        V.PROFILE_UNMAPPED: _unmapped,
        V.REPLY_EMPTY: _empty,
        V.FORBIDDEN_TOPIC: _forbidden,
        V.AGE_CONFLICT: _age,
        V.JOB_CONFLICT: _job,
        V.CONSISTENT: _consistent,
    }
    return per_verdict(f, "persona_code", build, config, reads=READS)


def _unmapped(r, config):
    e = [ev("turn", "character_code_raw", r["character_code_raw"]), ev("profile", "character_code", 0, agg="count")]
    if not r["character_code"]:
        return e, "캐릭터 코드가 비어 있어 어느 설정과 맞춰야 할지 정하지 못합니다.", None
    code = inline(r["character_code"])
    return e, f"설정 목록에 없는 캐릭터 코드 {josa(code, '이라/라')} 무엇과 맞춰야 할지 정하지 못합니다.", None


def _empty(r, config):
    e = [ev("turn", "reply_text", r["reply_text"]), ev("turn", "prompt_ver", r["prompt_ver"])]
    return e, "응답이 비어 있어 대조할 내용이 없습니다.", None


def _forbidden(r, config):
    tag = inline(r["topic"])
    if r["forbidden"] is not None and r["topic"] == r["forbidden"]:
        e = [ev("turn", "topic_tag", r["topic_tag"]), ev("profile", "forbidden_topic", r["profile_forbidden_topic"])]
        return e, f"설정이 막아 둔 {tag} 주제를 그대로 이어 말했습니다.", None
    e = [ev("turn", "topic_tag", r["topic_tag"]), ev("profile", "age", r["age"])]
    s = f"{r['age']}세 미성년 설정 캐릭터가 {tag} 주제를 받아 이어 말했습니다."
    return e, s, MINOR_HEDGE


def _age(r, config):
    stated, age = r["stated_age"], r["age"]
    e = [ev("turn", "stated_age", stated), ev("profile", "age", age)]
    if age is None:
        return e, f"설정에 나이가 비어 있는데 발화가 {stated}세라고 단정해 설정을 채워야 합니다.", UNFILLED_HEDGE
    diff = stated - age
    direction = "많게" if diff > 0 else "적게"
    return e, f"설정 나이 {age}세보다 {abs(diff)}살 {direction} 말했습니다.", None


def _job(r, config):
    stated = inline(r["stated_job_clean"])
    job = None if r["job"] is None else inline(r["job"])
    e = [ev("turn", "stated_job", r["stated_job"]), ev("profile", "job", r["profile_job"])]
    if job is None:
        return e, f"설정에 직업이 비어 있는데 발화가 직업을 {josa(stated, '으로/로')} 단정해 설정을 채워야 합니다.", UNFILLED_HEDGE
    return e, f"설정은 {job}인데 발화에서는 {josa(stated, '이라/라')}고 말했습니다.", None


def _consistent(r, config):
    e, parts = [], []
    if r["avoided"]:
        e += [ev("turn", "user_topic_tag", r["user_topic_tag"]), ev("turn", "topic_tag", r["topic_tag"]),
              ev("profile", "forbidden_topic", r["profile_forbidden_topic"])]
        parts.append(f"금지 주제인 {josa(inline(r['forbidden']), '을/를')} 요청받았지만 답을 피해 설정을 지켰습니다.")
    matched, unchecked = [], []
    if r["stated_age"] is not None:
        e += [ev("turn", "stated_age", r["stated_age"]), ev("profile", "age", r["age"])]
        (matched if r["age"] is not None else unchecked).append(f"나이 {r['stated_age']}세")
    if r["stated_job_clean"] is not None:
        e += [ev("turn", "stated_job", r["stated_job"]), ev("profile", "job", r["profile_job"])]
        (matched if r["job"] is not None else unchecked).append(f"직업 {inline(r['stated_job_clean'])}")
    if matched:
        parts.append(f"발화에서 밝힌 {josa(', '.join(matched), '이/가')} 설정과 같습니다.")
    if unchecked:
        # Only under the "ignore" null-field policy: an empty profile field is not compared.
        parts.append(f"발화에서 밝힌 {josa(', '.join(unchecked), '은/는')} 설정 항목이 비어 있어 대조하지 않았습니다.")
    if not parts:
        e += [ev("turn", "stated_age", None), ev("turn", "stated_job", r["stated_job"]), ev("turn", "topic_tag", r["topic_tag"])]
        parts.append("발화가 나이나 직업을 밝히지 않았고 설정이 막은 주제도 건드리지 않았습니다.")
    return e, " ".join(parts), None
