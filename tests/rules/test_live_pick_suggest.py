"""Sheet tuning suggestions on hand-made broadcasts, and the sheet version a line is judged with."""

from __future__ import annotations

import json
import random

import pandas as pd
import pytest

from rules.common.korean import polite_violations
from rules.common.timestamps import format_ns, parse
from rules.live_pick import verdicts as V
from rules.live_pick.config import LivePickConfig, load_config
from rules.live_pick.engine import judge, records
from rules.live_pick.normalise import normalise
from rules.live_pick.sheets import changed, diff, in_force_at, version_in_force
from rules.live_pick.suggest import median_low, suggest

TZ = "Asia/Seoul"
SEC = 1_000_000_000
SHEET = {"character_id": "CH-0007", "character_name": "미아", "world_topic_tags": ["노래", "게임", "팬과의추억", "패션"],
         "banned_tags": ["메타발언"], "min_closeness_by_topic": {"노래": 1, "게임": 1, "팬과의추억": 3, "패션": 3},
         "reply_cooldown_sec": 180, "note": None}


def at(seconds: int) -> str:
    return format_ns(parse("2026-09-08T21:00:00", TZ).ns + seconds * SEC, "", TZ)


class Broadcast:
    """Chat lines and viewers written by hand; `rows()` judges them with the engine."""

    def __init__(self, sheet: dict | None = None):
        self.sheet, self.lines, self.viewers = sheet or SHEET, [], {}

    def viewer(self, vid: str, level: int, topics=(), last: int | None = None):
        self.viewers[vid] = {"viewer_id": vid, "nickname": vid, "closeness_level": level, "answered_topics": list(topics),
                             "last_replied_at": None if last is None else at(last), "note": None}
        return self

    def say(self, vid: str, second: int, *tags: str):
        self.lines.append({"msg_id": f"MSG-{len(self.lines) + 1:04d}", "character_id": self.sheet["character_id"], "viewer_id": vid,
                           "sent_at": at(second), "body": "…", "topic_tags": list(tags), "donation_amount": 0, "is_question": True})
        return self

    def rows(self, config: LivePickConfig) -> list[dict]:
        def frame(name, objs):
            return pd.DataFrame({"dataset": name, "file": f"{name}.jsonl", "line": range(1, len(objs) + 1),
                                 "text": [json.dumps(o, ensure_ascii=False) for o in objs]})

        norm = normalise({"live_chat": frame("live_chat", self.lines), "character_sheet": frame("character_sheet", [self.sheet]),
                          "viewer_relation": frame("viewer_relation", list(self.viewers.values()))}, config)
        assert norm.quarantine.empty, norm.quarantine
        return records(judge(norm.chat, norm.sheet, norm.relation, config))


def with_rules(**suggestions) -> LivePickConfig:
    base = load_config().model_dump()
    extra = {k: suggestions.pop(k) for k in list(suggestions) if k == "missing_topic_min_closeness"}
    return LivePickConfig.model_validate({**base, **extra, "suggestions": {**base["suggestions"], **suggestions}})


def cooldown_broadcast() -> Broadcast:
    """Ten fans answered on 노래 come back 100–190 s later (nine held); twelve ask about 게임."""
    b = Broadcast()
    for i in range(10):
        b.viewer(f"VW-A{i}", 3, ["노래"], last=-100).say(f"VW-A{i}", 10 * i, "노래")  # elapsed 100, 110, … 190
    for i in range(12):
        b.viewer(f"VW-B{i}", 2).say(f"VW-B{i}", 120 + 5 * i, "게임")
    b.say("VW-B0", 200, "게임")  # a repeat asker
    return b


def test_cooldown_is_shortened_to_the_held_lines_median_with_figures_and_a_polite_rationale():
    config = load_config()
    rows = cooldown_broadcast().rows(config)
    result = suggest(rows, {**SHEET, "sheet_version": 1}, "CH-0007-20260908T210000", config)
    held = [r for r in rows if r["verdict"] == V.JUST_ANSWERED]
    assert len(held) == 8  # elapsed 100…170; 180 and 190 are past the cooldown

    topics = result.figures.set_index("topic")
    assert topics.loc["노래", "cooldown_held"] == 8 and topics.loc["노래", "elapsed"] == [100, 110, 120, 130, 140, 150, 160, 170]
    assert topics.loc["게임", "lines"] == 13 and topics.loc["게임", "repeat_askers"] == 1
    assert topics.loc["게임", "answered"] + topics.loc["게임", "deferred"] == 13
    assert result.totals["in_world"] == 23 and result.totals["repeat_askers"] == 1

    [s] = result.suggestions
    assert (s.rule, s.field, s.current_value, s.proposed_value, s.base_version) == ("shorten_cooldown", "reply_cooldown_sec", 180, 120, 1)
    # the lower median of eight values is the fourth, 130 s, rounded down to the 30 s step
    assert {"dataset": "live_chat", "field": "sent_at", "agg": "median_low_elapsed_sec", "value": 130} in s.evidence
    assert {"dataset": "live_chat", "field": "msg_id", "agg": "count_just_answered", "value": len(held)} in s.evidence
    assert s.rationale.startswith("쿨다운에 걸려 미룬 줄이 23건 가운데 8건이었고 중앙값 경과가 130초였습니다.")
    assert "8건 가운데 6건이" in s.rationale  # 120 s lets the six held lines at 120…170 s through
    assert not polite_violations(s.rationale)
    again = suggest(rows, {**SHEET, "sheet_version": 1}, "CH-0007-20260908T210000", config)
    assert again.suggestions[0].suggestion_id == s.suggestion_id
    other_base = suggest(rows, {**SHEET, "sheet_version": 2}, "CH-0007-20260908T210000", config)
    assert other_base.suggestions[0].suggestion_id != s.suggestion_id


