"""Settings that would silently change every verdict are said loudly: a banner's Korean message and
one WARNING log line each (`web.live.banners`)."""

from __future__ import annotations

import logging

import pandas as pd

from web.live.banners import FAR_S, Banners, ClockSkew, vocabulary_gaps

S = 10**9


class Tagger:
    name = "kiwi"

    def __init__(self, tags):
        self.vocabulary = {t: (("x",),) for t in tags}


def test_a_character_topic_missing_from_the_taggers_vocabulary_is_named():
    sheet = pd.DataFrame({"character_id": ["CH-0007", "CH-0030"],
                          "world_topic_tags": [["노래", "게임"], ["노래", "뜨개질"]]})
    assert vocabulary_gaps(Tagger(["노래", "게임", "뜨개질"]), sheet) is None
    gap = vocabulary_gaps(Tagger(["노래", "게임"]), sheet)
    assert gap["characters"] == {"CH-0030": ["뜨개질"]}
    assert "CH-0030: 뜨개질" in gap["message"] and "세계관 밖" in gap["message"]
    assert vocabulary_gaps(type("Gold", (), {"name": "gold"})(), sheet) is None  # no fixed vocabulary: nothing to say


def test_lines_far_from_the_wall_clock_raise_one_banner_and_one_log_line(caplog):
    skew = ClockSkew()
    now = 1_800_000_000 * S
    skew.see([now - 2 * S, now + 1 * S], [now, now])
    assert skew.warning() is None
    with caplog.at_level(logging.WARNING, logger="verdicts.live"):
        skew.see([now - 88 * 86400 * S], [now])
        skew.see([now - (FAR_S + 1) * S], [now])
    warned = [r for r in caplog.records if "wall clock" in r.getMessage()]
    assert len(warned) == 1
    w = skew.warning()
    assert w["lines"] == 2 and "88일" in w["message"] and "--shift-to-now" in w["message"]
    banners = Banners()
    banners.skew = skew
    banners.set_fixed(None, {"code": "relations_differ", "message": "기록이 다릅니다", "log": "relations differ"})
    assert [b["code"] for b in banners.shown()] == ["relations_differ", "clock_far"]
    assert all(set(b) == {"code", "message"} for b in banners.shown())
