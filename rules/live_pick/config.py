"""live_pick settings, read from config.yaml beside this module (or a file given)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field, field_validator

from rules.common import config as common
from rules.common.config import DomainConfig, Strict, load_yaml_config
from rules.live_pick.names import NAMES, WRITERS

DEFAULT_PATH = Path(__file__).with_name("config.yaml")


class FirstTimeViewer(Strict):
    closeness_level: int = Field(0, ge=0, le=5)


class ReportCriteria(common.ReportCriteria):
    pick_agreement_min: float = Field(0.9, ge=0, le=1)


# Shorten reply_cooldown_sec when many in-world lines of a broadcast were held by it.
class CooldownSuggestion(Strict):
    min_held: int = Field(8, ge=1)
    min_held_share: float = Field(0.25, ge=0, le=1)
    step_sec: int = Field(30, ge=1, le=900)
    floor_sec: int = Field(30, ge=0, le=900)


# Lower a topic's min_closeness_by_topic when many of its lines were held by it.
class ClosenessSuggestion(Strict):
    min_held: int = Field(5, ge=1)
    min_held_share: float = Field(0.4, ge=0, le=1)
    max_step: float = Field(1, gt=0)


# Tuning suggestions made when a broadcast closes (rules/live_pick/suggest.py).
class SuggestionRules(Strict):
    max_per_broadcast: int = Field(3, ge=1, le=10)
    min_judged_lines: int = Field(20, ge=1)
    cooldown: CooldownSuggestion = CooldownSuggestion()
    closeness: ClosenessSuggestion = ClosenessSuggestion()


class LivePickConfig(DomainConfig):
    window_seconds: int = Field(30, gt=0, le=3600)
    picks_per_window: int = Field(3, ge=1)
    missing_topic_min_closeness: float = Field(0, ge=0)
    first_time_viewer: FirstTimeViewer = FirstTimeViewer()
    report: ReportCriteria = ReportCriteria()
    tagger: str = "gold"
    """The daily chain's tagger (`rules.live_pick.tags`); the live path reads VERDICTS_LIVE_TAGS."""
    summary_writer: str = "template"

    @field_validator("tagger")
    @classmethod
    def _known_tagger(cls, v: str) -> str:
        if v not in NAMES:
            raise ValueError(f"tagger must be one of {', '.join(NAMES)}")
        return v

    @field_validator("summary_writer")
    @classmethod
    def _known_writer(cls, v: str) -> str:
        if v not in WRITERS:
            raise ValueError(f"summary_writer must be one of {', '.join(WRITERS)}")
        return v
    suggestions: SuggestionRules = SuggestionRules()


@lru_cache(maxsize=None)
def load_config(path: str | None = None) -> LivePickConfig:
    return load_yaml_config(path or DEFAULT_PATH, LivePickConfig)