def test_too_thin_a_broadcast_suggests_nothing_and_says_why():
    b = Broadcast()
    for i in range(9):
        b.viewer(f"VW-A{i}", 3, ["노래"], last=-100).say(f"VW-A{i}", 5 * i, "노래")
    b.say("VW-X", 60, "메타발언")
    config = load_config()
    result = suggest(b.rows(config), {**SHEET, "sheet_version": 1}, "B", config)
    assert result.thin and result.suggestions == []
    assert result.totals["cooldown_held"] == 9 and result.totals["out_of_world"] == 1
    assert "세계관 안의 줄이 9건(노래 9건)뿐이라 기준 20건에 못 미칩니다" in result.notes[0] and not polite_violations(result.notes[0])


def test_below_a_rule_threshold_nothing_is_suggested_and_the_note_says_which():
    config = with_rules(cooldown={"min_held": 8, "min_held_share": 0.5, "step_sec": 30, "floor_sec": 30})
    result = suggest(cooldown_broadcast().rows(config), {**SHEET, "sheet_version": 1}, "B", config)
    assert result.suggestions == [] and not result.thin
    assert any("기준 비율 50%에 못 미쳐" in n for n in result.notes)


def closeness_broadcast() -> Broadcast:
    """Two topics needing level 3, each with five lines from level-1 and level-2 fans; twenty 게임 lines."""
    b = Broadcast()
    for topic, levels in (("패션", [1, 1, 2, 2, 2]), ("팬과의추억", [2, 2, 1, 1, 2])):
        for i, level in enumerate(levels):
            vid = f"VW-{topic}{i}"
            b.viewer(vid, level).say(vid, 10 * i, topic)
    for i in range(20):
        b.viewer(f"VW-G{i}", 1).say(f"VW-G{i}", 60 + 3 * i, "게임")
    return b


def test_ties_between_topics_break_by_name_and_the_lower_median_decides():
    config = with_rules(max_per_broadcast=1)
    rows = closeness_broadcast().rows(config)
    result = suggest(rows, {**SHEET, "sheet_version": 4}, "B", config)
    # both topics hold five lines: the tie goes to the topic first by name
    assert sorted(["패션", "팬과의추억"])[0] == "패션"
    [s] = result.suggestions
    assert (s.field, s.topic, s.current_value, s.proposed_value) == ("min_closeness_by_topic", "패션", 3, 2)
    assert any("2건이었지만" in n for n in result.notes)
    both = suggest(rows, {**SHEET, "sheet_version": 4}, "B", load_config())
    assert [x.topic for x in both.suggestions] == ["패션", "팬과의추억"]
    assert median_low([1, 1, 2, 2, 2]) == 2 and median_low([1, 1, 2, 2]) == 1
    # the step is bounded: from 3 the proposal is never below 2, whatever the median
    low = suggest(rows, {**SHEET, "sheet_version": 4, "min_closeness_by_topic": {**SHEET["min_closeness_by_topic"], "패션": 5}}, "B",
                  load_config())
    assert next(x for x in low.suggestions if x.topic == "패션").proposed_value == 4
    assert all(not polite_violations(x.rationale) for x in both.suggestions)


def test_a_topic_missing_from_min_closeness_by_topic():
    sheet = {**SHEET, "min_closeness_by_topic": {"노래": 1, "팬과의추억": 3, "패션": 3}}  # 게임 is a world topic, not in the map
    b = closeness_broadcast()
    b.sheet = sheet
    # missing topics need 0 by default: nothing is held on 게임 and nothing is suggested for it
    config = load_config()
    result = suggest(b.rows(config), {**sheet, "sheet_version": 1}, "B", config)
    assert result.figures.set_index("topic").loc["게임", "closeness_held"] == 0
    assert "게임" not in {s.topic for s in result.suggestions}
    # with a default of 2, the level-1 fans are held on 게임, and the proposal adds the topic to the map
    strict = with_rules(missing_topic_min_closeness=2)
    result = suggest(b.rows(strict), {**sheet, "sheet_version": 1}, "B", strict)
    s = next(s for s in result.suggestions if s.topic == "게임")
    assert (s.current_value, s.proposed_value) == (2, 1)
    assert {"dataset": "character_sheet", "field": "min_closeness_by_topic", "agg": "missing_default", "value": 2} in s.evidence
    assert s.rationale.startswith("게임은 설정표의 주제별 기준에 없어 기본값 2단계가 적용되었습니다.")
    assert changed(sheet, s.field, s.topic, s.proposed_value)["min_closeness_by_topic"] == {**sheet["min_closeness_by_topic"], "게임": 1}


