"""The `verdicts` command line on the retry sample: judge, validate and agree.

Commands run in-process through `orchestration.cli.main`.
"""

from __future__ import annotations

import copy
import json
import re
from fractions import Fraction

import pytest

from rules.retry import verdicts as V
from tests.cli.helpers import assert_quarantine_matches, copy_sample, domain_paths, judge_sample, read_jsonl, run, write_jsonl

SAMPLE, GOLDEN, FIXTURES = domain_paths("retry")
DATASETS = ("interaction_events", "surface_catalog")
CHECK_IDS = ["schema", "1.verdict_enum", "2.required_fields", "3.surface_key", "4.baseline", "5.max_overlap",
             "6.ranges", "7.evidence_fields", "8.evidence_values", "9.exact_retry", "10.reworded_retry",
             "11.surface_hop", "12.polite", "recompute"]


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    return judge_sample(tmp_path_factory.mktemp("judged"), "retry", SAMPLE)


# -- judge -------------------------------------------------------------------------------------


def test_judge_exits_0_when_rows_were_only_quarantined(judged):
    assert judged["code"] == 0
    assert "interaction_events: 52 raw = 41 normalised + 11 quarantined" in judged["stderr"]
    assert "surface_catalog: 9 raw = 6 normalised + 3 quarantined" in judged["stderr"]
    assert re.search(r"^\s+8\s+reworded_retry$", judged["stderr"], re.M)


def test_judge_output_reproduces_the_oracle(judged):
    expected = {e["event_id"]: e for e in read_jsonl(FIXTURES / "expected.jsonl")}
    got = {r["event_id"]: r for r in judged["rows"]}
    assert len(got) == len(judged["rows"]) == len(expected)
    for k, e in expected.items():
        r = got[k]
        assert (r["verdict"], r["surface_key"], r["matched_event_id"]) == (e["verdict"], e["surface_key"], e["matched_event_id"])
        assert r["surface_baseline"] == float(Fraction(e["surface_baseline"]))
        assert r["max_overlap"] == (None if e["max_overlap"] is None else float(Fraction(e["max_overlap"])))


def test_judge_reproduces_the_seed_examples(judged):
    got = {r["event_id"]: r for r in judged["rows"]}
    for ex in json.loads((FIXTURES / "seed_examples.json").read_text(encoding="utf-8")):
        r = got[ex["event_id"]]
        assert (r["verdict"], r["surface_key"], r["session_id"], r["matched_event_id"]) == (
            ex["verdict"], ex["surface_key"], ex["session_id"], ex["matched_event_id"])
        assert round(r["surface_baseline"], 2) == ex["surface_baseline"]
        assert (r["max_overlap"] if r["max_overlap"] is None else round(r["max_overlap"], 2)) == ex["max_overlap"]
    # 0 and 1 are written as the seed writes them.
    text = judged["out"].read_text(encoding="utf-8")
    assert '"event_id":"EV-0102"' in text and '"max_overlap":1,' in text and '"surface_baseline":0,' in text


def test_judge_writes_the_quarantined_rows_with_reason_codes(judged):
    q = read_jsonl(judged["q"])
    assert_quarantine_matches(q, read_jsonl(FIXTURES / "expected_quarantine.jsonl"))
    assert all(r["reason"].strip() and r["raw"] for r in q)


def test_judge_one_day_and_the_days_partition_the_input(tmp_path, judged):
    ids = []
    for day, n in (("2026-09-21", 39), ("2026-09-22", 2)):
        out = tmp_path / f"{day}.jsonl"
        assert run("judge", "retry", "--input", SAMPLE, "--out", out, "--day", day)[0] == 0
        rows = read_jsonl(out)
        assert len(rows) == n
        ids += [r["event_id"] for r in rows]
        assert run("validate", "retry", "--input", SAMPLE, "--verdicts", out, "--day", day)[0] == 0
    assert sorted(ids) == sorted(r["event_id"] for r in judged["rows"])


def test_the_baseline_follows_the_judged_scope(tmp_path):
    # One surface over two days: each day's baseline is its own median, the whole input's another.
    events = [
        {"event_id": f"E-{i}", "session_id": f"s{i}", "surface_key_raw": "summarize", "input_text": text,
         "sent_at": f"2026-09-2{day}T10:00:0{i}"}
        for i, (day, text) in enumerate([(1, "가 나"), (1, "가 다"), (2, "라 마"), (2, "라 바")])
    ]
    write_jsonl(tmp_path / "interaction_events.jsonl", events)
    write_jsonl(tmp_path / "surface_catalog.jsonl", [{"surface_key": "summarize", "surface_name": "요약", "default_baseline": None}])
    base = {}
    for day in (None, "2026-09-21"):
        out = tmp_path / f"{day}.jsonl"
        assert run("judge", "retry", "--input", tmp_path, "--out", out, *(["--day", day] if day else []))[0] == 0
        base[day] = {r["surface_baseline"] for r in read_jsonl(out)}
    assert base["2026-09-21"] == {float(Fraction(1, 3))}
    assert base[None] == {0}  # six pairs: 1/3, 1/3 and four zeros


