"""The `verdicts` command line on the handoff sample: judge, validate and agree.

Commands run in-process through `orchestration.cli.main`.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from rules.handoff import verdicts as V
from tests.cli.helpers import copy_sample, domain_paths, drop_column, read_jsonl, run, write_jsonl
from tests.fixtures.handoff.oracle import expected_rows

SAMPLE, GOLDEN, FIXTURES = domain_paths("handoff")
DATASETS = ("chat_messages", "rooms", "handoff_phrases", "help_articles")
DAY = "2026-10-01"
CHECK_IDS = ["schema", "1.verdict_enum", "2.required_fields", "3.ranges", "4.durations", "5.kept_answering", "6.uncited",
             "7.reentry", "8.late_or_ai_ended", "9.evidence_fields", "10.evidence_values", "11.polite", "recompute"]


def expected(day: str | None = None, status: str = V.LISTED) -> dict[str, dict]:
    return {r["room_id"]: r for r in expected_rows()
            if r["status"] == status and (day is None or r["opened_day"] == day)}


@pytest.fixture
def day_out(tmp_path) -> Path:
    out = tmp_path / "day.jsonl"
    code, _, stderr = run("judge", "handoff", "--input", SAMPLE, "--out", out, "--quarantine", tmp_path / "q.jsonl", "--day", DAY)
    assert code == 0, stderr
    return out


# -- judge ---------------------------------------------------------------------------------------------


def test_judge_day_reproduces_the_seed_and_leaves_r55188_and_r55199_out(day_out):
    rows = {r["room_id"]: r for r in read_jsonl(day_out)}
    assert set(rows) == set(expected(DAY))
    assert "R-55188" not in rows and "R-55199" not in rows
    for seed in json.loads((FIXTURES / "seed_examples.json").read_text(encoding="utf-8")):
        row = rows[seed["room_id"]]
        for k in seed:
            if k not in ("evidence", "summary", "hedge"):
                assert json.dumps(row[k]) == json.dumps(seed[k]), (seed["room_id"], k)


def test_judge_day_matches_the_hand_worked_oracle_field_for_field(day_out):
    exp = expected(DAY)
    for row in read_jsonl(day_out):
        e = exp[row["room_id"]]
        assert {k: row[k] for k in e if k in row} == {k: v for k, v in e.items() if k in row}, row["room_id"]


def test_judge_day_quarantine_and_counts(day_out, tmp_path):
    q = read_jsonl(tmp_path / "q.jsonl")
    want = read_jsonl(FIXTURES / "expected_quarantine.jsonl")
    assert sorted((r["dataset"], r["line"], r["id"], r["reason_code"]) for r in q) == sorted(
        (r["dataset"], r["line"], r["id"], r["reason_code"]) for r in want)


def test_judge_without_day_judges_every_room(tmp_path):
    out = tmp_path / "all.jsonl"
    code, _, stderr = run("judge", "handoff", "--input", SAMPLE, "--out", out)
    assert code == 0
    assert {r["room_id"] for r in read_jsonl(out)} == set(expected())
    assert "chat_messages: 857 raw = 854 normalised + 3 quarantined" in stderr


def test_judge_days_cover_the_whole_input(tmp_path):
    ids = []
    for day in sorted({r["opened_day"] for r in expected_rows()}):
        out = tmp_path / f"{day}.jsonl"
        assert run("judge", "handoff", "--input", SAMPLE, "--out", out, "--day", day)[0] == 0
        ids += [r["room_id"] for r in read_jsonl(out)]
    assert sorted(ids) == sorted(expected())


def test_judge_a_day_without_rooms_writes_nothing(tmp_path):
    out = tmp_path / "none.jsonl"
    assert run("judge", "handoff", "--input", SAMPLE, "--out", out, "--day", "2026-11-03")[0] == 0
    assert read_jsonl(out) == []


def test_judge_again_replaces_the_output(tmp_path, day_out):
    out = tmp_path / "again.jsonl"
    for _ in range(2):
        assert run("judge", "handoff", "--input", SAMPLE, "--out", out, "--day", DAY)[0] == 0
    assert read_jsonl(out) == read_jsonl(day_out)


@pytest.mark.parametrize("missing", DATASETS)
def test_judge_missing_dataset_exits_2_naming_the_file(tmp_path, missing):
    inp = copy_sample(SAMPLE, tmp_path / "in", DATASETS)
    (inp / f"{missing}.jsonl").unlink()
    code, _, stderr = run("judge", "handoff", "--input", inp, "--out", tmp_path / "v.jsonl")
    assert code == 2 and f"{missing}.jsonl" in stderr and "not found" in stderr


@pytest.mark.parametrize(("dataset", "column"), [("chat_messages", "sender"), ("rooms", "customer_id"),
                                                 ("handoff_phrases", "first_reply_min"), ("help_articles", "article_id")])
def test_judge_file_lacking_a_required_column_exits_2_naming_it(tmp_path, dataset, column):
    inp = copy_sample(SAMPLE, tmp_path / "in", DATASETS)
    drop_column(inp / f"{dataset}.jsonl", column)
    code, _, stderr = run("judge", "handoff", "--input", inp, "--out", tmp_path / "v.jsonl")
    assert code == 2 and f"'{column}'" in stderr and f"{dataset}.jsonl" in stderr


def test_judge_a_bad_day_exits_2(tmp_path):
    code, _, stderr = run("judge", "handoff", "--input", SAMPLE, "--out", tmp_path / "v.jsonl", "--day", "10/01")
    assert code == 2 and "--day" in stderr


# -- validate ----------------------------------------------------------------------------------------


def test_validate_passes_on_the_judge_output_and_lists_every_check(day_out):
    code, stdout, _ = run("validate", "handoff", "--input", SAMPLE, "--verdicts", day_out, "--day", DAY)
    assert code == 0, stdout
    assert "13 passed, 0 failed" in stdout
    code, stdout, _ = run("validate", "handoff", "--input", SAMPLE, "--verdicts", day_out, "--day", DAY, "--json")
    assert [r["id"] for r in json.loads(stdout)] == CHECK_IDS


def test_validate_passes_on_the_seed_rows_for_their_rooms(tmp_path, day_out):
    """The seed's own rows (no dataset key in evidence) pass every check except the count of listed rooms."""
    seed = json.loads((FIXTURES / "seed_examples.json").read_text(encoding="utf-8"))
    others = [r for r in read_jsonl(day_out) if r["room_id"] not in {s["room_id"] for s in seed}]
    code, stdout, _ = run("validate", "handoff", "--input", SAMPLE, "--verdicts", write_jsonl(tmp_path / "s.jsonl", seed + others),
                          "--day", DAY)
    assert code == 0, stdout


