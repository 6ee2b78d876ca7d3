"""The verdict board as markup: grouping by the verdict key, the expanded evidence, the panels
that are always there, quarantine and held items, the domain extras, and escaping.

Pages are built from the sample data through `evals.board`; the browser tests open them.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter

import pandas as pd
import pytest

from evals import board as B
from rules.common import reason_words
from evals.board import board_from_dir, markdown_html, render_board
from evals.markdown import md_table
from evals import domains
from rules.common.checks import CheckResult
from tests.board import KNOWN, PAYLOADS, SEEDS, Page, available, board_spec, sample_board, sample_parts, with_payloads


def domain_param(name: str):
    return pytest.param(name, id=name, marks=pytest.mark.skipif(
        not available(name), reason=f"domain {name} is not registered in evals.domains.names() yet"))


ALL = [domain_param(n) for n in domains.names()]


@pytest.fixture(scope="module")
def pages():
    cache: dict = {}

    def get(name: str, golden: bool = False) -> tuple[str, Page]:
        if (name, golden) not in cache:
            page = render_board(sample_board(name, golden))
            cache[name, golden] = page, Page(page)
        return cache[name, golden]

    return get


# -- grouping ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_every_row_is_one_item_under_its_verdict(name, pages):
    spec = board_spec(name)
    _, rows, _, _ = sample_parts(name)
    _, page = pages(name)
    assert len(page.items) == len(rows)
    assert Counter(i["verdict"] for i in page.items) == Counter(r[spec.verdict_key] for r in rows)
    assert sorted(i["id"] for i in page.items) == sorted(r[spec.id_field] for r in rows)
    by_id = {r[spec.id_field]: r for r in rows}
    for item in page.items:
        row = by_id[item["id"]]
        summary = " ".join(item["summary"].split())
        assert summary.startswith(f"{row[spec.verdict_key]} {row[spec.id_field]}"), summary  # label · id + summary
        assert " ".join(row[spec.summary_field].split()) in summary


@pytest.mark.parametrize("name", ALL)
def test_chips_show_every_key_verbatim_with_its_count(name, pages):
    spec = board_spec(name)
    _, rows, _, _ = sample_parts(name)
    html, _ = pages(name)
    counts = Counter(r[spec.verdict_key] for r in rows)
    chips = re.findall(r"data-verdict-filter='([^']*)' aria-pressed='false'><span class='label [^']*'>([^<]*)</span><b>(\d+)</b>", html)
    assert [(k, n) for k, _, n in chips] == [(k, str(counts.get(k, 0))) for k in spec.order]
    assert all(a == b for a, b, _ in chips)


@pytest.mark.parametrize("name", [domain_param(n) for n in domains.names() if n != "live_pick"])
def test_default_layout_puts_each_item_in_its_verdict_group(name, pages):
    spec = board_spec(name)
    _, page = pages(name)
    group_of = {f"g-{i}": v for i, v in enumerate(spec.order)}
    for item in page.items:
        assert group_of[item["container"]] == item["verdict"]
    # Groups appear in the verdict order, each heading with its count.
    headings = [page.texts[f"g-{i}"].split("건")[0].strip() for i in range(len(spec.order))]
    assert [h.rsplit(" ", 1)[0] for h in headings] == list(spec.order)


def test_a_large_group_starts_closed_and_small_ones_open(pages):
    html, _ = pages("persona")
    consistent = re.search(r"<details class='group' id='g-0' data-group-verdict='consistent'( open)?>", html)
    job = re.search(r"<details class='group' id='g-2' data-group-verdict='job_conflict'( open)?>", html)
    assert consistent and consistent.group(1) is None  # 384 rows
    assert job and job.group(1) == " open"  # 23 rows


@pytest.mark.skipif(not available("live_pick"), reason="live_pick not registered")
def test_live_pick_windows_put_three_picks_on_top_then_reasons(pages):
    from rules.live_pick import verdicts as V

    _, rows, _, _ = sample_parts("live_pick")
    html, page = pages("live_pick")
    windows = Counter((r["character_id"], r["window_start"]) for r in rows)
    by_id = {r["msg_id"]: r for r in rows}
    seen: dict[str, list[dict]] = {}
    for item in page.items:
        seen.setdefault(item["container"], []).append(by_id[item["id"]])
    assert len(seen) == len(windows)
    for members in seen.values():
        assert len({(r["character_id"], r["window_start"]) for r in members}) == 1  # one broadcast, one window
        picks = [r for r in members if r["verdict"] == V.PICK]
        assert members[:len(picks)] == picks and len(picks) <= 3
        assert [r["rank_in_window"] for r in picks] == list(range(1, len(picks) + 1))
        rest = [V.ORDER.index(r["verdict"]) for r in members[len(picks):]]
        assert rest == sorted(rest)  # others grouped by reason, in verdict order
    # No live path measures latency yet: every window says so with a dash.
    assert html.count("판정 지연 —") == len(windows)


@pytest.mark.skipif(not available("live_pick"), reason="live_pick not registered")
def test_live_pick_latency_shows_when_given():
    board = sample_board("live_pick", latency={("CH-0007", "2026-09-08T21:14:00"): 1.234})
    page = Page(render_board(board))
    window = page.item("MSG-20260908-1401")["container"]
    assert "판정 지연 1.23초" in page.texts[window]
    other = page.item("MSG-20260908-4402")["container"]
    assert "판정 지연 —" in page.texts[other]


# -- the expanded row --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_known_item_shows_its_evidence_and_numbers(name, pages):
    id_, evidence, fields = KNOWN[name]
    _, page = pages(name)
    item = page.item(id_)
    assert not item["open"]  # closed until the operator expands it
    for row in evidence:
        assert any(cells[:3] == row for cells in item["evidence"]), (row, item["evidence"])
    for k, v in fields.items():
        assert item["fields"][k] == v


@pytest.mark.parametrize("name", ALL)
def test_evidence_table_has_origin_field_value_agg(name, pages):
    spec = board_spec(name)
    _, rows, _, _ = sample_parts(name)
    html, page = pages(name)
    origin = "source" if name == "persona" else "dataset"
    assert f"<th>{origin}</th><th>field</th><th>value</th><th>agg</th>" in html
    row = next((r for r in rows if any(ev.get("agg") for ev in r["evidence"])), rows[0])
    item = page.item(row[spec.id_field])
    assert [c[3] for c in item["evidence"]] == [ev.get("agg") or "" for ev in row["evidence"]]


def test_values_keep_their_json_kind():
    assert B.value_html(None) == "<span class='null'>null</span>"
    assert B.value_html("") == "<span class='null'>\"\"</span>"
    assert B.value_html(True) == "true" and B.value_html(0) == "0"
    assert B.value_html(["a", "<b>"]) == "[&quot;a&quot;, &quot;&lt;b&gt;&quot;]"


# -- always on the page ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_every_check_is_listed_with_pass_or_fail(name, pages):
    _, _, report, _ = sample_parts(name)
    html, page = pages(name)
    listed = re.findall(r"<li class='(pass|fail)'><span class='mark'>(통과|실패)</span> <code>([^<]*)</code>", html)
    assert [(c.id, "pass" if c.passed else "fail") for c in report.checks] == [(i, cls) for cls, _, i in listed]
    assert any(c.id == "schema" for c in report.checks)
    assert f"{sum(c.passed for c in report.checks)} / {len(report.checks)} 통과" in page.texts["checks"]


@pytest.mark.skipif(not available("live_pick"), reason="live_pick not registered")
def test_a_failing_check_says_so_with_its_ids():
    board = sample_board("live_pick")
    board.report = dataclasses.replace(board.report, checks=[CheckResult("schema", "output JSON Schema", True),
                                                  CheckResult("5.rank", "rank re-computed", False, ["PICK-9"], "PICK-9: rank 2, expected 1")])
    page = Page(render_board(board))
    assert "1 / 2 통과" in page.texts["checks"]
    assert "실패 5.rank rank re-computed" in " ".join(page.texts["checks"].split())
    assert "PICK-9: rank 2, expected 1" in page.texts["checks"]


@pytest.mark.parametrize("name", ALL)
def test_notes_have_the_three_parts(name, pages):
    _, _, report, _ = sample_parts(name)
    _, page = pages(name)
    notes = page.texts["notes"]
    auto, rest = notes.split("수동 · 사람이 봅니다")
    manual, honesty = rest.split("정직 경계선")
    assert "자동 · 코드가 판정합니다" in auto and "원본 = 정규화 + 격리가 데이터셋마다 맞습니다" in auto
    for m in report.metrics:
        if m.status == "사람이 확인":
            assert m.name in manual
    for line in report.honesty:
        assert line in honesty
    assert "샘플 데이터" in honesty


@pytest.mark.parametrize("name", ALL)
def test_self_score_is_blank_without_golden_labels(name, pages):
    _, page = pages(name)
    text = page.texts["self-score"]
    assert "비워 둡니다" in text
    assert not re.search(r"\d+ / \d+", text)


@pytest.mark.parametrize("name", ALL)
def test_self_score_shows_golden_agreement_when_labels_are_given(name, pages):
    _, _, report, _ = sample_parts(name, golden=True)
    _, page = pages(name, golden=True)
    text = page.texts["self-score"]
    agreement = next(m for m in report.metrics if m.name == "판정 일치")
    assert "비워 둡니다" not in text
    assert agreement.ratio.format() in text and agreement.ratio.format_interval() in text
    assert f"틀린 사례 {len(report.wrong_cases)}건" in text


@pytest.mark.skipif(not available("live_pick"), reason="live_pick not registered")
def test_wrong_cases_link_to_their_items(pages):
    html, page = pages("live_pick", golden=True)
    _, _, report, _ = sample_parts("live_pick", golden=True)
    case = report.wrong_cases[0]
    anchor = page.item(case.id)["anchor"]
    assert f"<a href='#{anchor}'><code>{case.id}</code></a>" in html


# -- quarantine and held items -----------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_quarantined_rows_have_their_own_section_with_reasons(name, pages):
    spec = board_spec(name)
    _, rows, report, _ = sample_parts(name)
    _, page = pages(name)
    section = " ".join(page.texts["quarantine"].split())
    assert len(report.quarantine) > 0
    for r in report.quarantine.to_dict("records"):
        assert " ".join(str(r["reason"]).split()) in section
        assert r["reason_code"] in section
    for x in report.excluded:
        assert " ".join(x["reason"].split()) in section
    # Every reason code with Korean words shows them to the reader, in the excluded rows' table too.
    held = section.split(spec.excluded_heading)[-1]
    for code in {x["code"] for x in report.excluded} & set(reason_words.REASONS):
        assert reason_words.REASONS[code] in held, code
    for code in set(report.quarantine["reason_code"]) & set(reason_words.REASONS):
        assert reason_words.REASONS[code] in section, code
    # The rest of the page is unaffected: every judged row is still an item.
    assert len(page.items) == len(rows)
    assert spec.excluded_heading in section


@pytest.mark.skipif(not available("live_pick"), reason="live_pick not registered")
def test_a_quarantined_line_is_not_an_item(pages):
    _, page = pages("live_pick")
    assert "MSG-20260908-3411" in page.texts["quarantine"]
    assert not [i for i in page.items if i["id"] == "MSG-20260908-3411"]


@pytest.mark.skipif(not available("persona"), reason="persona not registered")
def test_persona_excluded_turns_are_listed_with_their_reason(pages):
    _, _, report, _ = sample_parts("persona")
    _, page = pages("persona")
    reasons = {x["code"] for x in report.excluded}
    assert reasons == {"reply_empty", "profile_unmapped"}
    assert f"판정에서 뺀 항목 (분모 밖) {len(report.excluded)}건" in " ".join(page.texts["quarantine"].split())


@pytest.mark.skipif(not available("handoff"), reason="handoff not registered")
def test_handoff_header_aggregates_and_held_rooms(pages):
    html, page = pages("handoff")
    _, _, report, _ = sample_parts("handoff")
    heading, aggregates = next((h, b) for h, b in report.extra_sections if h.startswith("집계"))
    # The sample holds five days of rooms: the header says so and is not "하루 집계" (a day's).
    assert heading == "집계 · 5일 (2026-09-30 ~ 2026-10-05)" and f"<h2>{heading}</h2>" in html and "하루 집계" not in html
    top = html.split("<div class='layout")[0]
    for name, n in B.md_table_rows(aggregates)[1:]:
        assert f"<span>{name}</span><b>{n}</b>" in top
    held = " ".join(page.texts["quarantine"].split())
    assert "판정 보류" in held and "보류한 대화" in held


@pytest.mark.skipif(not available("retry"), reason="retry not registered")
def test_retry_baseline_per_surface_and_sweep(pages):
    html, page = pages("retry")
    _, rows, report, _ = sample_parts("retry")
    baseline = " ".join(page.texts["baseline"].split())
    for surface in {r["surface_key"] for r in rows}:
        assert surface in baseline
    assert "0.33" in baseline  # summarize, shown rounded
    steps = report.sweep
    assert html.count("<g class='step") == len(steps)
    one = next(s for s in steps if s.factor == 1)
    assert f"<g class='step one'><title>×1: exact_retry {one.exact}, reworded_retry {one.reworded}</title>" in html


@pytest.mark.skipif(not available("persona"), reason="persona not registered")
def test_persona_prompt_comparison_and_review_queue(pages):
    _, _, _, extra = sample_parts("persona")
    _, page = pages("persona")
    c = extra["comparison"]
    assert (c.a, c.b) == ("p12", "p13")
    text = page.texts["comparison"]
    assert c.rate_a.format() in text and c.rate_b.format() in text and c.test in text
    queue, candidates, size = extra["review"]
    assert f"후보 {candidates}턴 가운데 {len(queue)}턴" in page.texts["review"]
    assert len(queue) == size


@pytest.mark.skipif(not available("persona"), reason="persona not registered")
def test_persona_without_comparison_has_no_comparison_section():
    page = Page(render_board(sample_board("persona", comparison=None, review=None)))
    assert "comparison" not in page.texts and "review" not in page.texts


# -- sample data, input folders ---------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_sample_view_says_so(name, tmp_path):
    domain = domains.get(name)
    sample = board_from_dir(domain, SEEDS / name, sample=True)
    assert "샘플 데이터 (sample data)" in sample and f"seeds/{name}/" in sample
    copy_dir = tmp_path / name
    copy_dir.mkdir()
    for f in (SEEDS / name).glob("*.jsonl"):
        (copy_dir / f.name).write_bytes(f.read_bytes())
    given = board_from_dir(domain, copy_dir)
    assert "sample data" not in given
    assert len(Page(given).items) == len(Page(sample).items)


@pytest.mark.parametrize("name", ALL)
def test_the_page_fetches_nothing(name, pages):
    html, page = pages(name)
    assert not re.search(r"<link|<img|<iframe|\bsrc=|@import|url\(", html)
    assert page.scripts == 2  # the JSON data block and the inline script
    data = json.loads(re.search(r"<script type='application/json' id='board-data'>(.*?)</script>", html).group(1))
    assert data["domain"] == name and data["sample"] is True


def test_caps_long_groups_but_counts_everything(monkeypatch):
    if not available("persona"):
        pytest.skip("persona not registered")
    monkeypatch.setattr(B, "MAX_ITEMS_PER_GROUP", 5)
    _, rows, _, _ = sample_parts("persona")
    html = render_board(sample_board("persona"))
    n = sum(r["persona_code"] == "consistent" for r in rows)
    assert f"표시 한도를 넘은 {n - 5}건" in html
    assert f"<b>{n}</b>" in html
    assert len(Page(html).items) < len(rows)


@pytest.mark.skipif(not available("live_pick"), reason="live_pick not registered")
def test_an_unknown_verdict_gets_its_own_group_after_the_known_ones():
    from rules.live_pick import verdicts as V

    board = sample_board("live_pick")
    board.rows.append({**board.rows[0], "msg_id": "MSG-X", "verdict": "<b>새 판정</b>"})
    board.rows.append({**board.rows[0], "msg_id": "MSG-Y", "verdict": None})
    html = render_board(board)
    page = Page(html)
    assert page.item("MSG-X")["verdict"] == "<b>새 판정</b>"
    assert page.item("MSG-Y")["verdict"] == "(판정 없음)"
    chips = re.findall(r"data-verdict-filter='([^']*)'", html)
    assert chips == [*V.ORDER, "&lt;b&gt;새 판정&lt;/b&gt;", "(판정 없음)"]


# -- escaping ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_log_text_is_escaped_everywhere(name):
    spec = board_spec(name)
    board = sample_board(name)
    board.rows = with_payloads(board.rows, spec)
    q = pd.DataFrame([{"dataset": PAYLOADS[0], "file": "x.jsonl", "line": 7, "id": PAYLOADS[1], "reason_code": "invalid_json",
                       "reason": PAYLOADS[0], "raw": PAYLOADS[1]}])
    board.report = dataclasses.replace(board.report, quarantine=q, scope=f"</script>{PAYLOADS[0]}",
                                       excluded=[{"id": PAYLOADS[1], "code": "x", "reason": PAYLOADS[0]}],
                                       extra_sections=[(PAYLOADS[0], md_table(["a", "b"], [[PAYLOADS[0], PAYLOADS[1]]]))])
    html = render_board(board)
    for payload in PAYLOADS:
        assert payload not in html
    assert "<img" not in html and "onerror=\"" not in html
    assert html.count("<script") == 2 and html.count("</script>") == 2
    page = Page(html)
    for p in PAYLOADS:  # shown as text, in summaries and evidence
        assert any(p in i["summary"] for i in page.items)
        assert any(cells[2] == p for i in page.items for cells in i["evidence"])
    assert PAYLOADS[0] in page.texts["quarantine"] and PAYLOADS[1] in page.texts["quarantine"]


def test_report_markdown_is_escaped_once():
    md = md_table(["항목", "값"], [["a|b", "<b>굵게</b> & 1"]]) + "\n\n- `코드` **굵게**\n\n문단 <i>"
    out = markdown_html(md)
    assert "<td>a|b</td><td>&lt;b&gt;굵게&lt;/b&gt; &amp; 1</td>" in out
    assert "<li><code>코드</code> <b>굵게</b></li>" in out
    assert "<p>문단 &lt;i&gt;</p>" in out
