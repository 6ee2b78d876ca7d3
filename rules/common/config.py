"""Loading a domain's YAML configuration into a pydantic model, with a clear error."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar
from zoneinfo import ZoneInfo

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

M = TypeVar("M", bound=BaseModel)


class ConfigError(ValueError):
    pass


# Settings blocks refuse unknown keys, so a misspelt setting is an error rather than a silent default.
# (Comments, not docstrings: pydantic would publish a docstring in every domain's JSON Schema.)
class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# What every domain's settings start with: the zone a timestamp without an offset is read in.
class DomainConfig(Strict):
    timezone: str = "Asia/Seoul"

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, v: str) -> str:
        ZoneInfo(v)  # raises for an unknown zone
        return v


# The agreement with the golden labels every domain's report must reach; domains may add their own.
class ReportCriteria(Strict):
    verdict_agreement_min: float = Field(0.9, ge=0, le=1)


def load_yaml_config(path: str | Path, model: type[M]) -> M:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot be read: {exc}") from exc
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"{path}: {problems}") from exc
