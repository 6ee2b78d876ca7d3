"""`verdicts demo`: the nightly job on the sample data with embedded storage, as the README runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def test_demo_runs_every_sample_day_and_prints_where_the_reports_are(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "WAREHOUSE_URL", "VERDICTS_ENV")}
    env["VERDICTS_HOME"] = str(tmp_path / "home")
    out = subprocess.run(
        [str(Path(sys.executable).parent / "verdicts"), "demo"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    for day, picks in (("2026-09-08", 23), ("2026-09-09", 14)):
        report = tmp_path / "home" / "reports" / "live_pick" / day / "report.md"
        assert f"report: {report}" in out.stdout
        assert report.is_file() and "판정 일치" in report.read_text(encoding="utf-8")
        assert f"{picks:5d}  지금 답변할 질문" in out.stdout
    home = tmp_path / "home" / "dagster_home"
    assert (home / "dagster.yaml").is_file()
    assert f"DAGSTER_HOME={home}" in out.stdout
    # The runs are in the instance the UI will open.
    runs = subprocess.run(
        [sys.executable, "-c", "from dagster import DagsterInstance; print(len(DagsterInstance.get().get_runs()))"],
        env={**env, "DAGSTER_HOME": str(home)}, capture_output=True, text=True, timeout=120,
    )
    assert runs.stdout.strip() == "2", runs.stderr
