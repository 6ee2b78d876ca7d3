"""The next steps are written from the run's figures and rows: which metric missed its criterion
and by how much, where the wrong cases diverged (ids, deciding values, what governs the step), a
failed check with its ids, thin denominators only where they are golden labels, the quarantine by
reason and line, and the manual checks still open. Read from the generated Markdown and HTML."""

from __future__ import annotations

import copy
import html
import json

from evals import domains
from tests.conftest import SEEDS
from tests.evals.reports import forms, html_text, make_report, md_section


def steps_of(report) -> list[str]:
    md, page, _ = forms(report)
    lines = [html.unescape(x.split(". ", 1)[1]) for x in md_section(md, "다음 할 일").splitlines() if x[:1].isdigit()]
    text = html_text(page)
    assert all(" ".join(x.split()) in text for x in lines)  # the page says the same
    return lines


def test_a_missed_criterion_names_its_figure_and_the_steps_of_its_wrong_cases():
    _, report = make_report("retry")  # the sample: 12 / 14 against 90%
    steps = steps_of(report)
    missed = next(s for s in steps if s.startswith("판정 일치 12 / 14 (85.7%)가 기준(90% 이상)에 못 미칩니다"))
    assert "기준선 단계 (평소 겹침과 비교) 1건" in missed and "접점 이동 단계 1건" in missed
    baseline = next(s for s in steps if s.startswith("기준선 단계 (평소 겹침과 비교)에서 1건이 갈라졌습니다: EV-1002"))
    assert "max_overlap=0.2, surface_baseline=0.25" in baseline and "기준선 스윕" in baseline
    assert not any("라벨을" in s and "더 모읍니다" in s for s in steps)  # 14 labels: not thin


def test_a_count_of_checks_is_not_a_reason_to_collect_labels():
    _, report = make_report("persona", golden=False)
    checks = next(m for m in report.metrics if m.name == "자동 검증 통과")
    assert checks.ratio.denominator < 10  # nine checks: the old report advised more labels for them
    steps = steps_of(report)
    assert not any("라벨" in s for s in steps) and not any(f"분모가 {checks.ratio.denominator}" in s for s in steps)


def test_thin_golden_labels_ask_for_more_labels_by_their_own_count(tmp_path):
    labels = (SEEDS / "retry" / "golden.jsonl").read_text(encoding="utf-8").splitlines()[:5]
    few = tmp_path / "golden.jsonl"
    few.write_text("\n".join(labels) + "\n", encoding="utf-8")
    _, report = make_report("retry", golden_path=few)
    steps = steps_of(report)
    thin = next(s for s in steps if s.startswith("판정 일치의 분모 5건"))
    assert "라벨을 5건 이상 더 모읍니다" in thin


def test_a_failed_check_comes_first_with_its_ids():
    d = domains.get("live_pick")
    judged = d.judge_dir(SEEDS / "live_pick")
    rows = copy.deepcopy(judged.rows)
    row = next(r for r in rows if r["msg_id"] == "MSG-20260908-1401")
    row["rank_in_window"] = 7  # no longer what the ranking gives
    checks, gated = d.check_dir(SEEDS / "live_pick", rows)
    report = d.report(rows, None, checks, gated.quarantine, gated.reconciliation, scope="tampered", judged=gated.normalised)
    steps = steps_of(report)
    failed = [c for c in report.checks if not c.passed]
    assert failed and steps[0].startswith(f"자동 검증 {failed[0].id}(") and "MSG-20260908-1401" in steps[0]


def test_quarantined_rows_are_named_by_reason_and_line():
    _, report = make_report("live_pick")
    quarantine = next(s for s in steps_of(report) if s.startswith("격리된 행 9건"))
    assert "live_chat duplicate_id 1" in quarantine and "live_chat:48" in quarantine


def test_manual_checks_still_open_are_named_with_what_is_left_and_split_items():
    _, report = make_report("live_pick")
    ids = report.manual["live_pick.1"]["ids"]
    decisions = {"live_pick.1": {ids[0]: {"kim": {"decision": "agree"}, "lee": {"decision": "disagree"}},
                                 ids[1]: {"kim": {"decision": "agree"}, "lee": {"decision": "agree"}}}}
    _, report = make_report("live_pick", decisions=decisions)
    steps = steps_of(report)
    open_ = next(s for s in steps if s.startswith("live_pick.1 "))
    assert "표본 20건 가운데 다 본 항목 2건(항목당 검토자 2명)" in open_
    assert any(s.startswith(f"live_pick.1: 검토자 의견이 갈린 항목 {ids[0]}") for s in steps)
    data = json.loads(json.dumps(report.to_dict()))
    assert data["reviewers"]["live_pick.1"]["split"] == [ids[0]]
