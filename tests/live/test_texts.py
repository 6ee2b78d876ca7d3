"""What the viewer wrote travels in the frames: a window frame's `texts` (and its quarantined lines'
`text`), a late frame's `texts` and a pick-up frame's `body` are the same whether the frame was made
live or rebuilt from the store after a restart, so a console that reloads or resumes shows the words."""

from __future__ import annotations

import json

from web.live import records
from tests.live.console import feed, worker_service

START = 1_793_491_200 * 10**9  # 2026-11-01T00:00:00Z: a window start
STEP = 30 * 10**9
KEY = ("CH-0007", START)


def line(i: int, second: int, body: str, **more) -> str:
    return json.dumps({"msg_id": f"M-{i}", "character_id": "CH-0007", "viewer_id": f"VW-{i}", "sent_at": f"2026-11-01T09:00:{second:02d}",
                       "body": body, "topic_tags": ["노래"], "donation_amount": 0, "is_question": True, "note": None, **more},
                      ensure_ascii=False)


def test_the_viewers_words_are_in_the_frames_live_and_rebuilt_from_the_store(tmp_path):
    now = [START + 10 * 10**9]
    first = worker_service(tmp_path, "w.sqlite", lambda: now[0])
    bodies = {f"M-{i}": f"{i}번째 노래 불러 줘? <b>\"따옴표\"</b>" for i in range(1, 7)}
    feed(first, [line(i, i, bodies[f"M-{i}"]) for i in range(1, 7)]
         + [line(8, 8, "후원이 음수예요", donation_amount=-5)])  # quarantined in its window
    now[0] = START + STEP + 50_000_000
    first.finishing.rank_early([KEY])
    live = json.loads(records.window_json(first.finishing.early[KEY][1]))
    assert live["texts"] == {r["msg_id"]: bodies[r["msg_id"]] for r in live["verdicts"]}
    assert list(live["texts"]) == [r["msg_id"] for r in live["verdicts"]], "in the frame's order"
    assert [(q["msg_id"], q["reason_code"], q["text"]) for q in live["quarantined"]] == [("M-8", "schema", "후원이 음수예요")]
    skipped = next(r["msg_id"] for r in live["verdicts"] if r["verdict"] != "지금 답변할 질문")
    feed(first, [line(9, 29, "늦게 온 노래 신청")])  # a straggler, acknowledged; then the process dies
    first.pool.shutdown()

    now[0] = START + STEP + 10**9
    second = worker_service(tmp_path, "w.sqlite", lambda: now[0])
    frames = [f for f, _, _, _ in second._undelivered()]
    rebuilt = next(f for f in frames if f["type"] == "window")
    same = {k: v for k, v in json.loads(records.window_json(rebuilt)).items() if k != "latency_ms"}  # set as it goes out
    assert same == {k: v for k, v in live.items() if k != "latency_ms"}, "the same frame, words included"
    late = next(f for f in frames if f["type"] == "late")
    assert late["texts"] == {"M-9": "늦게 온 노래 신청"}
    picked = records.pick_up(second.engine, skipped, now[0], "kim")
    assert picked["body"] == bodies[skipped] and picked["viewer_id"] and picked["summary"]
    second.pool.shutdown()
