"""Preparing a Dagster home for the embedded default (SQLite, no server)."""

from __future__ import annotations

import shutil
from pathlib import Path

from rules.common.environment import PROJECT_ROOT

LOCAL_CONFIG = Path(__file__).with_name("dagster_local.yaml")
"""The embedded default: SQLite under the Dagster home, no server."""
TEAM_CONFIG = PROJECT_ROOT / "dagster.yaml"
"""PostgreSQL storage, daemon scheduler, queued runs; credentials from the environment."""


def prepare_home(home: Path) -> Path:
    """Create the folder and put the embedded default's dagster.yaml in it unless one is there."""
    home = home.resolve()
    home.mkdir(parents=True, exist_ok=True)
    target = home / "dagster.yaml"
    if not target.exists():
        shutil.copyfile(LOCAL_CONFIG, target)
    return home