@pytest.mark.parametrize(("room", "change", "check"), [
    ("R-55140", {"reentry_hours": 1.8}, "4.durations"),
    ("R-55102", {"verdict": V.UNCITED}, "5.kept_answering"),
    ("R-55131", {"verdict": V.AI_ENDED}, "6.uncited"),
    ("R-55231", {"verdict": V.REENTRY}, "7.reentry"),
    ("R-55177", {"verdict": V.AI_ENDED}, "8.late_or_ai_ended"),
    ("R-55150", {"summary": "AI가 닫았다."}, "11.polite"),
    ("R-55220", {"uncited_message_ids": ["M-901332"]}, "recompute"),
])
def test_validate_exits_1_naming_the_failing_check(tmp_path, day_out, room, change, check):
    rows = read_jsonl(day_out)
    next(r for r in rows if r["room_id"] == room).update(change)
    code, stdout, _ = run("validate", "handoff", "--input", SAMPLE, "--verdicts", write_jsonl(tmp_path / "bad.jsonl", rows), "--day", DAY)
    assert code == 1
    assert re.search(rf"^FAIL\s+{re.escape(check)}\b", stdout, re.M) and room in stdout


def test_validate_a_day_file_against_the_whole_input_fails_the_recompute(day_out):
    code, stdout, _ = run("validate", "handoff", "--input", SAMPLE, "--verdicts", day_out)
    assert code == 1 and re.search(r"^FAIL\s+recompute\b", stdout, re.M)


