"""The admin pages without a browser: the pure pieces (sources of evidence, samples, diffs, the
decision store) and the served pages' rules (token, upload names and limits, escaping, CLI and
page sharing one decision store)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from evals.diff import diff_runs
from evals.manual_checks import check_by_key, fill_decisions, sample
from evals.trace import cited_rows, transcript
from evals import domains
from assets.resources import decisions
from assets.resources.warehouse import _engine
from web.app import create_app
from web.config import WebConfig
from tests.cli.helpers import run
from tests.conftest import SEEDS


@pytest.fixture(scope="module")
def live_pick():
    d = domains.get("live_pick")
    judged = d.judge_dir(SEEDS / "live_pick")
    checks, gated = d.check_dir(SEEDS / "live_pick", judged.rows)
    report = d.report(judged.rows, None, checks, gated.quarantine, gated.reconciliation, scope="sample", judged=gated.normalised)
    return judged, report


def test_evidence_is_traced_to_its_source_line_and_the_window_is_the_transcript(live_pick):
    judged, _ = live_pick
    row = next(r for r in judged.rows if r["msg_id"] == "MSG-20260908-1401")
    tables = judged.normalised.tables
    cited = {(c.dataset, c.field): c for c in cited_rows(domains.get("live_pick"), row, tables)}
    chat = tables["live_chat"].set_index("msg_id")
    assert cited[("live_chat", "sent_at")].line == int(chat.loc["MSG-20260908-1401", "line"])
    sheet = cited[("character_sheet", "reply_cooldown_sec")]
    assert Path(sheet.file).name == "character_sheet.jsonl" and sheet.row_id == "CH-0007"
    t = transcript(domains.get("live_pick"), row, tables)
    ids = [r["_id"] for r in t.rows]
    assert "MSG-20260908-1401" in ids and "MSG-20260908-1402" in ids and "MSG-20260908-1501" not in ids  # next window
    assert [r["_id"] for r in t.rows if r["_focus"]] == ["MSG-20260908-1401"]


def test_samples_are_reproducible_and_persona_matches_the_review_queue():
    d = domains.get("persona")
    judged = d.judge_dir(SEEDS / "persona")
    tables = dict(judged.normalised.tables)
    check = check_by_key("persona.1")
    first = sample(check, judged.rows, tables)
    assert first == sample(check, list(reversed(judged.rows)), tables) and len(first) == 20
    queue, _, _ = d.review(SEEDS / "persona")
    assert first == sorted(queue["turn_no"])


def test_person_metric_is_filled_as_agreed_over_decided(live_pick):
    judged, report = live_pick
    ids = sample(check_by_key("live_pick.1"), judged.rows, judged.normalised.tables)
    assert report.manual["live_pick.1"]["ids"] == ids  # the report drew the same sample
    stored = {"live_pick.1": {ids[0]: {"kim": {"decision": "agree"}}, ids[1]: {"kim": {"decision": "disagree"}},
                              ids[2]: {"kim": {"decision": "note"}}}}
    import copy

    filled = fill_decisions(copy.deepcopy(report), stored)
    m = next(m for m in filled.metrics if m.key == "live_pick.1")
    assert (m.ratio.numerator, m.ratio.denominator) == (1, 2) and m.ratio.wilson is not None
    untouched = next(m for m in filled.metrics if m.key == "live_pick.2")
    assert untouched.ratio is None and "판단 전" in untouched.status


def test_diff_names_changed_items_and_moved_metrics(live_pick):
    judged, report = live_pick
    after = json.loads(json.dumps(judged.rows))
    after[0]["verdict"] = "다음 차례로 미룸" if after[0]["verdict"] != "다음 차례로 미룸" else "지금 답변할 질문"
    d = diff_runs(judged.rows, after[1:] + after[:1], report, report, id_field="msg_id", verdict_key="verdict")
    assert [c.id for c in d.changed] == [judged.rows[0]["msg_id"]] and d.unchanged == len(judged.rows) - 1
    assert not any(m.moved for m in d.metrics)


@pytest.mark.parametrize("url_kind", ["sqlite", "postgres"])
def test_decisions_replace_earlier_ones(url_kind, tmp_path, request):
    url = f"sqlite:///{tmp_path / 'wh.sqlite'}" if url_kind == "sqlite" else request.getfixturevalue("postgres_url")
    engine = _engine(url)
    decisions.record(engine, domain="handoff", check_key="handoff.2", item_id="R-1", decision="agree", reviewer="kim")
    decisions.record(engine, domain="handoff", check_key="handoff.2", item_id="R-1", decision="disagree", note="아님", reviewer="kim")
    decisions.record(engine, domain="handoff", check_key="handoff.2", item_id="R-1", decision="agree", reviewer="lee")
    got = decisions.read(engine, "handoff")["handoff.2"]["R-1"]
    assert got["kim"]["decision"] == "disagree" and got["kim"]["note"] == "아님" and got["lee"]["decision"] == "agree"
    with pytest.raises(ValueError):
        decisions.record(engine, domain="handoff", check_key="handoff.2", item_id="R-1", decision="maybe", reviewer="kim")
    with pytest.raises(ValueError):
        decisions.record(engine, domain="handoff", check_key="handoff.2", item_id="R-1", decision="agree", reviewer="  ")


@pytest.fixture
def client(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'wh.sqlite'}"
    monkeypatch.setenv("WAREHOUSE_URL", url)
    config = WebConfig(home=tmp_path, warehouse_url=url, raw_dir=SEEDS, token="s3cret", upload_max_bytes=300_000, upload_max_rows=500,
                       admin_warm=False)
    with TestClient(create_app(config), base_url="http://127.0.0.1:8765") as c:
        yield c


def test_token_is_required_and_remembered(client):
    assert client.get("/admin/live_pick").status_code == 401
    first = client.get("/admin/live_pick?token=s3cret")
    assert first.status_code == 200 and "content-security-policy" in first.headers
    assert client.get("/admin/live_pick/runs/all/report").status_code == 200  # the cookie carries it


def test_uploads_keep_to_their_folder_and_limits(client, tmp_path):
    client.get("/admin/live_pick?token=s3cret")
    evil = client.post("/admin/live_pick/upload", files=[("files", ("../../live_chat.jsonl.sh", b"{}\n"))], follow_redirects=False)
    assert evil.status_code == 400 and "live_chat.jsonl.sh" in evil.text
    big = client.post("/admin/live_pick/upload", files=[("files", ("live_chat.jsonl", b"{}\n" * 600))], follow_redirects=False)
    assert big.status_code == 413
    script = "<img src=x onerror=alert(1)>.jsonl"
    shown = client.post("/admin/live_pick/upload", files=[("files", (script, b"{}\n"))], follow_redirects=False)
    assert "<img src=x" not in shown.text and "&lt;img src=x onerror=alert(1)&gt;.jsonl" in shown.text
    assert not list((tmp_path / "uploads").rglob("*.jsonl")) if (tmp_path / "uploads").exists() else True


def test_every_uploaded_part_is_closed_whether_taken_or_refused(client, monkeypatch):
    """The parts spool to temporary files: each is closed once the answer is made, also on a refusal."""
    from starlette.datastructures import UploadFile

    parts: list[UploadFile] = []
    made = UploadFile.__init__

    def remember(self, *args, **kwargs):
        made(self, *args, **kwargs)
        parts.append(self)

    monkeypatch.setattr(UploadFile, "__init__", remember)
    client.get("/admin/live_pick?token=s3cret")
    refused = client.post("/admin/live_pick/upload", files=[("files", ("notes.txt", b"{}\n"))], follow_redirects=False)
    assert refused.status_code == 400
    sample = [("files", (f.name, f.read_bytes())) for f in sorted((SEEDS / "live_pick").glob("*.jsonl"))]
    taken = client.post("/admin/live_pick/upload", files=sample, follow_redirects=False)
    assert taken.status_code == 303
    assert len(parts) == 1 + len(sample) and all(p.file.closed for p in parts)


def test_cli_review_and_the_page_share_the_decision_store(client, tmp_path):
    client.get("/admin/live_pick?token=s3cret")
    judged = domains.get("live_pick").judge_dir(SEEDS / "live_pick")
    item = sample(check_by_key("live_pick.1"), judged.rows, judged.normalised.tables)[0]
    code, _, err = run("review", "live_pick", "--input", SEEDS / "live_pick", "--check", "live_pick.1", "--decide", f"{item}=agree",
                       "--note", "넘겼습니다", "--reviewer", "kim", "--out", tmp_path / "review.jsonl")
    assert code == 0, err
    assert "decided 1, agreed 1" in err
    written = [json.loads(x) for x in (tmp_path / "review.jsonl").read_text(encoding="utf-8").splitlines()]
    assert next(r for r in written if r["msg_id"] == item)["reviewer_decision"] == "agree"
    page = client.get("/admin/live_pick/runs/all/review/live_pick.1").text
    assert "판단한 항목 1건" in page
    report = client.get("/admin/live_pick/runs/all/report").text
    assert "1 / 1" in report
    other = next(i for i in sample(check_by_key("live_pick.1"), judged.rows, judged.normalised.tables) if i != item)
    saved = client.post("/admin/live_pick/runs/all/review/live_pick.1", data={"item": other, "decision": "disagree", "reviewer": "lee"},
                        follow_redirects=False)
    assert saved.status_code == 303
    code, _, err = run("review", "live_pick", "--input", SEEDS / "live_pick", "--check", "live_pick.1")
    assert code == 0 and "decided 2, agreed 1" in err


def test_check_keys_match_what_the_rules_report_and_titles_are_korean():
    """The Korean title table (and so Dagster's check names) has exactly the ids each domain's checks return."""
    from evals.check_titles import keys, title

    for name in domains.names():
        d = domains.get(name)
        judged = d.judge_dir(SEEDS / name)
        results, _ = d.check_dir(SEEDS / name, judged.rows)
        assert [r.id for r in results] == ["schema", *keys(name), "recompute"], name
        assert all(any("가" <= ch <= "힣" for ch in title(name, r.id)) for r in results), name


def test_the_nightly_report_fills_person_checked_rows_from_stored_decisions(tmp_path):
    """The decision store is read by the Dagster report too: the same sample, the same n/d."""
    from assets import live_pick as live_pick_assets
    from tests.assets.helpers import materialise_day, resources_in

    day = "2026-09-08"
    res = resources_in(tmp_path)
    d = domains.get("live_pick")
    judged = d.judge_dir(SEEDS / "live_pick", day=day)
    ids = sample(check_by_key("live_pick.1"), judged.rows, judged.normalised.tables)
    engine = res["warehouse"].engine
    decisions.record(engine, domain="live_pick", check_key="live_pick.1", item_id=ids[0], decision="agree", reviewer="kim")
    decisions.record(engine, domain="live_pick", check_key="live_pick.1", item_id=ids[1], decision="disagree", reviewer="kim")
    assert materialise_day(live_pick_assets.assets, res, day).success
    report = json.loads((tmp_path / "reports" / "live_pick" / day / "report.json").read_text(encoding="utf-8"))
    metric = next(m for m in report["metrics"] if m["key"] == "live_pick.1")
    assert (metric["ratio"]["numerator"], metric["ratio"]["denominator"]) == (1, 2)
    assert any(c["id"] == "1.verdict_enum" and "enum" in c["title"] and "확인합니다" in c["title"] for c in report["checks"])


def test_a_diff_against_an_upload_on_another_golden_file_says_so_at_the_top(client):
    """Two runs on different pinned inputs: the admin diff says which at its top; per item it still
    says regressed / improved against each run's own labels."""
    import time

    client.get("/admin/retry?token=s3cret")
    files = []
    for f in sorted((SEEDS / "retry").glob("*.jsonl")):
        data = f.read_bytes()
        if f.name == "golden.jsonl":  # EV-1002 relabelled one_shot: the verdict now matches its label
            data = data.replace(b'"EV-1002", "verdict": "reworded_retry"', b'"EV-1002", "verdict": "one_shot"')
        files.append(("files", (f.name, data)))
    posted = client.post("/admin/retry/upload", files=files, follow_redirects=False)
    upload = posted.headers["location"].rsplit("/", 1)[-1]
    for _ in range(600):
        if client.get(f"/admin/retry/uploads/{upload}/status").json()["state"] == "done":
            break
        time.sleep(0.1)
    page = client.get(f"/admin/retry/diff?a=all&b=up-{upload}").text
    top = page[:page.index("id='items'")]
    assert "두 실행의 고정 입력이 다릅니다" in top and "골든 라벨이 다릅니다" in top
    assert "규칙 설정이 다릅니다" not in top
    # The verdict did not move, only its label: the item is the same, marked as relabelled where listed.
    everything = client.get(f"/admin/retry/diff?a=all&b=up-{upload}&view=all").text
    row = everything[everything.index("EV-1002"):]
    assert "라벨 바뀜" in row[:row.index("</tr>")] and "data-kind='same'" in everything[:everything.index("EV-1002")].rsplit("<tr", 1)[-1]


def test_the_front_door_the_korean_404_and_pages_without_reprs_or_null(client):
    index = client.get("/")
    assert index.status_code == 200
    for href in ('href="/live"', 'href="/admin"', 'href="/suggestions"'):
        assert href in index.text
    missing = client.get("/nowhere", headers={"accept": "text/html"})
    assert missing.status_code == 404 and "찾는 페이지가 없습니다" in missing.text and 'href="/live"' in missing.text
    assert client.get("/nowhere", headers={"accept": "application/json"}).json()["code"] == "not_found"

    client.get("/admin/live_pick?token=s3cret")
    review = client.get("/admin/live_pick/runs/all/review/live_pick.1").text
    item = client.get("/admin/live_pick/runs/all/items/MSG-20260908-1409").text  # tags missing, evidence value null
    for text in (review, item):
        for repr_ in ("['", "']", ">True<", ">False<", " True<", ">null<", "None<"):
            assert repr_ not in text, repr_
    assert "(비어 있음)" in item


def test_a_value_reads_as_people_say_it():
    from web.admin.page import cell

    assert cell(["노래", "게임"]) == "노래, 게임"
    assert cell(True) == "예" and cell(False) == "아니오"
    assert "비어 있음" in cell(None) and "없음" in cell([])
    assert cell(5000) == "5,000" and cell({"노래": 1}) == "노래 1"
    assert cell("<b>") == "&lt;b&gt;"


def test_a_dataset_error_reads_in_korean_on_the_page():
    from web.messages import dataset_error

    assert dataset_error("no line is a JSON object; is this a JSON Lines file?").startswith("JSON 객체인 줄이 하나도 없습니다")
    assert dataset_error("not UTF-8 text (invalid start byte on line 7)") == "UTF-8 텍스트가 아닙니다 (7번째 줄)."
    assert dataset_error("cannot be read (Permission denied)") == "파일을 읽을 수 없습니다 (Permission denied)."
    assert "서비스 로그" in dataset_error("KeyError: 'x'")
