"""retry settings, read from config.yaml beside this module (or a file given)."""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from pathlib import Path

from pydantic import Field, field_validator

from rules.common import config as common
from rules.common.config import DomainConfig, load_yaml_config

DEFAULT_PATH = Path(__file__).with_name("config.yaml")


class ReportCriteria(common.ReportCriteria):
    retry_agreement_min: float = Field(0.9, ge=0, le=1)


class RetryConfig(DomainConfig):
    hop_min_surfaces: int = Field(3, ge=2)
    baseline_without_pairs: float = Field(0, ge=0, le=1)
    display_decimals: int = Field(2, ge=0, le=12)
    sweep_factors: list[str] = Field(default_factory=lambda: ["0.5", "0.75", "1", "1.25", "1.5"], min_length=1)
    reference_pair_limit: int = Field(1_000_000, ge=0)
    report: ReportCriteria = ReportCriteria()

    @field_validator("sweep_factors")
    @classmethod
    def _exact_factors(cls, v: list[str]) -> list[str]:
        # Written as decimal strings so that ×1.1 is exactly 11/10, not the nearest binary number.
        for f in v:
            if Fraction(str(f)) <= 0:
                raise ValueError(f"sweep factor {f} must be positive")
        return [str(f) for f in v]

    @property
    def fallback_baseline(self) -> Fraction:
        return exact_decimal(self.baseline_without_pairs)

    @property
    def factors(self) -> list[Fraction]:
        return [Fraction(f) for f in self.sweep_factors]


def exact_decimal(value: float | int) -> Fraction:
    """A JSON number as the decimal it was written as (0.3 is 3/10, not the binary 0.299…)."""
    return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)


@lru_cache(maxsize=None)
def load_config(path: str | None = None) -> RetryConfig:
    return load_yaml_config(path or DEFAULT_PATH, RetryConfig)
