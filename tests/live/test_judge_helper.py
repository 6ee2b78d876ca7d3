"""The live service's judging helper: windows it judges are the windows the service judges itself,
and a helper that dies or fails hands its windows back without losing or changing any."""

from __future__ import annotations

import json
import random
import time

import pandas as pd
import pytest
import sqlalchemy as sa

from live import store
from web.live import records
from web.live.judge_helper import JudgeHelperError
from tests.live.console import SAMPLE_HORIZON, feed, sample_lines, worker_service

START = 1_793_491_200 * 10**9  # 2026-11-01T00:00:00Z: a window start
STEP = 30 * 10**9


def _lines() -> list[str]:
    """The sample chat (quarantined lines, several windows) and, in one window, four characters'
    lines shaped like the sample's, so that windows ending together are split between the two."""
    sample = sample_lines()
    rows = [json.loads(t) for t in sample if t.startswith("{")]
    rows = [r for r in rows if isinstance(r, dict) and isinstance(r.get("msg_id"), str) and isinstance(r.get("donation_amount"), int)
            and r.get("character_id") in ("CH-0007", "CH-0008", "CH-0011", "CH-0015")]
    rng = random.Random(7)
    made = []
    for i in range(240):
        r = dict(rng.choice(rows))
        r["msg_id"] = f"MSG-HELPER-{i:04d}"
        r["sent_at"] = f"2026-11-01T09:00:{i * 29 // 240:02d}"  # naive Seoul time: the window at START
        r["donation_amount"] = rng.choice([0, 0, 1000, 5000])
        made.append(json.dumps(r, ensure_ascii=False))
    return sample + made


def _service(tmp_path, name: str, helper: bool):
    service = worker_service(tmp_path, name, lambda: START + 10 * STEP, late_horizon_s=SAMPLE_HORIZON)
    if helper:
        service.judging.start_helper()
        deadline = time.time() + 120
        while not service.judging.helper.ready():
            assert time.time() < deadline, "the judging helper did not start"
            time.sleep(0.05)
    return service


def _ingest(service, lines: list[str]) -> None:
    for i in range(0, len(lines), 40):
        feed(service, lines[i:i + 40])


def _judged(service) -> dict:
    """Every window finished now: its frame as pushed (but its place in push order) and its audit row."""
    frames = service.finishing.finish(sorted(service.buffer.open))
    out = {}
    with service.engine.connect() as conn:
        audit = {(r.character_id, int(r.window_ns)): {k: v for k, v in r._mapping.items() if k not in ("latency_ms",)}
                 for r in conn.execute(sa.select(store.audit))}
    for f in frames:
        data = json.loads(records.window_json(f))
        for place in ("seq", "epoch", "push"):  # its place in push order
            data.pop(place)
        out[(f["character_id"], f["window_start"])] = (data, audit[(f["character_id"], f["window_end_ns"] - STEP)])
    return out


@pytest.fixture(scope="module")
def judged_here(tmp_path_factory):
    service = _service(tmp_path_factory.mktemp("here"), "here.sqlite", helper=False)
    _ingest(service, _lines())
    out = _judged(service)
    service.pool.shutdown()
    return out


def test_windows_judged_by_the_helper_are_those_the_service_judges(tmp_path, judged_here):
    service = _service(tmp_path, "helper.sqlite", helper=True)
    assert service.judging.state() == "ready"
    _ingest(service, _lines())
    shared = [k for k in service.buffer.open if k[1] == START]
    assert len(shared) == 4 and sum(k in service.judging.remote for k in shared) == 3, "the helper judges three in four of the windows ending together"
    got = _judged(service)
    assert not service.judging.remote and service.judging.helper is not None, "the helper kept working and dropped what was pushed"
    assert got == judged_here
    assert any(len(frame["verdicts"]) > 50 for frame, _ in got.values())
    service.judging.helper.stop()
    assert service.judging.helper.proc.returncode is not None
    service.pool.shutdown()


def test_a_helper_that_dies_hands_its_windows_back_whole(tmp_path, judged_here):
    service = _service(tmp_path, "dies.sqlite", helper=True)
    lines = _lines()
    _ingest(service, lines[: len(lines) // 2])
    held = set(service.judging.remote)
    assert held
    service.judging.helper.proc.kill()
    service.judging.helper.proc.wait()
    assert service.judging.state() == "failed", "found dead: its windows are rebuilt here"
    _ingest(service, lines[len(lines) // 2:])
    got = _judged(service)
    assert service.judging.helper is None and not service.judging.remote
    assert got == judged_here


def test_a_helper_that_fails_on_a_batch_hands_its_windows_back_when_they_finish(tmp_path, judged_here):
    """A batch the helper cannot judge is reported when its windows finish; the service then judges
    them itself, from their lines in the landing table."""
    service = _service(tmp_path, "fails.sqlite", helper=True)
    _ingest(service, _lines())
    key = next(k for k in service.buffer.open if k in service.judging.remote)
    service.judging.helper.add({key: pd.DataFrame({"msg_id": ["MSG-NOT-A-LINE"]})}, service.buffer.open[key].refs)
    got = _judged(service)
    assert service.judging.helper is None and not service.judging.remote
    assert got == judged_here


def test_a_helper_lost_between_two_windows_hands_back_only_those_it_had_not_answered_for(tmp_path, judged_here):
    """The helper answers window by window: lost after its first answer, the windows it answered
    for stand and the others are rebuilt and finished here."""
    service = _service(tmp_path, "between.sqlite", helper=True)
    _ingest(service, _lines())
    assert sum(k in service.judging.remote for k in service.buffer.open if k[1] == START) == 3
    calls = []
    real = service.judging.helper.answer

    def answer():
        calls.append(1)
        if len(calls) == 2:
            raise JudgeHelperError("lost between two windows")
        return real()

    service.judging.helper.answer = answer
    got = _judged(service)
    assert len(calls) >= 2 and service.judging.helper is None and not service.judging.remote
    assert got == judged_here


def test_a_store_that_fails_is_not_taken_for_the_helper_failing(tmp_path, monkeypatch):
    """Storing a window the helper judged can fail (the warehouse): that failure goes up as for the
    worker's own windows (the windows stay in the landing table), and the helper keeps working."""
    service = _service(tmp_path, "store.sqlite", helper=True)
    _ingest(service, _lines())
    real = records.store_window

    def store_window(engine, key, *args):
        if key in service.judging.remote:
            raise RuntimeError("the warehouse is gone")
        return real(engine, key, *args)

    monkeypatch.setattr(records, "store_window", store_window)
    with pytest.raises(RuntimeError, match="the warehouse is gone"):
        service.finishing.finish(sorted(service.buffer.open))
    assert service.judging.helper is not None and service.judging.state() == "ready"
    service.judging.helper.stop()
    service.pool.shutdown()
