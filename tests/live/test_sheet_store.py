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
