"""What a report says fits the run it was made from: nothing vacuous on an empty day, manual checks
only where the seed defines them (each with its own sample), intervals only on sample proportions,
disclosures only where true, and the inputs it was made from pinned. Each read from the generated
Markdown, HTML and JSON."""

from __future__ import annotations

import hashlib
import json

import pytest

from evals.disclosures import mark_fitted
from evals.manual_checks import checks_of
from evals.pins import config_pin
from evals.render import EMPTY_NOTICE, NO_MANUAL
from evals.report import CENSUS, MET, NO_DATA, NOT_MET
from evals.stats import Ratio
from evals import domains
from tests.conftest import SEEDS
from tests.evals.reports import copy_sample, forms, html_text, make_report, md_section

NAMES = ("persona", "live_pick", "retry", "handoff")
CRITERION_VERDICTS = (MET, NOT_MET, NO_DATA)
SEED_CHECKS = {"persona": {"persona.1", "persona.2"}, "live_pick": {"live_pick.1", "live_pick.2"}, "retry": set(),
               "handoff": {"handoff.1", "handoff.2"}}
"""The 수동 검증 lists of seeds 000–003 (002, retry, lists none)."""


# -- nothing vacuous -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_a_day_with_nothing_judged_says_so_and_gives_no_criterion_verdict(name):
    _, report = make_report(name, day="2026-11-29")
    md, html, data = forms(report)
    assert data["empty"] is True and data["judged"] == 0
    assert not [m["name"] for m in data["metrics"] if m["status"] in CRITERION_VERDICTS]
    for text in (md, html_text(html)):
        assert EMPTY_NOTICE in text
        assert not any(v in text for v in CRITERION_VERDICTS), name
        assert "✅ 통과" not in text  # a check with nothing to check did not pass anything
    checks = md_section(md, "자동 검증")
    assert checks.count("검사할 판정 없음") == len(report.checks)
    # The checks metric keeps no "n / n" of checks that looked at nothing.
    automatic = next(m for m in data["metrics"] if m["name"] == "자동 검증 통과")
    assert automatic["ratio"] is None and automatic["status"] == "판정한 항목 없음"


@pytest.mark.parametrize("name", NAMES)
def test_manual_checks_are_exactly_the_seeds_each_with_its_own_sample(name):
    _, report = make_report(name)
    md, html, data = forms(report)
    keyed = {m["key"]: m for m in data["metrics"] if m["key"]}
    assert set(keyed) == SEED_CHECKS[name] == {c.key for c in checks_of(name)}
    manual = md_section(md, "수동 검증")
    if not keyed:
        assert NO_MANUAL in manual and NO_MANUAL in html_text(html) and "표본" not in manual
        assert "사람이 확인" not in md
        return
    for key, m in keyed.items():
        drawn = data["manual_checks"][key]
        n = len(drawn["ids"])
        own = f"표본 {n}건 (후보 {drawn['candidates']}건" if n else "표본 없음 — "
        assert own in m["note"] and own in manual, (key, m["note"])
        assert n == min(20, drawn["candidates"] or 0)


def test_each_sample_is_its_own_not_one_sentence_for_every_row():
    _, report = make_report("persona")
    notes = {m.key: m.note for m in report.metrics if m.key}
    assert notes["persona.1"] != notes["persona.2"]
    counts = {k: report.manual[k]["candidates"] for k in notes}
    assert len(set(counts.values())) == 2, counts  # two checks, two candidate sets


def test_a_check_without_candidates_says_there_is_no_sample_and_why():
    _, report = make_report("handoff", day="2026-11-29")
    md, _, data = forms(report)
    for key in ("handoff.1", "handoff.2"):
        m = next(x for x in data["metrics"] if x["key"] == key)
        assert m["status"].endswith("표본 없음") and "이 범위에 후보(" in m["note"] and m["ratio"] is None
    assert "표본 20건" not in md


@pytest.mark.parametrize("name", NAMES)
def test_intervals_only_on_sample_proportions(name):
    _, report = make_report(name)
    md, html, data = forms(report)
    census = {"자동 검증 통과", "격리된 행", "판정에서 뺀 턴", "판정 대상", "목록에 올린 대화", "제때 연결", "판정 보류", "재문의 잠정"}
    rows = {line.split("**")[1]: [c.strip() for c in line.strip().strip("|").split(" | ")]
            for line in md_section(md, "지표").splitlines() if line.startswith("| **")}
    for m in data["metrics"]:
        if m["ratio"] is None:
            continue
        cells = rows[m["name"]]
        if m["name"] in census:
            assert m["census"] and m["ratio"]["wilson_low"] is None and cells[2] == CENSUS, m["name"]
        else:
            assert not m["census"] and m["ratio"]["wilson_low"] is not None and cells[2].startswith("["), m["name"]
    assert any(m["census"] for m in data["metrics"]) and CENSUS in html_text(html)


# -- next steps are the run's own (see also test_next_steps.py) --------------------------------------


