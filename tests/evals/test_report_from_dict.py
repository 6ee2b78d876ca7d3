"""A report read back from its JSON form (`Report.from_dict`) is the report that wrote it: the form
the nightly run stores a day's report in, which the admin pages show."""

from __future__ import annotations

import json

import pytest

from evals import domains
from evals.report import report_from_dict
from tests.conftest import SEEDS


@pytest.mark.parametrize("name", ["persona", "live_pick", "retry", "handoff"])
def test_a_report_read_back_from_its_json_is_the_same_report(name):
    d = domains.get(name)
    folder = SEEDS / name
    judged = d.judge_dir(folder)
    checks, gated = d.check_dir(folder, judged.rows)
    golden = d.load_golden(folder / "golden.jsonl")
    report = d.report(judged.rows, golden, checks, gated.quarantine, gated.reconciliation, scope=name, judged=gated.normalised,
                      golden_path=folder / "golden.jsonl", input_dir=folder)
    written = json.loads(json.dumps(report.to_dict(), ensure_ascii=False))
    back = report_from_dict(written)
    assert type(back) is type(report)
    assert json.loads(json.dumps(back.to_dict(), ensure_ascii=False)) == written
    assert back.wrong_cases == report.wrong_cases and back.checks == report.checks and back.labelled == [tuple(p) for p in report.labelled]
    assert (back.extra_sections, back.step_hints, back.judged_count) == (report.extra_sections, report.step_hints, report.judged_count)
    assert [(m.name, m.value_text(), m.interval_text(), m.status) for m in back.metrics] == \
        [(m.name, m.value_text(), m.interval_text(), m.status) for m in report.metrics]
    assert back.confusion.equals(report.confusion) and back.kappa == report.kappa


def test_only_a_report_kind_is_read_back():
    with pytest.raises(ValueError):
        report_from_dict({"kind": "os:system"})
    with pytest.raises(ValueError):
        report_from_dict({"kind": "evals.stats:Ratio"})
