"""handoff settings, read from config.yaml beside this module (or a file given)."""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from rules.common.config import DomainConfig, ReportCriteria, Strict, load_yaml_config

DEFAULT_PATH = Path(__file__).with_name("config.yaml")


class PhraseMatching(Strict):
    remove_whitespace: bool = True
    unicode_form: Literal["NFC", "none"] = "NFC"
    ignore_case: bool = False


class HandoffConfig(DomainConfig):
    reentry_window_hours: Decimal = Field(Decimal(24), gt=0)
    phrase_matching: PhraseMatching = PhraseMatching()
    report: ReportCriteria = ReportCriteria()

    @field_validator("reentry_window_hours", mode="before")
    @classmethod
    def _two_decimals(cls, v):
        # Rule 3 compares the rounded output field, so a window finer than 0.01 h could not be honoured.
        d = Decimal(str(v))
        if d != d.quantize(Decimal("0.01")):
            raise ValueError("at most two decimals (re-entry hours are compared as rounded to 0.01)")
        return d

    @property
    def reentry_window_hundredths(self) -> int:
        return int(self.reentry_window_hours * 100)


@lru_cache(maxsize=None)
def load_config(path: str | None = None) -> HandoffConfig:
    return load_yaml_config(path or DEFAULT_PATH, HandoffConfig)