def test_an_empty_day_names_its_raw_counts_in_its_first_step():
    _, report = make_report("live_pick", day="2026-11-29")
    md, _, _ = forms(report)
    first = md_section(md, "다음 할 일").splitlines()[2]
    assert first.startswith("1. 이 범위에는 판정한 항목이 없습니다") and "live_chat 원본 0줄" in first


# -- disclosures that fit the run -----------------------------------------------------------------


def test_the_sample_discloses_synthetic_input_and_labels_by_the_rules_authors():
    _, report = make_report("persona")
    md, html, data = forms(report)
    assert data["title"].endswith("(합성 데이터 기준)")
    honesty = md.split("## 지표")[0]
    assert "입력은 이 저장소의 샘플 데이터(seeds/)입니다" in honesty
    assert "규칙을 쓴 같은 팀이 만든 합성 라벨" in honesty and "labelled_by: planner (synthetic)" in honesty
    assert "입력은 이 저장소의 샘플 데이터" in html_text(html)


def test_other_input_and_other_labellers_get_no_synthetic_disclosure(tmp_path):
    folder = copy_sample("retry", tmp_path)
    labels = [json.loads(x) for x in (folder / "golden.jsonl").read_text(encoding="utf-8").splitlines()]
    (folder / "golden.jsonl").write_text("".join(json.dumps({**g, "labelled_by": "QA 팀 (제품)"}, ensure_ascii=False) + "\n"
                                                 for g in labels), encoding="utf-8")
    _, report = make_report("retry", folder)
    md, html, data = forms(report)
    assert "합성" not in data["title"] and "샘플 데이터" not in md and "합성 라벨" not in md
    assert "골든 라벨을 단 사람: QA 팀 (제품)" in md
    (folder / "golden.jsonl").write_text("".join(json.dumps({k: v for k, v in g.items() if k != "labelled_by"}, ensure_ascii=False) + "\n"
                                                 for g in labels), encoding="utf-8")
    _, report = make_report("retry", folder)
    assert any("labelled_by" in h and "알 수 없습니다" in h for h in report.honesty)
    _, report = make_report("retry", folder, golden=False)
    assert not any("라벨" in h and "labelled_by" in h for h in report.honesty)


def test_a_generated_input_says_it_was_generated(tmp_path):
    out = tmp_path / "gen"
    domains.get("retry").generate(20, 1, out)
    _, report = make_report("retry", out, golden=False)
    assert any(h.startswith("입력은 `verdicts generate`가 만든 합성 데이터입니다") for h in report.honesty)


def test_a_tagger_fitted_to_the_sample_is_disclosed_only_on_that_sample(tmp_path):
    _, on_sample = make_report("live_pick", tags="kiwi")
    md, _, data = forms(on_sample)
    assert any("topic_lemmas.yaml" in h and "표본에 맞춘 값" in h for h in data["honesty"])
    assert data["pins"]["tagger"].startswith("kiwi (topic_lemmas.yaml sha256:")
    _, elsewhere = make_report("live_pick", copy_sample("live_pick", tmp_path), tags="kiwi")
    assert not any("표본에 맞춘 값" in h for h in elsewhere.honesty)
    _, gold = make_report("live_pick")
    assert not any("표본에 맞춘 값" in h for h in gold.honesty)


def test_a_fitted_figure_carries_its_held_out_figure_beside_it():
    _, report = make_report("retry")
    mark_fitted(report, "판정 일치", "이 값은 라벨을 보며 규칙을 고친 표본에서 잰 값입니다.", held_out=Ratio(7, 10), held_out_label="따로 둔 10건")
    md, html, data = forms(report)
    m = next(x for x in data["metrics"] if x["name"] == "판정 일치")
    assert m["held_out"]["display"] == "7 / 10 (70.0%)" and m["held_out_label"] == "따로 둔 10건"
    assert "12 / 14 (85.7%) · 따로 둔 10건 7 / 10 (70.0%)" in md and "12 / 14 (85.7%) · 따로 둔 10건 7 / 10 (70.0%)" in html_text(html)
    assert data["honesty"][0] == "이 값은 라벨을 보며 규칙을 고친 표본에서 잰 값입니다."


# -- pinned inputs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_every_report_pins_its_golden_file_rules_configuration_tagger_and_code(name):
    _, report = make_report(name)
    md, html, data = forms(report)
    golden = SEEDS / name / "golden.jsonl"
    pins = data["pins"]
    assert pins["golden"] == {"file": "golden.jsonl", "sha256": hashlib.sha256(golden.read_bytes()).hexdigest(),
                              "rows": len(golden.read_text(encoding="utf-8").splitlines())}
    assert pins["rules_config"] == config_pin(domains.get(name).spec.load_config())
    assert pins["tagger"] == ("gold" if name == "live_pick" else None)
    assert pins["code_version"].startswith(("git ", "chat-verdicts "))
    line = next(x for x in md.splitlines() if x.startswith("고정 입력:"))
    assert f"sha256:{pins['golden']['sha256'][:12]} · {pins['golden']['rows']}줄" in line and pins["rules_config"][:12] in line
    assert pins["code_version"] in html_text(html)
