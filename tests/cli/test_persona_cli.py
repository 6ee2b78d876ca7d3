"""The `verdicts` command line on the persona sample: judge, validate, compare, review, agree.

Commands run in-process through `orchestration.cli.main`.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from rules.persona import verdicts as V
from tests.cli.helpers import assert_quarantine_matches, copy_sample, domain_paths, judge_sample, read_jsonl, run, write_jsonl

SAMPLE, GOLDEN, FIXTURES = domain_paths("persona")
DATASETS = ("profiles", "turns")
CHECK_IDS = ["schema", "1.code_enum", "2.required_filled", "3.stated_age", "4.evidence_fields", "5.evidence_values",
             "6.forbidden_topic", "7.polite", "recompute"]
DELIBERATE = {  # README "Golden labels": rules vs planner, and the step where they part
    "TN-9051": (V.CONSISTENT, V.AGE_CONFLICT),
    "TN-9059": (V.CONSISTENT, V.FORBIDDEN_TOPIC),
    "TN-9039": (V.CONSISTENT, V.JOB_CONFLICT),
    "TN-9042": (V.FORBIDDEN_TOPIC, V.CONSISTENT),
}


def day_of_turn() -> dict[str, str]:
    days = {}
    for line in (SAMPLE / "turns.jsonl").read_text(encoding="utf-8").splitlines():
        t = json.loads(line)
        days.setdefault(t["turn_no"], t["created_at"][:10])
    return days


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    return judge_sample(tmp_path_factory.mktemp("persona_judged"), "persona", SAMPLE)


@pytest.fixture(scope="module")
def expected() -> dict[str, dict]:
    return {r["turn_no"]: r for r in read_jsonl(FIXTURES / "expected.jsonl")}


def row_of(rows: list, turn_no: str) -> dict:
    found = [r for r in rows if r["turn_no"] == turn_no]
    assert len(found) == 1
    return found[0]


# -- judge -------------------------------------------------------------------------------------


def test_judge_exits_0_and_reports_reconciled_counts(judged):
    assert judged["code"] == 0
    assert "profiles: 15 raw = 12 normalised + 3 quarantined" in judged["stderr"]
    assert "turns: 472 raw = 469 normalised + 3 quarantined" in judged["stderr"]


def test_judge_reproduces_the_oracle(judged, expected):
    rows = judged["rows"]
    assert len(rows) == len(expected) == 469
    got = {r["turn_no"]: r for r in rows}
    assert len(got) == len(rows)
    assert {t: (r["profile_no"], r["persona_code"]) for t, r in got.items()} == {
        t: (e["profile_no"], e["persona_code"]) for t, e in expected.items()}


def test_judge_rows_carry_every_output_column(judged):
    for r in judged["rows"]:
        assert set(r) == {"check_id", "turn_no", "profile_no", "persona_code", "evidence", "summary", "hedge"}


def test_judge_writes_the_quarantine(judged):
    q = read_jsonl(judged["q"])
    assert_quarantine_matches(q, read_jsonl(FIXTURES / "expected_quarantine.jsonl"))
    for r in q:
        assert Path(r["file"]).name == f"{r['dataset']}.jsonl" and r["reason"].strip() and r["raw"].strip()


def test_judge_again_replaces_the_output(judged, tmp_path):
    out = tmp_path / "v.jsonl"
    for _ in range(2):
        assert run("judge", "persona", "--input", SAMPLE, "--out", out)[0] == 0
    assert read_jsonl(out) == judged["rows"]


@pytest.mark.parametrize(("day", "version", "count"), [("2026-10-05", "p12", 200), ("2026-10-06", "p13", 200),
                                                       ("2026-10-04", None, 69)])
def test_judge_one_day(tmp_path, expected, day, version, count):
    out = tmp_path / "day.jsonl"
    assert run("judge", "persona", "--input", SAMPLE, "--out", out, "--day", day)[0] == 0
    rows = read_jsonl(out)
    assert len(rows) == count
    days = day_of_turn()
    assert {r["turn_no"] for r in rows} == {t for t in expected if days[t] == day}
    for r in rows:
        assert (r["profile_no"], r["persona_code"]) == (expected[r["turn_no"]]["profile_no"], expected[r["turn_no"]]["persona_code"])
    if version == "p12":
        assert all(re.fullmatch(r"TN-12\d{3}", r["turn_no"]) for r in rows)
    assert run("validate", "persona", "--input", SAMPLE, "--verdicts", out, "--day", day)[0] == 0
    code, stdout, _ = run("validate", "persona", "--input", SAMPLE, "--verdicts", out)
    assert code == 1 and re.search(r"^FAIL\s+recompute\b", stdout, re.M)


def test_judge_a_missing_dataset_exits_2_naming_the_file(tmp_path):
    copy_sample(SAMPLE, tmp_path, ["profiles"])
    code, _, stderr = run("judge", "persona", "--input", tmp_path, "--out", tmp_path / "v.jsonl")
    assert code == 2 and "turns.jsonl" in stderr


def test_judge_a_file_without_a_required_column_exits_2_naming_file_and_column(tmp_path):
    copy_sample(SAMPLE, tmp_path, ["profiles"])
    rows = [{k: v for k, v in json.loads(line).items() if k != "created_at"}
            for line in (SAMPLE / "turns.jsonl").read_text(encoding="utf-8").splitlines()[:5]]
    write_jsonl(tmp_path / "turns.jsonl", rows)
    code, _, stderr = run("judge", "persona", "--input", tmp_path, "--out", tmp_path / "v.jsonl")
    assert code == 2 and "turns.jsonl" in stderr and "created_at" in stderr


# -- validate ----------------------------------------------------------------------------------


def test_validate_passes_on_the_judged_output(judged):
    code, stdout, _ = run("validate", "persona", "--input", SAMPLE, "--verdicts", judged["out"])
    assert code == 0
    for check in CHECK_IDS:
        assert re.search(rf"^PASS\s+{re.escape(check)}\b", stdout, re.M), check
    assert "9 passed, 0 failed" in stdout


def test_validate_json_lists_every_check(judged):
    code, stdout, _ = run("validate", "persona", "--input", SAMPLE, "--verdicts", judged["out"], "--json")
    assert code == 0
    data = json.loads(stdout)
    assert [r["id"] for r in data] == CHECK_IDS and all(r["passed"] for r in data)


def _wrong_code(rows):
    row_of(rows, "TN-9002")["persona_code"] = V.CONSISTENT


def _evidence_value(rows):
    next(e for e in row_of(rows, "TN-9002")["evidence"] if e["field"] == "stated_job")["value"] = "플로리스트"


def _evidence_field(rows):
    row_of(rows, "TN-9002")["evidence"].append({"source": "turn", "field": "mood", "value": "기쁨"})


def _impolite(rows):
    row_of(rows, "TN-9002")["summary"] = "직업이 다르다."


def _non_enum(rows):
    row_of(rows, "TN-9002")["persona_code"] = "job_mismatch"


@pytest.mark.parametrize(("fault", "checks"), [
    (_wrong_code, ["recompute"]),
    (_evidence_value, ["5.evidence_values"]),
    (_evidence_field, ["4.evidence_fields"]),
    (_impolite, ["7.polite"]),
    (_non_enum, ["1.code_enum", "schema"]),
], ids=["wrong code", "evidence value", "evidence field", "impolite summary", "non-enum code"])
def test_validate_exits_1_naming_the_check_and_the_turn(judged, tmp_path, fault, checks):
    rows = copy.deepcopy(judged["rows"])
    fault(rows)
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    code, stdout, _ = run("validate", "persona", "--input", SAMPLE, "--verdicts", path)
    assert code == 1
    for check in checks:
        m = re.search(rf"^FAIL\s+{re.escape(check)}\b.*\n\s+1 failing: (.*)$", stdout, re.M)
        assert m, (check, stdout)
        assert "TN-9002" in m.group(1)
    # The other checks still show their result.
    assert len(re.findall(r"^(PASS|FAIL)\s", stdout, re.M)) == len(CHECK_IDS)


def test_validate_a_missing_verdict_file_exits_2(tmp_path):
    code, _, stderr = run("validate", "persona", "--input", SAMPLE, "--verdicts", tmp_path / "nope.jsonl")
    assert code == 2 and "nope.jsonl" in stderr


# -- compare -----------------------------------------------------------------------------------


def test_compare_prints_rates_intervals_and_mcnemar():
    code, stdout, _ = run("compare", "persona", "--input", SAMPLE, "--a", "p12", "--b", "p13")
    assert code == 0
    assert "27 / 196 (13.8%)" in stdout and "12 / 197 (6.1%)" in stdout
    for k, n in ((27, 196), (12, 197)):
        low, high = proportion_confint(k, n, method="wilson")
        assert f"[{low * 100:.1f}%, {high * 100:.1f}%]" in stdout
    assert "McNemar" in stdout
    p = mcnemar([[4, 22], [7, 161]], exact=True).pvalue
    assert f"{p:.4g}" in stdout
    assert "job_conflict → consistent: 9" in stdout


def test_compare_writes_json(tmp_path):
    out = tmp_path / "cmp" / "X.json"
    code, _, _ = run("compare", "persona", "--input", SAMPLE, "--a", "p12", "--b", "p13", "--out", out)
    assert code == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert (data["rate_a"]["numerator"], data["rate_a"]["denominator"]) == (27, 196)
    assert (data["rate_b"]["numerator"], data["rate_b"]["denominator"]) == (12, 197)
    assert data["table"] == [[4, 22], [7, 161]]
    assert data["p_value"] == pytest.approx(mcnemar([[4, 22], [7, 161]], exact=True).pvalue)
    assert "McNemar" in data["test"]


def test_compare_writes_markdown(tmp_path):
    out = tmp_path / "X.md"
    code, stdout, _ = run("compare", "persona", "--input", SAMPLE, "--a", "p12", "--b", "p13", "--out", out)
    assert code == 0
    assert out.read_text(encoding="utf-8").strip() == stdout.strip()


@pytest.mark.parametrize("args", [("--a", "p12", "--b", "p99"), ("--a", "p98", "--b", "p13"),
                                  ("--a", "p12", "--b", "p13", "--character", "CH-001")])
def test_compare_an_unknown_version_exits_2(args):
    code, stdout, stderr = run("compare", "persona", "--input", SAMPLE, *args)
    assert code == 2
    assert stderr.startswith("verdicts:") and stdout == ""


# -- review ------------------------------------------------------------------------------------


def test_review_writes_twenty_rows_with_blank_reviewer_columns(tmp_path):
    out = tmp_path / "R.jsonl"
    code, _, stderr = run("review", "persona", "--input", SAMPLE, "--out", out)
    assert code == 0
    rows = read_jsonl(out)
    assert len(rows) == 20
    assert all(r["reviewer_decision"] is None and r["reviewer_note"] is None for r in rows)
    assert all(r["cue_phrase"] and r["cue_phrase"] in r["user_text"] for r in rows)
    assert "TN-9058" not in {r["turn_no"] for r in rows} and "TN-9071" not in {r["turn_no"] for r in rows}
    assert "20 of 40" in stderr
    # The same input gives the same queue.
    again = tmp_path / "R2.jsonl"
    assert run("review", "persona", "--input", SAMPLE, "--out", again)[0] == 0
    assert read_jsonl(again) == rows


def test_review_markdown(tmp_path):
    out_md, out_jsonl = tmp_path / "R.md", tmp_path / "R.jsonl"
    assert run("review", "persona", "--input", SAMPLE, "--out", out_md)[0] == 0
    assert run("review", "persona", "--input", SAMPLE, "--out", out_jsonl)[0] == 0
    md = out_md.read_text(encoding="utf-8")
    assert md.startswith("# ") and "40" in md and "reviewer_decision" in md
    for r in read_jsonl(out_jsonl):
        assert r["turn_no"] in md


# -- agree -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def agreement(judged, tmp_path_factory):
    out = tmp_path_factory.mktemp("agree") / "report.json"
    code, _, stderr = run("agree", "persona", "--verdicts", judged["out"], "--golden", GOLDEN, "--out", out, "--input", SAMPLE)
    return code, stderr, json.loads(out.read_text(encoding="utf-8"))


def test_agree_excluded_turns_are_listed_and_out_of_the_denominator(agreement, judged):
    code, stderr, report = agreement
    assert code == 0
    golden = read_jsonl(GOLDEN)
    codes = {r["turn_no"]: r["persona_code"] for r in judged["rows"]}
    labelled_excluded = {g["turn_no"] for g in golden if codes[g["turn_no"]] in V.EXCLUDED}
    assert len(golden) == 200 and len(labelled_excluded) == 11
    metric = next(m for m in report["metrics"] if m["name"] == "판정 일치")
    assert (metric["ratio"]["numerator"], metric["ratio"]["denominator"]) == (185, 189)
    assert "185 / 189" in stderr
    listed = {x["id"]: x for x in report["excluded"]}
    assert set(listed) == {t for t, c in codes.items() if c in V.EXCLUDED}
    assert len(listed) == 19
    for x in listed.values():
        assert x["code"] == codes[x["id"]] and x["reason"].strip()
    not_judged = {g["id"]: g["reason"] for g in report["golden_not_judged"]}
    assert set(not_judged) == labelled_excluded
    for t, reason in not_judged.items():
        assert codes[t] in reason


def test_agree_wrong_cases_are_exactly_the_deliberate_disagreements(agreement):
    _, _, report = agreement
    wrong = {w["id"]: w for w in report["wrong_cases"]}
    assert set(wrong) == set(DELIBERATE)
    for t, (gold, predicted) in DELIBERATE.items():
        assert (wrong[t]["gold"], wrong[t]["predicted"]) == (gold, predicted)
    assert wrong["TN-9051"]["step"] == "나이 단계"
    assert wrong["TN-9039"]["step"] == "직업 단계"
    assert wrong["TN-9042"]["step"] == "금지 주제 단계"
    assert wrong["TN-9059"]["step"] == "금지 주제 단계"  # the age-restricted topic is part of the forbidden-topic rule


def test_agree_report_shows_every_check_passing(agreement):
    _, _, report = agreement
    assert [c["id"] for c in report["checks"]] == CHECK_IDS
    assert all(c["passed"] for c in report["checks"])
    assert report["reconciliation"]["turns"] == {"raw": 472, "normalised": 469, "quarantined": 3, "reconciles": True}
    assert report["honesty"]


@pytest.mark.parametrize("suffix", [".md", ".html"])
def test_agree_renders_markdown_and_html(judged, tmp_path, suffix):
    out = tmp_path / f"report{suffix}"
    assert run("agree", "persona", "--verdicts", judged["out"], "--golden", GOLDEN, "--out", out, "--input", SAMPLE)[0] == 0
    text = out.read_text(encoding="utf-8")
    assert "185 / 189" in text
    for t in DELIBERATE:
        assert t in text
    assert "TN-9048" in text  # an excluded turn is shown with its reason


def test_agree_with_a_bad_golden_file_exits_2(judged, tmp_path):
    bad = tmp_path / "golden.jsonl"
    bad.write_text('{"turn_no": "TN-9001"}\n', encoding="utf-8")
    code, _, stderr = run("agree", "persona", "--verdicts", judged["out"], "--golden", bad, "--out", tmp_path / "r.json")
    assert code == 2 and "golden.jsonl" in stderr