def test_a_line_is_judged_with_the_version_in_force_when_its_window_opened():
    start = parse("2026-09-08T21:00:00", TZ).ns
    v1 = {**SHEET, "sheet_version": 1, "effective_ns": None}
    v2 = {**SHEET, "sheet_version": 2, "effective_ns": start + 45 * SEC, "reply_cooldown_sec": 100}
    sheet = pd.DataFrame([v1, v2])
    b = Broadcast().viewer("VW-1", 3, ["노래"], last=-120)
    b.say("VW-1", 20, "노래").say("VW-1", 50, "노래").say("VW-1", 70, "노래")  # elapsed 140, 170, 190
    config = load_config()

    def frame(name, objs):
        return pd.DataFrame({"dataset": name, "file": "x", "line": range(1, len(objs) + 1), "text": [json.dumps(o, ensure_ascii=False) for o in objs]})

    norm = normalise({"live_chat": frame("live_chat", b.lines), "character_sheet": frame("character_sheet", [SHEET]),
                      "viewer_relation": frame("viewer_relation", list(b.viewers.values()))}, config)
    rows = records(judge(norm.chat, sheet, norm.relation, config))
    got = {r["msg_id"]: (r["sheet_version"], r["verdict"]) for r in rows}
    # 21:00:20 (window 21:00:00, before v2): v1, held; 21:00:50 — its window opened at 21:00:30, before v2 came
    # into force at 21:00:45 — still v1; 21:01:10 (window 21:01:00): v2, cooldown 100 s, ranked
    assert got == {"MSG-0001": (1, V.JUST_ANSWERED), "MSG-0002": (1, V.JUST_ANSWERED), "MSG-0003": (2, V.PICK)}
    from rules.live_pick.checks import run_checks

    from rules.common.normalised import Normalised

    results = run_checks(Normalised(tables={**norm.tables, "character_sheet": sheet}, quarantine=pd.DataFrame()), rows, config)
    assert all(r.passed for r in results), [r.id for r in results if not r.passed]
    wrong = [{**r, "sheet_version": 1} if r["msg_id"] == "MSG-0003" else r for r in rows]
    assert not next(r for r in run_checks(Normalised(tables={**norm.tables, "character_sheet": sheet}, quarantine=pd.DataFrame()),
                                          wrong, config) if r.id == "recompute").passed


def test_the_vectorised_version_choice_agrees_with_the_row_by_row_one():
    rng = random.Random(7)
    versions = [{"character_id": c, "sheet_version": v, "effective_ns": None if v == 1 else rng.randrange(0, 10_000)}
                for c in ("A", "B", "C") for v in range(1, rng.randrange(2, 6))]
    lines = pd.DataFrame({"character_id": [rng.choice("ABC") for _ in range(500)],
                          "window_ns": [rng.randrange(-100, 11_000) for _ in range(500)]})
    got = version_in_force(lines, pd.DataFrame(versions)).tolist()
    want = [in_force_at([v for v in versions if v["character_id"] == c], w)["sheet_version"]
            for c, w in zip(lines["character_id"], lines["window_ns"])]
    assert got == want


def test_changed_and_diff_touch_only_the_tunable_fields():
    after = changed(SHEET, "reply_cooldown_sec", None, 150)
    assert after["reply_cooldown_sec"] == 150 and SHEET["reply_cooldown_sec"] == 180
    assert diff(SHEET, after) == ["reply_cooldown_sec 180 → 150"]
    with pytest.raises(ValueError):
        changed(SHEET, "banned_tags", None, [])


def test_viewers_and_topics_that_differ_only_after_a_nul_are_counted_apart():
    """pandas' group-by reads text only up to a NUL: "VW\\x00A" and "VW\\x00B" are two viewers."""
    sheet = {**SHEET, "world_topic_tags": ["노래", "게임", "게임\x002"], "min_closeness_by_topic": {}}
    b = Broadcast(sheet)
    for vid in ("VW\x00A", "VW\x00B"):
        b.viewer(vid, 3).say(vid, 10, "게임").say(vid, 20, "게임")
    b.viewer("VW\x00", 3).say("VW\x00", 30, "게임\x002")
    config = load_config()
    result = suggest(b.rows(config), {**sheet, "sheet_version": 1}, "B", config)
    figures = result.figures
    assert figures["topic"].tolist() == ["게임", "게임\x002"]
    assert figures["lines"].tolist() == [4, 1] and figures["repeat_askers"].tolist() == [2, 0]
    assert result.totals["repeat_askers"] == 2
