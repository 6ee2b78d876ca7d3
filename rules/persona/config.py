"""persona settings, read from config.yaml beside this module (or a file given)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field

from rules.common.config import DomainConfig, ReportCriteria, Strict, load_yaml_config

DEFAULT_PATH = Path(__file__).with_name("config.yaml")
Policy = Literal["conflict", "ignore"]


class NullFieldPolicy(Strict):
    age: Policy = "conflict"
    job: Policy = "conflict"


class Review(Strict):
    cue_phrases: list[str] = Field(min_length=1)
    sample_size: int = Field(20, ge=1)
    seed: int = 0


class PersonaConfig(DomainConfig):
    adult_age: int = Field(20, ge=0, le=120)
    age_restricted_topics: list[str] = ["음주", "흡연"]
    null_field_policy: NullFieldPolicy = NullFieldPolicy()
    review: Review
    report: ReportCriteria = ReportCriteria()


@lru_cache(maxsize=None)
def load_config(path: str | None = None) -> PersonaConfig:
    return load_yaml_config(path or DEFAULT_PATH, PersonaConfig)