def test_judge_with_a_missing_dataset_or_column_exits_2_naming_it(tmp_path):
    copy_sample(SAMPLE, tmp_path, ["surface_catalog"])
    code, _, err = run("judge", "retry", "--input", tmp_path, "--out", tmp_path / "o.jsonl")
    assert code == 2 and "interaction_events.jsonl" in err
    write_jsonl(tmp_path / "interaction_events.jsonl", [{"event_id": "E-1", "session_id": "s", "surface_key_raw": "chat",
                                                          "sent_at": "2026-09-21T10:00:00"}])
    code, _, err = run("judge", "retry", "--input", tmp_path, "--out", tmp_path / "o.jsonl")
    assert code == 2 and "input_text" in err


# -- validate ----------------------------------------------------------------------------------


def test_validate_passes_on_the_judge_output(judged):
    code, stdout, _ = run("validate", "retry", "--input", SAMPLE, "--verdicts", judged["out"])
    assert code == 0, stdout
    assert "14 passed, 0 failed" in stdout


def test_validate_json_lists_every_check(judged):
    code, stdout, _ = run("validate", "retry", "--input", SAMPLE, "--verdicts", judged["out"], "--json")
    assert code == 0
    assert [r["id"] for r in json.loads(stdout)] == CHECK_IDS


def _set(event_id, **changes):
    def inject(rows):
        next(r for r in rows if r and r["event_id"] == event_id).update(changes)
    return inject


@pytest.mark.parametrize(("name", "inject", "check"), [
    ("equal is not above", _set("EV-0602", verdict=V.REWORDED_RETRY), "10.reworded_retry"),
    ("baseline", _set("EV-0101", surface_baseline=0.25), "4.baseline"),
    ("hop over two surfaces", _set("EV-1302", verdict=V.SURFACE_HOP), "11.surface_hop"),
    ("impolite", _set("EV-0101", reason="요약 요청."), "12.polite"),
    ("raw key", lambda rows: rows[-1]["evidence"][1].update(value="rewrite "), "8.evidence_values"),
    ("dropped row", lambda rows: rows.pop(0), "recompute"),
])
def test_validate_exits_1_naming_the_failing_check(judged, tmp_path, name, inject, check):
    rows = copy.deepcopy(judged["rows"])
    inject(rows)
    code, stdout, _ = run("validate", "retry", "--input", SAMPLE, "--verdicts", write_jsonl(tmp_path / "v.jsonl", rows))
    assert code == 1
    assert re.search(rf"^FAIL\s+{re.escape(check)}\b", stdout, re.M), stdout


def test_validate_accepts_the_seeds_rounding_of_the_numbers(judged, tmp_path):
    rows = copy.deepcopy(judged["rows"])
    for r in rows:
        r["surface_baseline"] = round(r["surface_baseline"], 2)
        r["max_overlap"] = None if r["max_overlap"] is None else round(r["max_overlap"], 2)
    assert run("validate", "retry", "--input", SAMPLE, "--verdicts", write_jsonl(tmp_path / "v.jsonl", rows))[0] == 0


# -- agree -------------------------------------------------------------------------------------


def test_agree_json_has_the_metrics_mismatches_and_sweep(judged, tmp_path):
    out = tmp_path / "r.json"
    code, _, err = run("agree", "retry", "--verdicts", judged["out"], "--golden", GOLDEN, "--input", SAMPLE, "--out", out)
    assert code == 0 and "12 / 14" in err
    data = json.loads(out.read_text(encoding="utf-8"))
    metrics = {m["name"]: m for m in data["metrics"]}
    assert metrics["판정 일치"]["ratio"]["display"] == "12 / 14 (85.7%)"
    assert metrics["자동 검증 통과"]["ratio"]["display"] == "14 / 14 (100.0%)"
    assert {w["id"]: w["step"] for w in data["wrong_cases"]} == {
        "EV-1002": "기준선 단계 (평소 겹침과 비교)", "EV-1302": "접점 이동 단계"}
    by_verdict = {m["verdict"]: m for m in data["mismatch_by_verdict"]}
    assert (by_verdict["one_shot"]["extra"], by_verdict["reworded_retry"]["missed"], by_verdict["surface_hop"]["missed"]) == (2, 1, 1)
    sweep = {s["factor"]: s["retries"] for s in data["baseline_sweep"]}
    assert sweep["1"] == 12 and sweep["1/2"] == 16 and sweep["3/2"] == 10


def test_agree_markdown_and_html(judged, tmp_path):
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    for out in (md, html):
        assert run("agree", "retry", "--verdicts", judged["out"], "--golden", GOLDEN, "--input", SAMPLE, "--out", out)[0] == 0
    text = md.read_text(encoding="utf-8")
    assert "## 기준선 스윕" in text and "## 판정별 어긋남" in text and "| ×1 | 4 | 8 | 12 | +0 |" in text
    page = html.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "baseline_sweep" in page
