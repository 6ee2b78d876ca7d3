"""The `verdicts` command line: judge, validate and agree on the live_pick sample.

Commands run in-process through `orchestration.cli.main` (fast); one test runs the installed
console script to prove the entry point works.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rules.live_pick import verdicts as V
from tests.cli.helpers import assert_quarantine_matches, copy_sample, domain_paths, drop_column, judge_sample, read_jsonl, run, write_jsonl

SAMPLE, GOLDEN, FIXTURES = domain_paths("live_pick")
DATASETS = ("live_chat", "character_sheet", "viewer_relation")
CHECK_IDS = [
    "schema", "1.verdict_enum", "2.required_filled", "3.ranges", "4.cooldown", "5.rank", "6.evidence_fields",
    "7.evidence_values", "8.polite", "9.empty_tags", "10.rule_order", "11.closeness", "12.vocabulary",
    "13.filled_when", "recompute",
]


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    return judge_sample(tmp_path_factory.mktemp("judged"), "live_pick", SAMPLE)


@pytest.fixture(scope="module")
def expected() -> dict[str, dict]:
    return {r["msg_id"]: r for r in read_jsonl(FIXTURES / "expected.jsonl")}


@pytest.fixture(scope="module")
def golden() -> list[dict]:
    return read_jsonl(GOLDEN)


# -- judge -------------------------------------------------------------------------------------


def test_judge_exits_0_when_rows_were_only_quarantined(judged):
    assert judged["code"] == 0
    for name, (raw, norm) in {"live_chat": (83, 80), "character_sheet": (10, 7), "viewer_relation": (42, 39)}.items():
        assert f"{name}: {raw} raw = {norm} normalised + {raw - norm} quarantined" in judged["stderr"]


def test_judge_output_reproduces_the_expected_fixture(judged, expected):
    rows = judged["rows"]
    assert len(rows) == len(expected) == 80
    got = {r["msg_id"]: r for r in rows}
    assert len(got) == len(rows), "one row per message"
    assert set(got) == set(expected)
    for msg_id, exp in expected.items():
        assert {k: got[msg_id][k] for k in exp} == exp, msg_id


def test_judge_rows_carry_every_output_column(judged):
    for r in judged["rows"]:
        assert set(r) == {"pick_id", "msg_id", "viewer_id", "character_id", "window_start", "verdict",
                          "rank_in_window", "cooldown_elapsed_sec", "evidence", "summary", "hedge", "provenance",
                          "sheet_version"}
        assert r["evidence"] and r["summary"]
        assert r["provenance"]["tagger"] == "gold" and r["provenance"]["summary"] == "template"
        assert r["sheet_version"] is None  # a plain sheet file is unversioned


def test_judge_writes_the_quarantined_rows_with_reason_codes(judged):
    q = read_jsonl(judged["q"])
    assert len(q) == 9
    assert_quarantine_matches(q, read_jsonl(FIXTURES / "expected_quarantine.jsonl"))
    for r in q:
        assert Path(r["file"]).name == f"{r['dataset']}.jsonl"
        assert isinstance(r["reason"], str) and r["reason"].strip()
        assert isinstance(r["raw"], str) and r["raw"].strip()
    # The raw text is the line as written in the file.
    chat_lines = (SAMPLE / "live_chat.jsonl").read_text(encoding="utf-8").splitlines()
    for r in q:
        if r["dataset"] == "live_chat":
            assert r["raw"] == chat_lines[r["line"] - 1]


def test_judge_again_replaces_the_output(judged, tmp_path):
    out = tmp_path / "v.jsonl"
    for _ in range(2):
        assert run("judge", "live_pick", "--input", SAMPLE, "--out", out)[0] == 0
    assert read_jsonl(out) == judged["rows"]


@pytest.mark.parametrize(("day", "count"), [("2026-09-08", 51), ("2026-09-09", 29)])
def test_judge_one_day(tmp_path, expected, day, count):
    out = tmp_path / "day.jsonl"
    code, _, _ = run("judge", "live_pick", "--input", SAMPLE, "--out", out, "--day", day)
    assert code == 0
    rows = read_jsonl(out)
    assert len(rows) == count
    on_day = {m: r for m, r in expected.items() if r["window_start"].startswith(day)}
    assert {r["msg_id"] for r in rows} == set(on_day)
    for r in rows:
        assert {k: r[k] for k in on_day[r["msg_id"]]} == on_day[r["msg_id"]]
    # The day's verdicts validate against the same day's input, and not against the whole input.
    assert run("validate", "live_pick", "--input", SAMPLE, "--verdicts", out, "--day", day)[0] == 0
    code, stdout, _ = run("validate", "live_pick", "--input", SAMPLE, "--verdicts", out)
    assert code == 1 and re.search(r"^FAIL\s+recompute\b", stdout, re.M)


def test_judge_days_partition_the_whole_input(tmp_path, judged):
    ids = []
    for day in ("2026-09-08", "2026-09-09"):
        out = tmp_path / f"{day}.jsonl"
        assert run("judge", "live_pick", "--input", SAMPLE, "--out", out, "--day", day)[0] == 0
        ids += [r["msg_id"] for r in read_jsonl(out)]
    assert sorted(ids) == sorted(r["msg_id"] for r in judged["rows"])


def test_judge_a_day_without_lines_writes_no_rows(tmp_path):
    out = tmp_path / "none.jsonl"
    assert run("judge", "live_pick", "--input", SAMPLE, "--out", out, "--day", "2026-09-10")[0] == 0
    assert read_jsonl(out) == []


@pytest.mark.parametrize("missing", DATASETS)
def test_judge_missing_dataset_file_exits_2_naming_the_file(tmp_path, missing):
    inp = copy_sample(SAMPLE, tmp_path / "in", DATASETS)
    (inp / f"{missing}.jsonl").unlink()
    out = tmp_path / "v.jsonl"
    code, _, stderr = run("judge", "live_pick", "--input", inp, "--out", out)
    assert code == 2
    assert f"{missing}.jsonl" in stderr
    assert "not found" in stderr
    assert not out.exists()


@pytest.mark.parametrize(("dataset", "column"), [("live_chat", "body"), ("viewer_relation", "closeness_level"),
                                                 ("character_sheet", "reply_cooldown_sec")])
def test_judge_file_lacking_a_required_column_exits_2_naming_it(tmp_path, dataset, column):
    inp = copy_sample(SAMPLE, tmp_path / "in", DATASETS)
    drop_column(inp / f"{dataset}.jsonl", column)
    out = tmp_path / "v.jsonl"
    code, _, stderr = run("judge", "live_pick", "--input", inp, "--out", out)
    assert code == 2
    assert f"'{column}'" in stderr
    assert f"{dataset}.jsonl" in stderr
    assert not out.exists()


def test_judge_column_missing_from_some_rows_only_quarantines_them(tmp_path):
    inp = copy_sample(SAMPLE, tmp_path / "in", DATASETS)
    path = inp / "live_chat.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    obj = json.loads(lines[0])
    del obj["body"]
    lines[0] = json.dumps(obj, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out, q = tmp_path / "v.jsonl", tmp_path / "q.jsonl"
    assert run("judge", "live_pick", "--input", inp, "--out", out, "--quarantine", q)[0] == 0
    assert len(read_jsonl(out)) == 79
    bad = [r for r in read_jsonl(q) if r["dataset"] == "live_chat" and r["line"] == 1]
    assert [r["reason_code"] for r in bad] == ["schema"]
    assert "body" in bad[0]["reason"]


@pytest.mark.parametrize("dataset", DATASETS)
def test_judge_non_utf8_file_exits_2(tmp_path, dataset):
    inp = copy_sample(SAMPLE, tmp_path / "in", DATASETS)
    path = inp / f"{dataset}.jsonl"
    path.write_bytes(path.read_text(encoding="utf-8").encode("cp949", errors="replace"))
    code, _, stderr = run("judge", "live_pick", "--input", inp, "--out", tmp_path / "v.jsonl")
    assert code == 2
    assert f"{dataset}.jsonl" in stderr
    assert "UTF-8" in stderr


def test_unknown_tag_source_exits_2(tmp_path):
    code, _, stderr = run("judge", "live_pick", "--input", SAMPLE, "--out", tmp_path / "v.jsonl", "--tags", "bogus")
    assert code == 2
    assert "bogus" in stderr and "gold" in stderr
    assert not (tmp_path / "v.jsonl").exists()


@pytest.mark.parametrize("tagger", ["kiwi", "lexicon"])
def test_a_tagger_run_passes_every_check_of_validate(tmp_path, tagger):
    out = tmp_path / "v.jsonl"
    code, _, stderr = run("judge", "live_pick", "--input", SAMPLE, "--out", out, "--tags", tagger)
    assert code == 0 and f"tags: {tagger}" in stderr
    rows = read_jsonl(out)
    assert len(rows) == 80 and all(r["provenance"]["tagger"] == tagger for r in rows)
    # evidence never presents the tagger's answer as the gold column
    cited = [e for r in rows for e in r["evidence"]]
    assert not [e for e in cited if e["field"] == "topic_tags"]
    assert any(e["field"] == "body" and e.get("agg") == f"tag:{tagger}" for e in cited)
    code, stdout, _ = run("validate", "live_pick", "--input", SAMPLE, "--verdicts", out)
    assert code == 0, stdout
    assert [line.split()[1] for line in stdout.splitlines() if line.startswith("PASS")] == CHECK_IDS


def test_validate_re_runs_a_deterministic_tagger_and_holds_its_answer(tmp_path):
    out = tmp_path / "v.jsonl"
    assert run("judge", "live_pick", "--input", SAMPLE, "--out", out, "--tags", "kiwi")[0] == 0
    rows = read_jsonl(out)
    row = _row(rows, "MSG-20260908-1405")  # 다음 곡 뭐야? → 노래, ranked
    row["provenance"]["answer"] = row["provenance"]["tags"] = ["게임"]  # a claim kiwi never made
    write_jsonl(out, rows)
    code, stdout, _ = run("validate", "live_pick", "--input", SAMPLE, "--verdicts", out)
    assert code == 1
    assert re.search(r"FAIL\s+12\.vocabulary.*\n.*MSG-20260908-1405: kiwi re-run on the body answers \['노래'\]", stdout)


def test_explicit_gold_tags_equal_the_default(tmp_path, judged):
    out = tmp_path / "v.jsonl"
    assert run("judge", "live_pick", "--input", SAMPLE, "--out", out, "--tags", "gold")[0] == 0
    assert read_jsonl(out) == judged["rows"]


@pytest.mark.parametrize("command", ["judge", "validate"])
def test_a_domain_not_in_the_registry_exits_2_naming_the_registered_ones(tmp_path, command, monkeypatch):
    from evals import domains

    monkeypatch.setattr(domains, "REGISTRY", {"live_pick": domains.get("live_pick")})
    extra = ["--out", tmp_path / "v.jsonl"] if command == "judge" else ["--verdicts", SAMPLE / "golden.jsonl"]
    code, _, stderr = run(command, "persona", "--input", SAMPLE, *extra)
    assert code == 2
    assert "persona" in stderr and "invalid choice" in stderr and "live_pick" in stderr
    assert "Traceback" not in stderr


def test_another_domains_folder_exits_2_naming_the_missing_file(tmp_path):
    code, _, stderr = run("judge", "persona", "--input", SAMPLE, "--out", tmp_path / "v.jsonl")
    assert code == 2
    assert "profiles.jsonl" in stderr and "file not found" in stderr and "Traceback" not in stderr


def test_unknown_domain_name_exits_2(tmp_path):
    code, _, stderr = run("judge", "chitchat", "--input", SAMPLE, "--out", tmp_path / "v.jsonl")
    assert code == 2
    assert "chitchat" in stderr


# -- validate ----------------------------------------------------------------------------------


def test_validate_passes_on_the_judge_output(judged):
    code, stdout, _ = run("validate", "live_pick", "--input", SAMPLE, "--verdicts", judged["out"])
    assert code == 0
    for check in CHECK_IDS:
        assert re.search(rf"^PASS\s+{re.escape(check)}\s", stdout, re.M), check
    assert "FAIL" not in stdout
    assert f"{len(CHECK_IDS)} passed, 0 failed" in stdout


def test_validate_json_lists_every_check(judged):
    code, stdout, _ = run("validate", "live_pick", "--input", SAMPLE, "--verdicts", judged["out"], "--json")
    assert code == 0
    results = json.loads(stdout)
    assert [r["id"] for r in results] == CHECK_IDS
    assert all(r["passed"] and r["failing_ids"] == [] for r in results)


def _row(rows, msg_id):
    return next(r for r in rows if r["msg_id"] == msg_id)


def _fault_rank(rows):
    _row(rows, "MSG-20260908-4402")["rank_in_window"] = 2
    return "MSG-20260908-4402"


def _fault_cooldown(rows):
    _row(rows, "MSG-20260908-4401")["cooldown_elapsed_sec"] = 42
    return "MSG-20260908-4401"


def _fault_field(rows):
    _row(rows, "MSG-20260908-4402")["evidence"].append({"dataset": "live_chat", "field": "mood", "value": "기쁨"})
    return "MSG-20260908-4402"


def _fault_value(rows):
    e = next(e for e in _row(rows, "MSG-20260908-4402")["evidence"] if e["field"] == "donation_amount")
    assert e["value"] == 10000
    e["value"] = 9000
    return "MSG-20260908-4402"


def _fault_verdict(rows):
    _row(rows, "MSG-20260908-4402")["verdict"] = "답변"
    return "MSG-20260908-4402"


def _fault_summary(rows):
    _row(rows, "MSG-20260908-4402")["summary"] = "좋아."
    return "MSG-20260908-4402"


VALIDATE_FAULTS = [
    ("wrong rank", _fault_rank, "5.rank"),
    ("wrong cooldown", _fault_cooldown, "4.cooldown"),
    ("evidence field not a column", _fault_field, "6.evidence_fields"),
    ("evidence value differing", _fault_value, "7.evidence_values"),
    ("non-enum verdict", _fault_verdict, "1.verdict_enum"),
    ("impolite summary", _fault_summary, "8.polite"),
]


@pytest.mark.parametrize(("name", "inject", "check"), VALIDATE_FAULTS, ids=[f[0] for f in VALIDATE_FAULTS])
def test_validate_exits_1_naming_the_failing_check(judged, tmp_path, name, inject, check):
    rows = copy.deepcopy(judged["rows"])
    msg_id = inject(rows)
    path = write_jsonl(tmp_path / "faulty.jsonl", rows)
    code, stdout, _ = run("validate", "live_pick", "--input", SAMPLE, "--verdicts", path)
    assert code == 1
    line = re.search(rf"^FAIL\s+{re.escape(check)}\s.*\n\s+(\d+) failing: (.*)$", stdout, re.M)
    assert line, stdout
    assert line.group(1) == "1" and msg_id in line.group(2)
    assert re.search(r"^PASS\s+2\.required_filled\s", stdout, re.M)


def test_validate_a_line_that_is_not_json_fails_the_schema(judged, tmp_path):
    path = tmp_path / "v.jsonl"
    text = judged["out"].read_text(encoding="utf-8")
    path.write_text(text + "{not json\n", encoding="utf-8")
    code, stdout, _ = run("validate", "live_pick", "--input", SAMPLE, "--verdicts", path)
    assert code == 1
    assert re.search(r"^FAIL\s+schema\s.*\n.*line 81", stdout, re.M)


def test_validate_missing_verdict_file_exits_2(tmp_path):
    code, _, stderr = run("validate", "live_pick", "--input", SAMPLE, "--verdicts", tmp_path / "nope.jsonl")
    assert code == 2
    assert "nope.jsonl" in stderr


def test_validate_non_utf8_verdict_file_exits_2(judged, tmp_path):
    path = tmp_path / "v.jsonl"
    path.write_bytes(judged["out"].read_text(encoding="utf-8").encode("utf-16"))
    code, _, stderr = run("validate", "live_pick", "--input", SAMPLE, "--verdicts", path)
    assert code == 2
    assert "v.jsonl" in stderr


def test_validate_with_a_missing_input_file_exits_2(judged, tmp_path):
    inp = copy_sample(SAMPLE, tmp_path / "in", DATASETS)
    (inp / "character_sheet.jsonl").unlink()
    code, _, stderr = run("validate", "live_pick", "--input", inp, "--verdicts", judged["out"])
    assert code == 2
    assert "character_sheet.jsonl" in stderr


def test_validate_a_row_with_an_array_msg_id_reports_the_schema_failure(judged, tmp_path):
    rows = copy.deepcopy(judged["rows"])
    rows[0]["msg_id"] = [rows[0]["msg_id"]]
    path = write_jsonl(tmp_path / "v.jsonl", rows)
    code, stdout, _ = run("validate", "live_pick", "--input", SAMPLE, "--verdicts", path)
    assert code == 1
    assert re.search(r"^FAIL\s+schema\s", stdout, re.M)


# -- agree -------------------------------------------------------------------------------------

DELIBERATE = {
    "MSG-20260909-6409": "순위 단계",
    "MSG-20260908-2405": "세계관·금칙 단계",
    "MSG-20260908-2401": "쿨다운 단계",
}


def agree(tmp_path, verdicts, out_name, *extra, golden=GOLDEN):
    out = tmp_path / out_name
    code, _, stderr = run("agree", "live_pick", "--verdicts", verdicts, "--golden", golden, "--out", out, *extra)
    assert code == 0, stderr
    return out


@pytest.mark.parametrize("with_input", [False, True], ids=["no-input", "input"])
def test_agree_json_metrics_are_derived_from_golden_and_verdicts(judged, expected, golden, tmp_path, with_input):
    extra = ["--input", SAMPLE] if with_input else []
    report = json.loads(agree(tmp_path, judged["out"], "r.json", *extra).read_text(encoding="utf-8"))

    labelled = [g for g in golden if g["msg_id"] in expected]
    same = sum(expected[g["msg_id"]]["verdict"] == g["verdict"] for g in labelled)
    pick_same = sum((expected[g["msg_id"]]["verdict"] == V.PICK) == (g["verdict"] == V.PICK) for g in labelled)
    first, second = report["metrics"][0], report["metrics"][1]
    assert first["name"] == "판정 일치"
    assert (first["ratio"]["numerator"], first["ratio"]["denominator"]) == (same, len(labelled))
    assert (second["ratio"]["numerator"], second["ratio"]["denominator"]) == (pick_same, len(labelled))
    assert first["ratio"]["display"] == f"{same} / {len(labelled)} ({same / len(labelled) * 100:.1f}%)"

    mismatched = {g["msg_id"]: g["verdict"] for g in labelled if expected[g["msg_id"]]["verdict"] != g["verdict"]}
    assert set(mismatched) == set(DELIBERATE)
    wrong = [w for w in report["wrong_cases"] if w["metric"] == "판정 일치"]
    assert {w["id"]: w["step"] for w in wrong} == DELIBERATE
    for w in wrong:
        assert w["gold"] == mismatched[w["id"]]
        assert w["predicted"] == expected[w["id"]]["verdict"]

    # Confusion matrix totals and the verdict distribution agree with the inputs.
    assert sum(map(sum, report["confusion"]["rows_gold_columns_predicted"])) == len(labelled)
    assert sum(report["verdict_counts"].values()) == len(expected)
    for verdict, n in report["verdict_counts"].items():
        assert n == sum(r["verdict"] == verdict for r in expected.values())
    assert report["honesty"]

    checks = {c["id"]: c["passed"] for c in report["checks"]}
    if with_input:
        assert list(checks) == CHECK_IDS and all(checks.values())
        assert len(report["quarantine"]) == 9
        assert all(r["reconciles"] for r in report["reconciliation"].values())
    else:
        assert checks == {}
        assert any("--input" in h for h in report["honesty"])


@pytest.mark.parametrize("with_input", [False, True], ids=["no-input", "input"])
def test_agree_writes_markdown_and_html(judged, expected, golden, tmp_path, with_input):
    same = sum(expected[g["msg_id"]]["verdict"] == g["verdict"] for g in golden)
    agreement = f"{same} / {len(golden)} ({same / len(golden) * 100:.1f}%)"
    extra = ["--input", SAMPLE] if with_input else []
    md = agree(tmp_path, judged["out"], "r.md", *extra).read_text(encoding="utf-8")
    page = agree(tmp_path, judged["out"], "r.html", *extra).read_text(encoding="utf-8")
    for text in (md, page):
        for msg_id, step in DELIBERATE.items():
            assert msg_id in text and step in text
        assert agreement in text
        for check in CHECK_IDS:
            assert (f"<code>{check}</code>" in text or f"`{check}`" in text) is with_input, check
    if with_input:
        assert "MSG-20260908-3411" in md and "reply_after_line" in md  # the quarantine table
    assert page.lstrip().lower().startswith("<!doctype html>")
    assert "<link" not in page and "src=" not in page  # self-contained


def test_agree_unknown_report_suffix_exits_2(judged, tmp_path):
    code, _, stderr = run("agree", "live_pick", "--verdicts", judged["out"], "--golden", GOLDEN, "--out", tmp_path / "r.txt")
    assert code == 2
    assert "r.txt" in stderr


def test_agree_missing_golden_file_exits_2(judged, tmp_path):
    code, _, stderr = run("agree", "live_pick", "--verdicts", judged["out"], "--golden", tmp_path / "g.jsonl",
                          "--out", tmp_path / "r.json")
    assert code == 2
    assert "g.jsonl" in stderr


def test_agree_unreadable_golden_line_exits_2(judged, tmp_path):
    golden = tmp_path / "g.jsonl"
    golden.write_text(GOLDEN.read_text(encoding="utf-8") + "{broken\n", encoding="utf-8")
    code, _, stderr = run("agree", "live_pick", "--verdicts", judged["out"], "--golden", golden, "--out", tmp_path / "r.json")
    assert code == 2
    assert "g.jsonl" in stderr


def test_agree_html_and_markdown_escape_text_from_logs(judged, golden, tmp_path):
    rows = copy.deepcopy(judged["rows"])
    evil_id = "<script>alert('id')</script>"
    evil_summary = "<script>alert('summary')</script> 입니다."
    _row(rows, "MSG-20260909-6409")["summary"] = evil_summary
    victim = _row(rows, "MSG-20260908-4402")
    assert victim["verdict"] == V.PICK
    victim["msg_id"] = evil_id
    verdicts = write_jsonl(tmp_path / "v.jsonl", rows)
    gold = write_jsonl(tmp_path / "g.jsonl", [*golden, {"msg_id": evil_id, "verdict": V.DEFERRED}])

    report = json.loads(agree(tmp_path, verdicts, "r.json", golden=gold).read_text(encoding="utf-8"))
    wrong_ids = {w["id"] for w in report["wrong_cases"]}
    assert evil_id in wrong_ids  # the injected id is shown in the report
    assert any(w["summary"] == evil_summary for w in report["wrong_cases"])

    page = agree(tmp_path, verdicts, "r.html", golden=gold).read_text(encoding="utf-8")
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&#x27;id&#x27;)&lt;/script&gt;" in page
    assert not re.search(r"<script(?![^>]*application/json)", page), "no executable script element"
    assert page.count("</script>") == len(re.findall(r"<script\b", page))

    md = agree(tmp_path, verdicts, "r.md", golden=gold).read_text(encoding="utf-8")
    assert "<script>" not in md
    assert "&lt;script&gt;" in md


class _DataBlock(HTMLParser):
    def __init__(self):
        super().__init__()
        self.inside, self.text = False, ""

    def handle_starttag(self, tag, attrs):
        self.inside = tag == "script" and ("id", "report-data") in attrs

    def handle_endtag(self, tag):
        self.inside = False

    def handle_data(self, data):
        if self.inside:
            self.text += data


def test_agree_html_embeds_the_report_as_parseable_json(judged, tmp_path):
    report = json.loads(agree(tmp_path, judged["out"], "r.json").read_text(encoding="utf-8"))
    page = agree(tmp_path, judged["out"], "r.html").read_text(encoding="utf-8")
    block = _DataBlock()
    block.feed(page)
    embedded = json.loads(block.text)
    assert embedded["metrics"] == report["metrics"]
    assert embedded["wrong_cases"] == report["wrong_cases"]


def _md_metric_cells(md: str, name: str) -> list[str]:
    line = next(l for l in md.splitlines() if l.startswith(f"| **{name}**"))
    return [c.strip() for c in line.strip().strip("|").split(" | ")]


def test_markdown_shows_percent_only_when_the_denominator_is_at_least_10(judged, golden, tmp_path):
    few = write_jsonl(tmp_path / "few.jsonl", golden[:5])
    report = json.loads(agree(tmp_path, judged["out"], "r.json", "--input", SAMPLE, golden=few).read_text(encoding="utf-8"))
    md = agree(tmp_path, judged["out"], "r.md", "--input", SAMPLE, golden=few).read_text(encoding="utf-8")
    small = large = 0
    for m in report["metrics"]:
        if m["ratio"] is None:
            assert _md_metric_cells(md, m["name"])[1:3] == ["—", "—"]
            continue
        n, d = m["ratio"]["numerator"], m["ratio"]["denominator"]
        value, interval = _md_metric_cells(md, m["name"])[1:3]
        if m["census"]:  # a count of everything in scope (checks, quarantined rows) has no interval
            assert interval == "표본 아님 (전수)" and m["ratio"]["wilson_low"] is None
        if d >= 10:
            large += 1
            assert value == f"{n} / {d} ({n / d * 100:.1f}%)"
            assert m["census"] or re.fullmatch(r"\[\d+\.\d%, \d+\.\d%\]", interval)
        else:
            small += 1
            assert value == f"{n} / {d}"
            assert "%" not in interval
    assert small >= 2 and large >= 2, "the report should exercise both sides of the rule"
    first = report["metrics"][0]
    assert first["name"] == "판정 일치" and first["ratio"]["denominator"] == 5


def test_agree_a_verdict_row_without_verdict_does_not_crash(judged, tmp_path):
    rows = copy.deepcopy(judged["rows"])
    del _row(rows, "MSG-20260908-4402")["verdict"]
    code, _, _ = run("agree", "live_pick", "--verdicts", write_jsonl(tmp_path / "v.jsonl", rows), "--golden", GOLDEN,
                     "--out", tmp_path / "r.json")
    assert code in (0, 1, 2)


def test_agree_null_and_unknown_verdicts_do_not_crash(judged, tmp_path):
    rows = copy.deepcopy(judged["rows"])
    _row(rows, "MSG-20260908-4402")["verdict"] = None
    _row(rows, "MSG-20260908-4401")["verdict"] = "엉뚱한 값"
    code, _, _ = run("agree", "live_pick", "--verdicts", write_jsonl(tmp_path / "v.jsonl", rows), "--golden", GOLDEN,
                     "--out", tmp_path / "r.json")
    assert code in (0, 1, 2)


# -- the installed console script ----------------------------------------------------------------


def test_console_script_judge(tmp_path, judged):
    script = Path(sys.executable).parent / "verdicts"
    assert script.is_file(), f"console script not installed at {script}"
    out = tmp_path / "v.jsonl"
    proc = subprocess.run(
        [str(script), "judge", "live_pick", "--input", str(SAMPLE), "--out", str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    assert "judged 80 rows" in proc.stderr
    assert read_jsonl(out) == judged["rows"]


def test_generate_writes_the_folder_and_refuses_too_few_rows(tmp_path):
    from orchestration.cli import main

    assert main(["generate", "retry", "--rows", "50", "--seed", "3", "--out", str(tmp_path)]) == 0
    assert len((tmp_path / "interaction_events.jsonl").read_text(encoding="utf-8").splitlines()) == 50
    assert len(json.loads((tmp_path / "malformed.json").read_text())["surface_catalog"]) == 3
    assert main(["generate", "retry", "--rows", "3", "--out", str(tmp_path / "x")]) == 2


def test_judge_holds_the_cycle_collector_while_it_runs_and_gives_it_back(tmp_path, monkeypatch):
    import gc

    from orchestration.cli import main
    from rules.common import part_writer

    seen = []
    write = part_writer.write_parts

    def watched(path, parts, tally=None):
        seen.append(gc.isenabled())
        return write(path, parts, tally)

    monkeypatch.setattr(part_writer, "write_parts", watched)
    assert gc.isenabled()
    assert main(["judge", "live_pick", "--input", str(SAMPLE), "--out", str(tmp_path / "v.jsonl")]) == 0
    assert seen == [False]
    assert gc.isenabled()
