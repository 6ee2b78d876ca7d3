"""`verdicts eval` through `evals.runner.main_eval`, and the Dagster job `eval` with the same settings.

The gate test changes one rule threshold (live_pick answers 2 lines per window instead of 3),
re-runs against the first run's summary, and expects exit 1 naming the metric that fell.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from evals import domains
from evals.runner import main_eval, parse_args

SEEDS = Path(__file__).resolve().parents[2] / "seeds"


def with_config(monkeypatch, name: str, **changes) -> None:
    """The domain judged and checked with its configuration changed for this test."""
    domain = domains.get(name)
    original = domain.spec.load_config
    monkeypatch.setattr(domain, "spec", replace(domain.spec, load_config=lambda: original().model_copy(update=changes)))


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main_eval(parse_args(list(argv)))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def baseline(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("baseline")
    code, _, err = run("--out", str(out))
    assert code == 0, err
    return out / "summary.json"


def test_default_run_writes_every_domain_and_the_summary(baseline):
    out = baseline.parent
    assert list(json.loads(baseline.read_text(encoding="utf-8"))["domains"]) == ["persona", "live_pick", "retry", "handoff"]
    assert (out / "summary.md").is_file()
    assert all((out / d / "report.md").is_file() and (out / d / "board.html").is_file() for d in ("persona", "live_pick", "retry", "handoff"))
    assert not (out / "gate.json").exists()  # no baseline, no gate


def test_same_rules_against_the_baseline_pass(baseline, tmp_path):
    code, out, _ = run("--domain", "live_pick", "--domain", "retry", "--out", str(tmp_path), "--baseline", str(baseline))
    assert code == 0
    assert "통과" in out and "움직인 지표가 없습니다" in out
    gate = json.loads((tmp_path / "gate.json").read_text(encoding="utf-8"))
    assert gate["passed"] and gate["skipped_domains"] == ["handoff", "persona"]


def test_changed_threshold_fails_the_gate_naming_the_metric(baseline, tmp_path, monkeypatch):
    with_config(monkeypatch, "live_pick", picks_per_window=2)
    code, out, _ = run("--domain", "live_pick", "--out", str(tmp_path), "--baseline", str(baseline), "--margin", "0.02")
    assert code == 1
    assert "live_pick · 판정 일치" in out
    failed = {m["metric"] for m in json.loads((tmp_path / "gate.json").read_text(encoding="utf-8"))["failures"]}
    assert "판정 일치" in failed
    # A wide enough margin lets the same drop through: the margin is what decides.
    code, _, _ = run("--domain", "live_pick", "--out", str(tmp_path), "--baseline", str(baseline), "--margin", "0.5")
    assert code == 0


def test_a_narrower_reentry_window_fails_the_gate_on_the_200_handoff_labels(baseline, tmp_path, monkeypatch):
    with_config(monkeypatch, "handoff", reentry_window_hours=12)
    code, out, _ = run("--domain", "handoff", "--out", str(tmp_path), "--baseline", str(baseline))
    assert code == 1
    gate = json.loads((tmp_path / "gate.json").read_text(encoding="utf-8"))
    assert [m["metric"] for m in gate["failures"]] == ["판정 일치"]
    assert "handoff · 판정 일치" in out
    # Re-entries after 12 h or more are now ended by the AI: the per-verdict figures move, record-only.
    moved = {m["metric"] for m in gate["moved"]}
    assert {"판정별 일치 · 같은 문의가 다시 들어옴", "판정별 일치 · AI 응대로 끝남"} <= moved


def test_baseline_may_live_in_the_output_folder(baseline, tmp_path):
    code, _, _ = run("--domain", "retry", "--out", str(tmp_path))
    assert code == 0
    code, out, _ = run("--domain", "retry", "--out", str(tmp_path), "--baseline", str(tmp_path / "summary.json"))
    assert code == 0 and "통과" in out


@pytest.mark.parametrize("argv, message", [
    (["--domain", "nope"], "unknown domain"),
    (["--input", "/nonexistent-folder"], "no input folder"),
    (["--baseline", "/nonexistent.json"], "summary.json"),
    (["--golden", "g.jsonl"], "DOMAIN=FILE"),
    (["--margin", "-1"], "margin"),
])
def test_unusable_input_exits_2(argv, message, tmp_path):
    code, _, err = run(*argv, "--out", str(tmp_path))
    assert code == 2 and message in err


def test_dagster_job_takes_the_same_settings_as_run_config(baseline, tmp_path, monkeypatch):
    from dagster import DagsterEventType

    from assets.resources.reports import ReportsResource
    from orchestration.evaluation import eval_job
    from assets.resources.raw_files import RawFilesResource

    from assets.resources.warehouse import WarehouseResource

    resources = {"raw_files": RawFilesResource(root=str(SEEDS)), "reports": ReportsResource(root=str(tmp_path / "reports")),
                 "warehouse": WarehouseResource(url=f"sqlite:///{tmp_path / 'wh.sqlite'}")}
    config = {"domains": ["live_pick"], "baseline": str(baseline), "margin": 0.02}
    result = eval_job.execute_in_process(run_config={"ops": {"run_evaluation": {"config": config}}}, resources=resources)
    assert result.success
    assert (tmp_path / "reports" / "eval" / "live_pick" / "report.json").is_file()
    assert result.output_for_node("run_evaluation") == str(tmp_path / "reports" / "eval")

    with_config(monkeypatch, "live_pick", picks_per_window=2)
    config["out_dir"] = str(tmp_path / "second")
    result = eval_job.execute_in_process(run_config={"ops": {"run_evaluation": {"config": config}}}, resources=resources,
                                         raise_on_error=False)
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type == DagsterEventType.STEP_FAILURE)
    assert "live_pick · 판정 일치" in failure.step_failure_data.user_failure_data.description


def test_the_verdicts_command_runs_eval_through_the_cli(tmp_path):
    from orchestration.cli import main

    assert main(["eval", "--domain", "live_pick", "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "summary.md").is_file() and (tmp_path / "out" / "live_pick" / "report.md").is_file()


def test_live_pick_judged_with_a_tagger_says_so_and_scores_every_tagger(tmp_path):
    code, _, err = run("--domain", "live_pick", "--tags", "kiwi", "--out", str(tmp_path))
    assert code == 0, err
    report = json.loads((tmp_path / "live_pick" / "report.json").read_text(encoding="utf-8"))
    assert any("kiwi 80줄" in note for note in report["honesty"])
    assert not any("수집기의 정답 태그(topic_tags)로 판정했습니다" in note for note in report["honesty"])
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["domains"]["live_pick"]["checks_passed"] and set(report["tagger_agreement"]) >= {"lexicon", "kiwi"}
    assert run("--domain", "live_pick", "--tags", "bogus", "--out", str(tmp_path / "x"))[0] == 2
