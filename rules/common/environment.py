"""Where things live, decided once from the environment.

- `VERDICTS_HOME`: outputs (reports, the SQLite warehouse, the demo's Dagster home);
  default `./var` under the working directory.
- `WAREHOUSE_URL`: SQLAlchemy URL of the warehouse; default SQLite in `VERDICTS_HOME`.
- `VERDICTS_RAW_DIR`: root of the raw logs, one folder per domain; default the sample data.
- `VERDICTS_ADMIN_URL`: where `verdicts serve` answers (e.g. `http://127.0.0.1:8765`), for links
  from the Dagster UI to the admin pages; default none.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DIR = PROJECT_ROOT / "seeds"


def verdicts_home() -> Path:
    return Path(os.environ.get("VERDICTS_HOME") or Path.cwd() / "var").resolve()


def warehouse_url() -> str:
    url = os.environ.get("WAREHOUSE_URL")
    if url:
        return url
    return f"sqlite:///{verdicts_home() / 'warehouse.sqlite'}"


def raw_dir() -> Path:
    return Path(os.environ.get("VERDICTS_RAW_DIR") or SAMPLE_DIR).resolve()


def reports_dir() -> Path:
    return verdicts_home() / "reports"


def admin_url() -> str:
    return (os.environ.get("VERDICTS_ADMIN_URL") or "").strip().rstrip("/")
