"""The sheet-version store on both databases: exact instants, one version per apply even when two
applies race, and the same versioned sheet for the judge."""

from __future__ import annotations

import threading

import pytest

from live import sheets
from assets.resources.warehouse import _engine
from tests.live.broadcasts import FIRST, judge_and_close, write_raw

INSTANT = 1_788_000_000_123_456_789  # a nanosecond instant past 2**53: float would blur it


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request, tmp_path):
    url = f"sqlite:///{tmp_path / 'wh.sqlite'}" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    return _engine(url)


def test_racing_applies_make_one_version_with_its_exact_instant(engine, tmp_path):
    done = judge_and_close(engine, write_raw(tmp_path / "raw"), FIRST)
    cool = next(s for s in sheets.list_suggestions(engine, done["broadcast_id"]) if s["field"] == "reply_cooldown_sec")
    outcomes: list = []

    def attempt():
        try:
            outcomes.append(sheets.apply_suggestion(engine, cool["suggestion_id"], INSTANT, "race").changed)
        except sheets.SuggestionError as exc:
            outcomes.append(exc.kind)

    threads = [threading.Thread(target=attempt) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count(True) == 1 and set(outcomes) <= {True, False, "stale"}
    history = sheets.history(engine, "CH-0007")
    assert [h["version"] for h in history] == [1, 2] and history[1]["effective_ns"] == INSTANT
    from rules.live_pick.normalise import load_dir
    from rules.live_pick.config import load_config

    versioned = sheets.versioned_sheet(engine, load_dir(tmp_path / "raw" / "live_pick", load_config()).sheet)
    mine = versioned[versioned["character_id"] == "CH-0007"]
    assert mine["sheet_version"].tolist() == [1, 2] and mine["effective_ns"].tolist()[1] == INSTANT
    assert mine["reply_cooldown_sec"].tolist() == [180, 150]
    assert set(versioned["character_id"]) == set(load_dir(tmp_path / "raw" / "live_pick", load_config()).sheet["character_id"])


def test_a_suggestion_goes_stale_only_when_its_own_value_moved(engine, tmp_path):
    done = judge_and_close(engine, write_raw(tmp_path / "raw"), FIRST)
    found = {s["field"]: s for s in sheets.list_suggestions(engine, done["broadcast_id"])}
    cool, close = found["reply_cooldown_sec"], found["min_closeness_by_topic"]
    # an older suggestion on version 1 for the same cooldown, as a second look at the broadcast would leave
    older = {k: cool[k] for k in ("broadcast_id", "character_id", "rule", "field", "topic", "current_value", "evidence",
                                  "rationale", "strength", "created_ns")}
    with engine.begin() as conn:
        conn.execute(sheets.suggestions.insert(), {**older, "suggestion_id": "SUG-OLDERCOOLDN", "proposed_value": 120,
                                                   "base_version": 1, "status": sheets.OPEN})
    assert sheets.apply_suggestion(engine, cool["suggestion_id"], INSTANT, "kim").version == 2
    status = {s["suggestion_id"]: (s["status"], s["moved_in_version"]) for s in sheets.list_suggestions(engine, done["broadcast_id"])}
    assert status == {cool["suggestion_id"]: ("applied", 2), close["suggestion_id"]: ("open", None), "SUG-OLDERCOOLDN": ("stale", 2)}
    with pytest.raises(sheets.SuggestionError, match="version 2 changed reply_cooldown_sec since") as stale:
        sheets.apply_suggestion(engine, "SUG-OLDERCOOLDN", INSTANT + 1, "kim")
    assert stale.value.kind == "stale"
    assert sheets.apply_suggestion(engine, close["suggestion_id"], INSTANT + 2, "lee").version == 3
    v3 = sheets.history(engine, "CH-0007")[-1]
    assert (v3["reply_cooldown_sec"], v3["min_closeness_by_topic"]["팬과의추억"], v3["author"], v3["effective_ns"]) == (150, 2, "lee", INSTANT + 2)
    decided = {s["suggestion_id"]: (s["decided_by"], s["decided_ns"]) for s in sheets.list_suggestions(engine, done["broadcast_id"])}
    assert decided[cool["suggestion_id"]] == ("kim", INSTANT) and decided[close["suggestion_id"]] == ("lee", INSTANT + 2)