def test_validate_a_listed_r55188_or_r55199_fails(tmp_path, day_out):
    rows = read_jsonl(day_out)
    extra = [{**copy.deepcopy(rows[0]), "room_id": "R-55188", "customer_id": "C-3044"},
             {**copy.deepcopy(rows[0]), "room_id": "R-55199", "customer_id": "C-3115"}]
    code, stdout, _ = run("validate", "handoff", "--input", SAMPLE, "--verdicts", write_jsonl(tmp_path / "x.jsonl", rows + extra), "--day", DAY)
    assert code == 1 and "R-55188: the room is out of scope" in stdout and "R-55199: no room of the judged day" in stdout


# -- agree ---------------------------------------------------------------------------------------------


@pytest.fixture
def report_json(tmp_path, day_out) -> dict:
    out = tmp_path / "report.json"
    code, _, stderr = run("agree", "handoff", "--verdicts", day_out, "--golden", GOLDEN, "--input", SAMPLE, "--day", DAY, "--out", out)
    assert code == 0, stderr
    return json.loads(out.read_text(encoding="utf-8"))


def test_agree_report_has_header_counts_agreement_per_verdict_and_the_review_list(report_json):
    metrics = {m["name"]: m for m in report_json["metrics"]}
    assert metrics["판정 일치"]["ratio"]["display"] == "25 / 27 (92.6%)"
    assert metrics["제때 연결"]["ratio"]["display"] == "2 / 7"
    assert metrics["판정 보류"]["ratio"]["display"] == "4 / 31 (12.9%)"
    assert metrics["판정 대상"]["ratio"]["display"] == "25 / 27 (92.6%)"
    assert metrics[f"판정별 일치 · {V.KEPT_ANSWERING}"]["ratio"]["display"] == "3 / 4"
    assert metrics[f"판정별 일치 · {V.NOT_LISTED}"]["ratio"]["display"] == "6 / 6"
    assert {w["id"]: w["step"] for w in report_json["wrong_cases"]} == {
        "R-55216": "상담원 요청 단계 (연결 문구 목록)", "R-55232": "재문의 단계 (24시간 창)"}
    assert report_json["per_label"][V.REENTRY]["precision"]["display"] == "3 / 4"
    assert report_json["verdict_counts"][V.HELD] == 4


def test_agree_report_shows_the_held_group_with_each_row_and_reason(report_json):
    held = {(x["id"], x["code"]) for x in report_json["excluded"]}
    assert held == {("R-55240", "missing_sent_at"), ("R-55245", "schema"), ("(대화 모름)", "empty_room_id"),
                    ("R-55250", "unknown_room"), ("R-55255", "schema")}
    assert report_json["golden_not_judged"] == [{"id": "R-55240", "reason": "판정 보류: 판정하지 않은 대화입니다"}]


def test_agree_markdown_and_html(tmp_path, day_out):
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    for out in (md, html):
        assert run("agree", "handoff", "--verdicts", day_out, "--golden", GOLDEN, "--input", SAMPLE, "--day", DAY, "--out", out)[0] == 0
    text = md.read_text(encoding="utf-8")
    for part in ("## 하루 집계", "## 판정 보류", "## 검토할 대화", "| · 제때 연결 | 2 |", "R-55250", "✅ 통과"):
        assert part in text
    assert "<script" not in text and "R-55232" in html.read_text(encoding="utf-8")


def test_agree_without_input_still_pairs_listed_rooms(tmp_path, day_out):
    out = tmp_path / "r.json"
    assert run("agree", "handoff", "--verdicts", day_out, "--golden", GOLDEN, "--out", out)[0] == 0
    metrics = {m["name"]: m for m in json.loads(out.read_text(encoding="utf-8"))["metrics"]}
    assert metrics["판정 일치"]["ratio"]["display"] == "19 / 21 (90.5%)"
