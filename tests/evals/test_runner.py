"""The week-2 runner: report files and summary on the sample data, and the regression gate's rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals import runner
from evals.report import MET, NO_DATA, NOT_MET, RECORD_ONLY

SEEDS = Path(__file__).resolve().parents[2] / "seeds"
ALL = ["persona", "live_pick", "retry", "handoff"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("eval")
    return runner.run_eval(ALL, SEEDS, None, out), out


def test_every_domain_gets_report_files_and_the_summary(run):
    summary, out = run
    assert list(summary["domains"]) == ALL
    for name in ALL:
        assert {p.name for p in (out / name).iterdir()} == {"report.md", "report.json", "board.html"}
        report = json.loads((out / name / "report.json").read_text(encoding="utf-8"))
        assert report["domain"] == name and report["honesty"]
        # The summary carries the same metrics as the domain's report.
        assert summary["domains"][name]["metrics"] == report["metrics"]
    assert json.loads((out / "summary.json").read_text(encoding="utf-8")) == summary


def test_summary_reports_golden_sizes_from_the_files(run):
    summary, _ = run
    for name in ALL:
        lines = sum(1 for line in (SEEDS / name / "golden.jsonl").read_text(encoding="utf-8").splitlines() if line.strip())
        d = summary["domains"][name]
        assert d["golden_size"] == lines and d["golden"].endswith(f"{name}/golden.jsonl")
        assert 0 < d["labelled_and_judged"] <= lines


def test_summary_markdown_has_one_row_per_domain_and_every_ratio_metric(run):
    summary, out = run
    md = (out / "summary.md").read_text(encoding="utf-8")
    for name, d in summary["domains"].items():
        assert f"| {name} | {d['golden_size']} | {d['labelled_and_judged']} |" in md
        for m in d["metrics"]:
            if m["ratio"]:
                assert f"| {name} | {m['name']} | {m['ratio']['display']}" in md
    assert "95% Wilson" in md and "합성" in md


def test_domain_extras_reach_the_reports(run):
    _, out = run
    live = json.loads((out / "live_pick" / "report.json").read_text(encoding="utf-8"))
    assert set(live["tagger_agreement"]) >= {"lexicon", "kiwi"}
    assert all(a["exact"]["denominator"] > 0 for a in live["tagger_agreement"].values())
    names = [m["name"] for m in live["metrics"]]
    assert "태거 태그 정확 일치 (lexicon)" in names and "태거 태그 정확 일치 (kiwi)" in names
    # the held-out set beside the sample, each said to be which
    assert "태거 태그 정확 일치 (kiwi · 보류 세트)" in names and "태거 태그 재현율 (kiwi · 보류 세트)" in names
    assert set(live["tagger_agreement_heldout"]) == set(live["tagger_agreement"])
    assert live["tagger_agreement_heldout"]["kiwi"]["exact"]["denominator"] >= 200
    assert "not written from" in live["tagger_agreement_sets"]["tagger_agreement_heldout"]
    assert "보류 세트 (어휘를 쓸 때 보지 않은 줄)" in (out / "live_pick" / "report.md").read_text(encoding="utf-8")
    assert any("태거 일치" in s["heading"] for s in live["sections"])
    assert "태거 일치" in (out / "live_pick" / "report.md").read_text(encoding="utf-8")
    persona = json.loads((out / "persona" / "report.json").read_text(encoding="utf-8"))
    assert persona["prompt_comparison"]["a"] < persona["prompt_comparison"]["b"]
    assert "프롬프트 버전 비교" in (out / "persona" / "report.md").read_text(encoding="utf-8")
    retry = json.loads((out / "retry" / "report.json").read_text(encoding="utf-8"))
    assert retry["baseline_sweep"] and retry["mismatch_by_verdict"]


def test_golden_override_and_a_domain_folder_as_input(tmp_path):
    golden = tmp_path / "gold.jsonl"
    golden.write_text((SEEDS / "retry" / "golden.jsonl").read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    summary = runner.run_eval(["retry"], SEEDS / "retry", {"retry": golden}, tmp_path / "out")
    assert summary["domains"]["retry"]["golden_size"] == 1
    assert summary["domains"]["retry"]["labelled_and_judged"] == 1


def test_golden_argument_forms():
    assert runner.parse_golden(["g.jsonl"], ["retry"]) == {"retry": Path("g.jsonl")}
    assert runner.parse_golden(["retry=a", "persona=b"], ALL) == {"retry": Path("a"), "persona": Path("b")}
    with pytest.raises(ValueError, match="DOMAIN=FILE"):
        runner.parse_golden(["g.jsonl"], ALL)


def summary(*metrics, domain="d"):
    def metric(name, value, status):
        ratio = None if value is None else {"numerator": round(value * 100), "denominator": 100, "value": value}
        return {"name": name, "ratio": ratio, "status": status}
    return {"domains": {domain: {"metrics": [metric(*m) for m in metrics]}}}


def gate(before, after, margin=0.02):
    return runner.compare_to_baseline(after, before, margin)


def test_unchanged_run_passes_with_nothing_moved():
    s = summary(("agree", 0.95, MET), ("quarantine", 0.05, RECORD_ONLY))
    g = gate(s, s)
    assert g.passed and g.moved == []


def test_drop_within_margin_moves_but_passes_and_beyond_margin_fails():
    g = gate(summary(("agree", 0.95, MET)), summary(("agree", 0.93, MET)))
    assert g.passed and [m.metric for m in g.moved] == ["agree"]
    g = gate(summary(("agree", 0.95, MET)), summary(("agree", 0.92, MET)))
    assert not g.passed and g.failures[0].metric == "agree" and "3.0%p" in g.failures[0].reason


def test_falling_below_the_criterion_fails_even_within_margin():
    g = gate(summary(("agree", 0.905, MET)), summary(("agree", 0.895, NOT_MET)))
    assert [m.metric for m in g.failures] == ["agree"]
    g = gate(summary(("agree", 0.9, MET)), summary(("agree", None, NO_DATA)))
    assert [m.metric for m in g.failures] == ["agree"]


def test_already_below_criterion_fails_only_on_a_further_drop():
    assert gate(summary(("agree", 0.86, NOT_MET)), summary(("agree", 0.85, NOT_MET))).passed
    assert not gate(summary(("agree", 0.86, NOT_MET)), summary(("agree", 0.80, NOT_MET))).passed


def test_record_only_metrics_are_listed_but_never_fail():
    g = gate(summary(("quarantine", 0.05, RECORD_ONLY)), summary(("quarantine", 0.50, RECORD_ONLY)))
    assert g.passed and g.moved[0].metric == "quarantine"
    g = gate(summary(("recall", 0.9, RECORD_ONLY)), summary(("recall", 0.1, RECORD_ONLY)))
    assert g.passed


def test_a_gated_metric_missing_from_the_run_fails_but_a_missing_domain_is_skipped():
    g = gate(summary(("agree", 0.95, MET), ("checks", 1.0, MET)), summary(("agree", 0.95, MET)))
    assert [m.metric for m in g.failures] == ["checks"]
    g = gate({"domains": {**summary(("agree", 0.95, MET))["domains"], **summary(("x", 1.0, MET), domain="e")["domains"]}},
             summary(("agree", 0.95, MET)))
    assert g.passed and g.skipped_domains == ["e"]


def test_gate_markdown_names_failed_metrics():
    g = gate(summary(("판정 일치", 0.95, MET), domain="live_pick"), summary(("판정 일치", 0.80, NOT_MET), domain="live_pick"))
    text = runner.render_gate(g)
    assert "실패" in text and "live_pick · 판정 일치" in text


def test_baseline_that_is_not_a_summary_is_refused(tmp_path):
    bad = tmp_path / "b.json"
    bad.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match="summary.json"):
        runner.load_summary(bad)


def test_gate_statuses_are_the_reports_statuses():
    assert (runner.MET, runner.NOT_MET, runner.NO_DATA) == (MET, NOT_MET, NO_DATA)
