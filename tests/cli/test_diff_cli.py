"""`verdicts diff A B`: per item regressed / improved / changed against the baseline, the different
items with the regressions first, the metrics that moved, what differs in the pinned inputs said
at the top, and `--fail-on-regression` for CI. Read from the Markdown printed and the JSON written."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.cli.helpers import run
from tests.conftest import SEEDS


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three `verdicts eval` runs of live_pick: the sample; a copy whose data moves five labelled lines
    (a cooldown of 240 → 180 s, a viewer's closeness 4 → 0); the sample judged against an edited golden file."""
    root = tmp_path_factory.mktemp("diff")
    changed, relabelled = root / "changed", root / "relabelled"
    for folder in (changed, relabelled):
        shutil.copytree(SEEDS / "live_pick", folder / "live_pick")
    sheet = changed / "live_pick" / "character_sheet.jsonl"
    sheet.write_text(sheet.read_text(encoding="utf-8").replace('"reply_cooldown_sec": 240', '"reply_cooldown_sec": 180'), encoding="utf-8")
    viewers = changed / "live_pick" / "viewer_relation.jsonl"
    viewers.write_text(viewers.read_text(encoding="utf-8").replace('"nickname": "미르냥", "closeness_level": 4', '"nickname": "미르냥", "closeness_level": 0', 1),
                       encoding="utf-8")
    golden = relabelled / "live_pick" / "golden.jsonl"
    golden.write_text(golden.read_text(encoding="utf-8").replace('"MSG-20260908-2401", "verdict": "지금 답변할 질문"',
                                                                 '"MSG-20260908-2401", "verdict": "방금 답한 주제"'), encoding="utf-8")
    out = {}
    for name, source in (("base", SEEDS), ("changed", changed), ("relabelled", relabelled)):
        code, _, err = run("eval", "--domain", "live_pick", "--input", source, "--out", root / name)
        assert code == 0, err
        out[name] = root / name
    return out


def test_items_are_regressed_improved_or_same_and_the_different_ones_come_regressions_first(runs, tmp_path):
    code, md, err = run("diff", runs["base"], runs["changed"], "--out", tmp_path / "d.json")
    assert code == 0, err  # without --fail-on-regression a regression is reported, not failed on
    assert "비교한 항목 60건 (라벨이 있는 항목) · 퇴보 4 · 바뀜 0 · 개선 1" in md
    table = md[md.index("## 다른 것만 (퇴보 먼저) · 5건"):md.index("## 지표의 움직임")]
    kinds = [line.split(" | ")[0].strip("| ") for line in table.splitlines() if line.startswith("| ") and not line.startswith("| 구분")]
    assert kinds == ["퇴보"] * 4 + ["개선"]
    assert "| 퇴보 | MSG-20260908-1401 | 지금 답변할 질문 | 지금 답변할 질문 | 관계 단계에 아직 못 미침 |" in table
    assert "| 개선 | MSG-20260908-2401 | 지금 답변할 질문 | 방금 답한 주제 | 지금 답변할 질문 |" in table
    assert "| 판정 일치 | 57 / 60 (95.0%) | 54 / 60 (90.0%) | -5.0%p |" in md
    # The same 60 labelled lines twice: the agreement's change is a paired difference, its discordant pairs the items.
    assert "짝 60건: 판정 일치 57 → 54 · 퇴보 4 · 개선 1 · 차이 -5.0%p, 95% 구간 [" in md and "Newcombe 1998 방법 10" in md
    data = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))["live_pick"]
    assert data["tally"]["regressed"] == 4 and data["tally"]["improved"] == 1 and data["tally"]["same"] == 55
    assert [d["kind"] for d in data["different"]] == ["regressed"] * 4 + ["improved"] and data["pins"] == []
    paired = data["agreement_paired"]
    assert (paired["pairs"], paired["only_a"], paired["only_b"]) == (60, 4, 1)
    assert paired["difference_b_minus_a"] == pytest.approx(-3 / 60)
    assert paired["interval_95"][0] < paired["difference_b_minus_a"] < paired["interval_95"][1]
    assert "regressed 4, improved 1" in err


def test_fail_on_regression_exits_1_naming_the_items_and_0_without_one(runs):
    code, _, err = run("diff", runs["base"], runs["changed"], "--fail-on-regression")
    assert code == 1 and "MSG-20260908-1401" in err and "regression" in err
    code, _, err = run("diff", runs["base"], runs["base"] / "summary.json", "--fail-on-regression")
    assert code == 0, err
    code, _, err = run("diff", runs["changed"], runs["base"], "--fail-on-regression")  # the other way: 1 regression (2401)
    assert code == 1 and "MSG-20260908-2401" in err


def test_runs_on_different_pins_say_so_at_the_top(runs):
    code, md, err = run("diff", runs["base"], runs["relabelled"] / "live_pick" / "report.json")
    assert code == 0, err
    top = md.split("## 다른 것만")[0]
    assert "두 실행의 고정 입력이 다릅니다" in top and "골든 라벨이 다릅니다" in top and "같은 잣대로 잰 것이 아닙니다" in top
    assert "규칙 설정이 다릅니다" not in top  # only what differs
    assert "| 바뀜 | MSG-20260908-2401 | 방금 답한 주제 (라벨 바뀜) |" not in md  # the verdict did not move: same
    code, md, _ = run("diff", runs["base"], runs["base"])
    assert "고정 입력(골든 라벨, 규칙 설정, 태거, 코드)이 같습니다." in md and "다릅니다" not in md.split("## 다른")[0]


def test_unusable_runs_are_usage_errors(runs, tmp_path):
    code, _, err = run("diff", runs["base"], tmp_path)
    assert code == 2 and "not a report.json" in err
    (tmp_path / "report.json").write_text("{}", encoding="utf-8")
    code, _, err = run("diff", runs["base"], tmp_path)
    assert code == 2 and "not a golden-agreement report" in err
