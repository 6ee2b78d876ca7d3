"""The review queue: turns where the user re-named the character's settings, for a person.

Whether a user re-naming the character ("이제부터 너는 …") should count as a persona break is
a judgement call (seed 000, manual check 1). Candidates are turns whose user_text holds a
configured cue phrase; the sample is reproducible: turns are ordered by a hash of the seed
and turn_no, so the same input gives the same sample and new turns do not reshuffle it.
"""

from __future__ import annotations

import hashlib

import pandas as pd

from rules.persona.config import PersonaConfig

QUEUE_COLUMNS = ["turn_no", "character_code_raw", "prompt_ver", "cue_phrase", "user_text", "reply_text",
                 "persona_code", "summary", "reviewer_decision", "reviewer_note"]


def cue_of(text: object, phrases: list[str]) -> str | None:
    if not isinstance(text, str):
        return None
    return next((p for p in phrases if p in text), None)


def review_queue(turns: pd.DataFrame, config: PersonaConfig) -> pd.DataFrame:
    """Up to `sample_size` candidate turns (with their persona_code and summary) and blank reviewer columns."""
    phrases = config.review.cue_phrases
    cues = turns["user_text"].map(lambda t: cue_of(t, phrases))
    candidates = turns[cues.notna()].assign(cue_phrase=cues[cues.notna()])
    if candidates.empty:
        return pd.DataFrame(columns=QUEUE_COLUMNS)
    order = candidates["turn_no"].map(lambda t: hashlib.sha256(f"{config.review.seed}:{t}".encode()).hexdigest())
    picked = candidates.assign(_order=order).sort_values("_order").head(config.review.sample_size)
    picked["reviewer_decision"] = None
    picked["reviewer_note"] = None
    return picked.sort_values("turn_no")[QUEUE_COLUMNS].reset_index(drop=True)


def candidate_count(turns: pd.DataFrame, config: PersonaConfig) -> int:
    return int(turns["user_text"].map(lambda t: cue_of(t, config.review.cue_phrases) is not None).sum())
