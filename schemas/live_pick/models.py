"""Pydantic mirrors of the live_pick JSON Schemas.

Strict types so that a value the JSON Schema rejects (a string "true" for a boolean, 1.5
for an integer) is rejected here too, and what it accepts (5000.0 as an integer) is accepted.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictStr


def _json_integer(value):
    """JSON Schema's integer: an int, or a float with no fractional part (5000.0); never a bool."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("must be an integer")
    return value


JsonInt = Annotated[int, BeforeValidator(_json_integer)]

Verdict = Literal[
    "지금 답변할 질문",
    "세계관 밖이라 넘김",
    "방금 답한 주제",
    "관계 단계에 아직 못 미침",
    "다음 차례로 미룸",
]
Dataset = Literal["live_chat", "character_sheet", "viewer_relation"]


class _Row(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")


class LiveChat(_Row):
    msg_id: StrictStr
    character_id: StrictStr
    viewer_id: StrictStr
    sent_at: StrictStr
    body: StrictStr
    topic_tags: list[StrictStr] | None = None
    donation_amount: Annotated[JsonInt, Field(ge=0, le=2**53 - 1)]
    is_question: StrictBool
    note: StrictStr | None = None


class CharacterSheet(_Row):
    character_id: StrictStr
    character_name: StrictStr
    world_topic_tags: list[StrictStr]
    banned_tags: list[StrictStr]
    min_closeness_by_topic: dict[str, float]
    reply_cooldown_sec: Annotated[JsonInt, Field(ge=0, le=900)]
    note: StrictStr | None = None


class ViewerRelation(_Row):
    viewer_id: StrictStr
    nickname: StrictStr
    closeness_level: Annotated[JsonInt, Field(ge=0, le=5)]
    answered_topics: list[StrictStr]
    last_replied_at: StrictStr | None = None
    note: StrictStr | None = None


class Evidence(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")

    dataset: Dataset
    field: StrictStr
    agg: StrictStr | None = None
    value: StrictStr | float | StrictBool | None


class Provenance(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")

    tagger: Literal["gold", "lexicon", "kiwi", "openai"]
    answer: list[StrictStr] | None = None
    tags: list[StrictStr] | None
    discard: Literal["no_tag", "outside_vocabulary", "malformed_answer", "timeout", "endpoint_error", "over_budget"] | None = None
    summary: Literal["template", "openai"]
    summary_fallback: StrictStr | None = None


class Pick(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")

    pick_id: StrictStr
    msg_id: StrictStr
    # Optional in the schema, but a string when present (null is not allowed).
    viewer_id: StrictStr = None  # type: ignore[assignment]
    character_id: StrictStr = None  # type: ignore[assignment]
    window_start: StrictStr = None  # type: ignore[assignment]
    verdict: Verdict
    rank_in_window: Annotated[JsonInt, Field(ge=1)] | None = None
    cooldown_elapsed_sec: Annotated[JsonInt, Field(ge=0)] | None = None
    evidence: list[Evidence]
    summary: StrictStr
    hedge: StrictStr | None = None
    provenance: Provenance = None  # type: ignore[assignment]  # optional, never null
    sheet_version: Annotated[JsonInt, Field(ge=1)] | None = None


INPUT_MODELS: dict[str, type[BaseModel]] = {
    "live_chat": LiveChat,
    "character_sheet": CharacterSheet,
    "viewer_relation": ViewerRelation,
}
"""Dataset name → model, in the order the gates read them."""
