"""The work at a window end, where several characters' windows end at the same instant: what the
worker takes on at once, and what it leaves until the frames are out."""

from __future__ import annotations

import asyncio
import gc
import json
import weakref

from tests.live.console import lines, worker_service

START = 1_793_491_200 * 10**9  # 2026-11-01T00:00:00Z: a window start
STEP = 30 * 10**9


def _line(i: int, character: str, second: int) -> str:
    return json.dumps({"msg_id": f"M-{i}", "character_id": character, "viewer_id": "VW-3320",
                       "sent_at": f"2026-11-01T09:00:{second:02d}", "body": "노래 불러 줘?", "topic_tags": ["노래"],
                       "donation_amount": 0, "is_question": True, "note": None}, ensure_ascii=False)


def test_a_window_that_would_wait_behind_those_ending_with_it_past_its_due_time_is_finished_with_them(tmp_path):
    """Two characters' windows end together; one's sender has passed it, the other's has not. While
    finishing the first would end before the second is due, the second waits for its sender (or its
    due time); once finishing the first would run past the second's due time, the second would only
    be finished after it, late: it is finished with it."""
    from web.live.intake import Origin
    from web.live.policy import SETTLE_S

    now = [START + 10 * 10**9]
    service = worker_service(tmp_path, "siblings.sqlite", lambda: now[0])
    passed, quiet = ("CH-0007", START), ("CH-0008", START)

    async def go():
        a, b = Origin(), Origin()
        for origin, texts in ((a, [_line(1, "CH-0007", 3), _line(2, "CH-0007", 9)]), (b, [_line(3, "CH-0008", 4)]),
                              (a, [_line(4, "CH-0007", 31)])):  # a passed CH-0007's window; b has not passed CH-0008's
            origin.received += 1
            await service._ingest_items([(origin, origin.received, lines(*texts))])
        for key in (passed, quiet):
            service.due.deadlines[key] = START + STEP + service.grace
        settled = START + STEP + int(SETTLE_S * 1e9)
        assert service.due.complete(passed) and not service.due.complete(quiet)

        service.finishing.ns_per_line = 1_000.0  # finishing CH-0007's two lines: 2 µs, long before CH-0008 is due
        assert service.due.ripe(settled) == [passed], "CH-0008 waits for its sender: it may still send"
        # finishing CH-0007's two lines takes past CH-0008's due time (end + grace)
        service.finishing.ns_per_line = service.grace
        assert not service.due.cheap([quiet])
        assert service.due.ripe(settled) == [passed, quiet], "it would only be finished after CH-0007's, past its due time"

    asyncio.run(go())
    service.pool.shutdown()


def test_finished_windows_are_freed_once_the_frames_are_out_not_while_the_next_is_finished(tmp_path):
    """Freeing a large window's records takes about as long as storing it: the worker keeps the windows
    it finished until its tidy (after the frames are out), so the next window in line is not held up."""
    service = worker_service(tmp_path, "parked.sqlite", lambda: START + STEP + 10**9)
    from tests.live.console import feed

    feed(service, [_line(i, c, i) for i, c in enumerate(["CH-0007", "CH-0008"] * 5)])
    keys = sorted(service.buffer.open)
    assert len(keys) == 2
    held = [weakref.ref(service.buffer.open[k]) for k in keys]
    frames = service.finishing.finish(keys)
    assert [f["character_id"] for f in frames] == ["CH-0007", "CH-0008"]
    gc.collect()
    assert all(ref() is not None for ref in held), "kept while the frames go out"
    service._tidy()
    gc.collect()
    assert all(ref() is None for ref in held), "freed at the tidy"
    service.pool.shutdown()
