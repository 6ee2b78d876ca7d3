"""`verdicts demo`: the nightly job on every sample day, then the cross-day evaluation, with embedded storage."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path



def test_demo_runs_every_sample_day_and_prints_where_the_reports_are(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "WAREHOUSE_URL", "VERDICTS_ENV")}
    env["VERDICTS_HOME"] = str(tmp_path / "home")
    out = subprocess.run(
        [str(Path(sys.executable).parent / "verdicts"), "demo"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    for domain, day, line in (
        ("live_pick", "2026-09-08", f"{23:5d}  지금 답변할 질문"),
        ("live_pick", "2026-09-09", f"{14:5d}  지금 답변할 질문"),
        ("persona", "2026-10-05", f"{169:5d}  consistent"),
        ("persona", "2026-10-06", f"{185:5d}  consistent"),
    ):
        report = tmp_path / "home" / "reports" / domain / day / "report.md"
        assert f"report: {report}" in out.stdout
        assert report.is_file() and "판정 일치" in report.read_text(encoding="utf-8")
        assert line in out.stdout
    comparison = tmp_path / "home" / "reports" / "persona" / "comparison" / "p12_vs_p13.md"
    assert f"prompt comparison: {comparison}" in out.stdout and "McNemar" in comparison.read_text(encoding="utf-8")
    home = tmp_path / "home" / "dagster_home"
    assert (home / "dagster.yaml").is_file()
    assert f"DAGSTER_HOME={home}" in out.stdout
    # The runs are in the instance the UI will open.
    runs = subprocess.run(
        [sys.executable, "-c", "from dagster import DagsterInstance; "
         "print(sorted({r.status.value for r in DagsterInstance.get().get_runs()}), len(DagsterInstance.get().get_runs()))"],
        env={**env, "DAGSTER_HOME": str(home)}, capture_output=True, text=True, timeout=120,
    )
    # eleven nightly days (the sample days and 10-03, after handoff's 10-02), five handoff days, one evaluation
    assert runs.stdout.strip() == "['SUCCESS'] 17", runs.stdout + runs.stderr
    assert f"{23:5d}  one_shot" in out.stdout
    handoff = tmp_path / "home" / "reports" / "handoff" / "2026-10-01" / "report.md"
    assert f"report: {handoff}" in out.stdout
    _reports_say_only_what_their_day_shows(tmp_path / "home" / "reports")


SEED_CHECKS = {"persona": {"persona.1", "persona.2"}, "live_pick": {"live_pick.1", "live_pick.2"}, "retry": set(),
               "handoff": {"handoff.1", "handoff.2"}}
"""The manual checks (수동 검증) seeds 000–003 define; seed 002 (retry) defines none."""


def _reports_say_only_what_their_day_shows(reports) -> None:
    """No criterion verdict on a day with nothing judged; no manual check the seed does not define."""
    import json

    days = sorted(reports.glob("*/????-??-??/report.json"))
    empty = 0
    for path in days:
        data = json.loads(path.read_text(encoding="utf-8"))
        md = (path.parent / "report.md").read_text(encoding="utf-8")
        keys = {m["key"] for m in data["metrics"] if m["key"]}
        assert keys == SEED_CHECKS[data["domain"]], path
        if data["domain"] == "retry":
            assert "사람이 확인" not in md and "시드는 수동 검증" in md, path
        if data["empty"]:
            empty += 1
            assert not [m["name"] for m in data["metrics"] if m["status"] in ("기준 충족", "기준 미달", "측정 불가")], path
            assert not any(word in md for word in ("기준 충족", "기준 미달", "✅ 통과")), path
            assert "이 범위에는 판정한 항목이 없습니다" in md, path
    assert len(days) == 38 and empty == 26  # the sample's days: most domains have data on only a few of them


def test_demo_on_postgresql_fills_the_warehouse_and_a_second_run_changes_no_count(tmp_path, postgres_url):
    import sqlalchemy as sa

    url = postgres_url.replace("postgresql+psycopg2://", "postgresql+psycopg://")
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "VERDICTS_ENV")}
    env.update(WAREHOUSE_URL=url, VERDICTS_HOME=str(tmp_path / "home"))
    tables = ("live_pick_verdicts", "persona_verdicts", "retry_verdicts", "handoff_verdicts", "persona_quarantine")

    def counts():
        engine = sa.create_engine(url)
        with engine.connect() as conn:
            out = {t: conn.execute(sa.text(f'SELECT COUNT(*) FROM "{t}"')).scalar_one() for t in tables}
        engine.dispose()
        return out

    seen = []
    for _ in range(2):
        out = subprocess.run([str(Path(sys.executable).parent / "verdicts"), "demo"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stdout + out.stderr
        seen.append(counts())
    assert seen[0] == seen[1]
    assert seen[0]["live_pick_verdicts"] == 80 and seen[0]["persona_verdicts"] == 469
