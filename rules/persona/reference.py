"""A row-by-row re-computation of the §3 rules, independent of the vectorised engine."""

from __future__ import annotations

from rules.common.evidence import frame_records
from rules.common.cells import trim
from rules.common.normalised import Normalised
from rules.persona import verdicts as V
from rules.persona.config import PersonaConfig


def _clean(v):
    return (trim(v) or None) if isinstance(v, str) else None


def expected_codes(norm: Normalised, config: PersonaConfig) -> dict[str, tuple[str | None, str]]:
    """turn_no → (profile_no, persona_code)."""
    profiles = {trim(p["character_code"]): p for p in frame_records(norm.tables["profiles"])}
    out = {}
    for t in frame_records(norm.tables["turns"]):
        p = profiles.get(trim(t["character_code_raw"]))
        out[t["turn_no"]] = (p["profile_no"] if p else None, _code(t, p, config))
    return out


def _code(t: dict, p: dict | None, config: PersonaConfig) -> str:
    if p is None:
        return V.PROFILE_UNMAPPED
    reply = t["reply_text"]
    if not isinstance(reply, str) or not reply.strip():
        return V.REPLY_EMPTY
    topic, forbidden = _clean(t["topic_tag"]), _clean(p["forbidden_topic"])
    age = None if p["age"] is None or p["age"] != p["age"] else int(p["age"])
    if topic is not None and topic == forbidden:
        return V.FORBIDDEN_TOPIC
    if age is not None and age < config.adult_age and topic in config.age_restricted_topics:
        return V.FORBIDDEN_TOPIC
    stated_age = t["stated_age"]
    if stated_age is not None and stated_age == stated_age:
        if age is None:
            if config.null_field_policy.age == "conflict":
                return V.AGE_CONFLICT
        elif int(stated_age) != age:
            return V.AGE_CONFLICT
    stated_job, job = _clean(t["stated_job"]), _clean(p["job"])
    if stated_job is not None:
        if job is None:
            if config.null_field_policy.job == "conflict":
                return V.JOB_CONFLICT
        elif stated_job != job:
            return V.JOB_CONFLICT
    return V.CONSISTENT
