"""Preparing a Dagster home for the embedded default (SQLite, no server)."""

from __future__ import annotations

import shutil
from pathlib import Path

from orchestration.environment import PROJECT_ROOT

INSTANCE_CONFIG = PROJECT_ROOT / "dagster.yaml"


def prepare_home(home: Path) -> Path:
    """Create the folder and copy the project's dagster.yaml into it unless one is there."""
    home = home.resolve()
    home.mkdir(parents=True, exist_ok=True)
    target = home / "dagster.yaml"
    if not target.exists():
        shutil.copyfile(INSTANCE_CONFIG, target)
    return home
