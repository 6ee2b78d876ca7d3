"""live_pick settings, read from config.yaml beside this module (or a file given)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field, field_validator

from rules.common import config as common
from rules.common.config import DomainConfig, Strict, load_yaml_config

DEFAULT_PATH = Path(__file__).with_name("config.yaml")


class FirstTimeViewer(Strict):
    closeness_level: int = Field(0, ge=0, le=5)


class ReportCriteria(common.ReportCriteria):
    pick_agreement_min: float = Field(0.9, ge=0, le=1)


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
        from rules.live_pick.tags import NAMES

        if v not in NAMES:
            raise ValueError(f"tagger must be one of {', '.join(NAMES)}")
        return v

    @field_validator("summary_writer")
    @classmethod
    def _known_writer(cls, v: str) -> str:
        from rules.live_pick.summaries import WRITERS

        if v not in WRITERS:
            raise ValueError(f"summary_writer must be one of {', '.join(WRITERS)}")
        return v


@lru_cache(maxsize=None)
def load_config(path: str | None = None) -> LivePickConfig:
    return load_yaml_config(path or DEFAULT_PATH, LivePickConfig)
