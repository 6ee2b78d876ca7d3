"""live_pick settings, read from config.yaml beside this module (or a file given)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rules.common.config import load_yaml_config

DEFAULT_PATH = Path(__file__).with_name("config.yaml")


class FirstTimeViewer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    closeness_level: int = Field(0, ge=0, le=5)


class ReportCriteria(BaseModel):
    model_config = ConfigDict(extra="forbid")
    verdict_agreement_min: float = Field(0.9, ge=0, le=1)
    pick_agreement_min: float = Field(0.9, ge=0, le=1)


class LivePickConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timezone: str = "Asia/Seoul"
    window_seconds: int = Field(30, gt=0, le=3600)
    picks_per_window: int = Field(3, ge=1)
    missing_topic_min_closeness: float = Field(0, ge=0)
    first_time_viewer: FirstTimeViewer = FirstTimeViewer()
    report: ReportCriteria = ReportCriteria()

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, v: str) -> str:
        ZoneInfo(v)  # raises for an unknown zone
        return v


@lru_cache(maxsize=None)
def load_config(path: str | None = None) -> LivePickConfig:
    return load_yaml_config(path or DEFAULT_PATH, LivePickConfig)
