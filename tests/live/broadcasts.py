"""Two hand-made CH-0007 broadcasts on consecutive days, and the raw folder they are judged from.

Broadcast 1 (day 1, 21:00): twelve fans answered on 노래 at 20:58:00 ask about it again 130–185 s
later (ten held by the 180 s cooldown, median 150 s); twelve ask about 게임 (ranked); six at
closeness 2 ask about 팬과의추억, which needs 3 (held by closeness). It yields two suggestions:
cooldown 180 → 150 and 팬과의추억 3 → 2.
Broadcast 2 (day 2, 21:00): VW-C01 was answered on 게임 160 s before asking again: inside 180 s,
past 150 s.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from live import landing, store
from live.judge import close_broadcast, judge_windows
from rules.common import timestamps
from rules.live_pick.config import load_config
from tests.conftest import SEEDS

TZ = "Asia/Seoul"
SEC = 1_000_000_000
DAY1, DAY2 = "2026-09-08", "2026-09-09"
FIRST_ID = "CH-0007-20260908T210000"


def ns(text: str) -> int:
    return timestamps.parse(text, TZ).ns


BODIES = {
    "노래": ["오늘 노래 한 곡 더 불러 줘", "아까 그 노래 제목이 뭐야?", "목소리 너무 좋다 한 곡만 더", "다음 곡은 뭐 불러?"],
    "게임": ["요즘 무슨 게임 해?", "게임 한 판 같이 하자", "어제 보스 잡았어?", "랭크 몇이야?"],
    "팬과의추억": ["우리 처음 만난 날 기억나?", "팬미팅 때 기억나?", "첫 만남 얘기 해 줘"],
}
"""What each topic's lines say: chat as a viewer writes it, which every tagger reads (only gold
runs read `topic_tags`)."""


def line(msg: str, viewer: str, at: str, topic: str) -> str:
    bodies = BODIES[topic]
    body = bodies[int(msg[-2:]) % len(bodies)]
    return json.dumps({"msg_id": msg, "character_id": "CH-0007", "viewer_id": viewer, "sent_at": at, "body": body,
                       "topic_tags": [topic], "donation_amount": 0, "is_question": True, "note": None}, ensure_ascii=False)


def viewer(vid: str, level: int, topics: list[str], last: str | None) -> str:
    return json.dumps({"viewer_id": vid, "nickname": vid, "closeness_level": level, "answered_topics": topics,
                       "last_replied_at": last, "note": None}, ensure_ascii=False)


def clock_text(base: str, seconds: int) -> str:
    return timestamps.format_ns(ns(base) + seconds * SEC, "", TZ)


FIRST = ([line(f"MSG-A{i:02d}", f"VW-A{i:02d}", clock_text(f"{DAY1}T21:00:10", 5 * i), "노래") for i in range(12)]
         + [line(f"MSG-B{i:02d}", f"VW-B{i:02d}", clock_text(f"{DAY1}T21:01:30", 5 * i), "게임") for i in range(12)]
         + [line(f"MSG-D{i:02d}", f"VW-D{i:02d}", clock_text(f"{DAY1}T21:02:30", 5 * i), "팬과의추억") for i in range(6)])
SECOND = [line("MSG-C01", "VW-C01", f"{DAY2}T21:00:00", "게임"),
          line("MSG-B90", "VW-B00", f"{DAY2}T21:00:05", "게임"), line("MSG-B91", "VW-B01", f"{DAY2}T21:00:10", "게임")]
VIEWERS = ([viewer(f"VW-A{i:02d}", 3, ["노래"], f"{DAY1}T20:58:00") for i in range(12)]
           + [viewer(f"VW-B{i:02d}", 2, [], None) for i in range(12)]
           + [viewer(f"VW-D{i:02d}", 2, [], None) for i in range(6)]
           + [viewer("VW-C01", 3, ["게임"], f"{DAY2}T20:57:20")])




def write_raw(root: Path) -> Path:
    """`root/live_pick/` with the sample's sheets, these viewers and both broadcasts' lines."""
    raw = root / "live_pick"
    raw.mkdir(parents=True, exist_ok=True)
    shutil.copy(SEEDS / "live_pick" / "character_sheet.jsonl", raw / "character_sheet.jsonl")
    (raw / "viewer_relation.jsonl").write_text("\n".join(VIEWERS) + "\n", encoding="utf-8")
    (raw / "live_chat.jsonl").write_text("\n".join(FIRST + SECOND) + "\n", encoding="utf-8")
    return raw


def judge_and_close(engine, raw: Path, lines: list[str], tags: str = "gold") -> dict:
    """Without Dagster: land the lines, judge every window once it closed (with the tagger `tags`),
    close the broadcast."""
    config = load_config()
    store.ensure_tables(engine)
    stamps = [ns(json.loads(t)["sent_at"]) for t in lines]
    landing.append(engine, lines, max(stamps), config.window_seconds, TZ)
    keys = sorted({("CH-0007", s - s % (config.window_seconds * SEC)) for s in stamps})
    after = max(stamps) + 60 * SEC
    judge_windows(engine, keys, raw, config, tags, None, lambda: after)
    return close_broadcast(engine, "CH-0007", config, lambda: after + 120 * SEC)
