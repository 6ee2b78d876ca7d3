"""The automatic checks' Korean titles and keys, shared by the reports and Dagster's check names.

A check result's id (`1.verdict_enum`, `schema`) is its key everywhere: the reports print it
beside the Korean title, and Dagster names the asset check after it (`1_verdict_enum`).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from importlib import resources

import yaml

from rules.common.checks import CheckResult


@lru_cache(maxsize=1)
def _titles() -> dict:
    return yaml.safe_load((resources.files("evals") / "check_titles.yaml").read_text(encoding="utf-8"))


def keys(domain: str) -> list[str]:
    """The seed's numbered checks of a domain, in order (none for a domain the file does not list)."""
    return list(_titles().get(domain, ()))


def title(domain: str, key: str, fallback: str = "") -> str:
    t = _titles()
    return t.get(domain, {}).get(key) or t["common"].get(key) or fallback


def dagster_name(key: str) -> str:
    """`1.verdict_enum` → `1_verdict_enum` (Dagster names allow letters, digits and underscores)."""
    return key.replace(".", "_")


def in_korean(domain: str, checks: list[CheckResult]) -> list[CheckResult]:
    return [replace(c, title=title(domain, c.id, c.title)) for c in checks]
