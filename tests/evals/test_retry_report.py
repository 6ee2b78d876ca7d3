"""The retry report: golden agreement, mismatch counts per verdict, and the baseline sweep."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.render import render_html, render_markdown
from evals.retry import build_report, diverging_step, load_golden, mismatch_counts
from rules.retry import verdicts as V
from rules.retry.checks import run_checks
from rules.retry.config import load_config
from rules.retry.engine import judge, records
from rules.retry.normalise import load_dir
from rules.retry.sweep import sweep

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "seeds" / "retry"
CFG = load_config()


@pytest.fixture(scope="module")
def sample():
    norm = load_dir(SAMPLE, CFG)
    rows = records(judge(norm.tables["interaction_events"], norm.tables["surface_catalog"], CFG))
    report = build_report(rows, load_golden(SAMPLE / "golden.jsonl"), checks=run_checks(norm, rows, CFG),
                          quarantine=norm.quarantine, reconciliation=norm.reconciliation(), config=CFG, scope="sample")
    return rows, report


def row(verdict, top, base, surface="s"):
    return {"event_id": "E", "surface_key": surface, "verdict": verdict, "max_overlap": top, "surface_baseline": base}


def test_golden_agreement_and_the_deliberate_disagreements(sample):
    _, report = sample
    metrics = {m.name: m for m in report.metrics}
    assert metrics["판정 일치"].ratio.format() == "12 / 14 (85.7%)"
    assert metrics["다시 시도 여부 일치"].ratio.format() == "12 / 14 (85.7%)"
    assert metrics["자동 검증 통과"].ratio.format() == "14 / 14 (100.0%)"
    assert [(w.id, w.gold, w.predicted) for w in report.wrong_cases] == [
        ("EV-1002", V.REWORDED_RETRY, V.ONE_SHOT), ("EV-1302", V.SURFACE_HOP, V.ONE_SHOT)]
    assert report.verdict_counts == {V.ONE_SHOT: 24, V.EXACT_RETRY: 4, V.REWORDED_RETRY: 8, V.SURFACE_HOP: 5}
    assert report.kappa is not None and report.checks_passed


def test_mismatch_counts_per_verdict():
    pairs = [("a", V.ONE_SHOT, V.ONE_SHOT), ("b", V.REWORDED_RETRY, V.ONE_SHOT), ("c", V.SURFACE_HOP, V.REWORDED_RETRY)]
    got = {m["verdict"]: m for m in mismatch_counts(pairs)}
    assert got[V.ONE_SHOT] == {"verdict": V.ONE_SHOT, "gold": 1, "predicted": 2, "agreed": 1, "missed": 0, "extra": 1}
    assert (got[V.REWORDED_RETRY]["missed"], got[V.REWORDED_RETRY]["extra"]) == (1, 1)
    assert (got[V.SURFACE_HOP]["missed"], got[V.EXACT_RETRY]["gold"]) == (1, 0)


def test_diverging_step_is_the_first_rule_either_side_names():
    assert diverging_step(V.ONE_SHOT, V.EXACT_RETRY).startswith("같은 말")
    assert diverging_step(V.SURFACE_HOP, V.REWORDED_RETRY).startswith("기준선")
    assert diverging_step(V.ONE_SHOT, V.SURFACE_HOP) == "접점 이동 단계"


def test_the_sweep_of_the_sample_by_hand(sample):
    rows, report = sample
    # Hand count (seeds/retry/README): 4 exact retries at every step, plus reworded retries.
    want = {"1/2": 12, "3/5": 12, "7/10": 12, "4/5": 11, "9/10": 11, "1": 8, "11/10": 8, "6/5": 8, "13/10": 8, "7/5": 6, "3/2": 6}
    assert {str(s.factor): s.reworded for s in report.sweep} == want
    assert all(s.exact == 4 for s in report.sweep)
    one = next(s for s in report.sweep if s.factor == 1)
    assert one.by_surface == {"chat": 1, "rewrite": 1, "search": 0, "summarize": 6, "translate": 4, "upload": 0}


def test_the_sweep_is_strict_and_exact_at_ties():
    # 1/5 against 4/5 × 1/4 = 1/5: equal, not a retry; 0.2 × 1.5 against 0.3 likewise.
    rows = [row(V.ONE_SHOT, float(Fraction(1, 5)), 0.25), row(V.ONE_SHOT, 0.3, 0.2), row(V.EXACT_RETRY, 0, 1)]
    steps = sweep(rows, [Fraction(4, 5), Fraction(3, 2), Fraction(1, 2)])
    assert [(s.exact, s.reworded) for s in steps] == [(1, 1), (1, 0), (1, 2)]


def test_the_sweep_skips_rows_it_cannot_read():
    rows = [None, {"verdict": "??"}, row(V.REWORDED_RETRY, None, None), row(V.REWORDED_RETRY, 0.5, 0.25)]
    assert [(s.exact, s.reworded) for s in sweep(rows, [Fraction(1)])] == [(0, 1)]


def _sweep_row_by_row(rows, factors):
    """The sweep one row at a time, as the rule reads: the reference for the grouped count."""
    from rules.retry.display import as_fraction

    out = []
    for factor in factors:
        exact = reworded = 0
        per = {}
        for r in rows:
            if not isinstance(r, dict) or r.get("verdict") not in V.ORDER or not isinstance(r.get("surface_key"), str):
                continue
            base, top = as_fraction(r.get("surface_baseline")), as_fraction(r.get("max_overlap"))
            if base is None:
                continue
            per.setdefault(r["surface_key"], 0)
            if r["verdict"] == V.EXACT_RETRY:
                exact += 1
            elif top is not None and top > factor * base:
                reworded += 1
            else:
                continue
            per[r["surface_key"]] += 1
        out.append((exact, reworded, dict(sorted(per.items()))))
    return out


_NUMBERS = [None, True, 0, 1, 1.0, -0.5, 0.2, 0.25, 0.3, 1 / 3, 2 / 3, 0.5, "0.5", [0.5]]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([*V.ORDER, "??"]), st.sampled_from(_NUMBERS), st.sampled_from(_NUMBERS),
                          st.sampled_from(["a", "b", "c"])), max_size=60))
def test_the_grouped_sweep_counts_as_the_row_by_row_sweep(cases):
    rows = [row(v, top, base, surface) for v, top, base, surface in cases]
    factors = [Fraction(k, 10) for k in range(5, 16)]
    assert [(s.exact, s.reworded, s.by_surface) for s in sweep(rows, factors)] == _sweep_row_by_row(rows, factors)


def test_renders_and_serialises_with_the_sweep_and_escapes_log_text(sample):
    rows, _ = sample
    tricky = [dict(r) for r in rows]
    tricky[0]["reason"] = "<script>alert(1)</script> | 다시입니다."
    report = build_report(tricky, [{"event_id": tricky[0]["event_id"], "verdict": V.EXACT_RETRY}], checks=[],
                          quarantine=None, reconciliation={}, config=CFG, scope="x")
    md, page = render_markdown(report), render_html(report)
    assert "<script>alert" not in md and "<script>alert" not in page
    data = json.loads(json.dumps(report.to_dict(), ensure_ascii=False))
    assert data["baseline_sweep"][0]["factor"] == "1/2" and [s["heading"] for s in data["sections"]] == ["판정별 어긋남", "기준선 스윕"]


def test_without_golden_labels_the_report_still_has_checks_and_sweep(sample):
    rows, _ = sample
    report = build_report(rows, None, checks=[], quarantine=None, reconciliation={}, config=CFG, scope="x")
    assert not report.has_golden and report.sweep
    assert [h for h, _ in report.extra_sections] == ["기준선 스윕"]
    assert "판정 일치" not in {m.name for m in report.metrics}
