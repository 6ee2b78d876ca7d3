"""`verdicts replay FILE --to ws://… --pace original --speed X` into `verdicts serve --clock event`:
the sample, replayed as recorded (its sent_at and spacing, sped up), is judged in its own time,
window by window as `verdicts judge live_pick` judges the same files — the seed's nine example rows
included, 방금 답한 주제 for MSG-20260908-1403 38 s after 루루's last answer — with the service's
default late horizon: nothing is late or re-timed. The offset between the two is zero, the choice
`docs/live.md` explains."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request

import pytest
import sqlalchemy as sa

from assets.resources.warehouse import _engine
from live import store
from tests.conftest import FIXTURES, SEEDS
from tests.live.console import BIN, ROOT, Service

SAMPLE = SEEDS / "live_pick"
FIELDS = ("pick_id", "msg_id", "viewer_id", "character_id", "window_start", "verdict", "rank_in_window", "cooldown_elapsed_sec",
          "evidence", "summary", "hedge")


def by_window(rows: list[dict]) -> dict[tuple[str, str], dict[str, dict]]:
    out: dict = {}
    for r in rows:
        out.setdefault((r["character_id"], r["window_start"]), {})[r["msg_id"]] = {k: r.get(k) for k in FIELDS}
    return out


def status(service: Service) -> dict:
    with urllib.request.urlopen(service.http + "/live/status", timeout=10) as r:
        return json.loads(r.read())


@pytest.fixture
def event_service(tmp_path):
    service = Service(tmp_path, "--tags", "gold", "--clock", "event", "--input", str(SAMPLE), late_horizon=None).start()
    yield service
    service.stop()


def test_replaying_the_sample_at_its_own_pace_gives_the_batch_verdicts_window_by_window(event_service, tmp_path):
    out = tmp_path / "judged.jsonl"
    judged = subprocess.run([str(BIN / "verdicts"), "judge", "live_pick", "--input", str(SAMPLE), "--out", str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert judged.returncode == 0, judged.stderr
    batch = [json.loads(t) for t in out.read_text(encoding="utf-8").splitlines()]

    # a wall-clock service refuses a replay at the original pace, saying why
    assert status(event_service)["clock"] == "event"
    started = time.time()
    replayed = subprocess.run([str(BIN / "verdicts"), "replay", str(SAMPLE / "live_chat.jsonl"), "--to", event_service.ws + "/ws/ingest",
                               "--pace", "original", "--speed", "20000"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    recorded_span = 26.6 * 3600  # 2026-09-08 20:05:01 → 2026-09-09 22:40:30
    assert time.time() - started >= recorded_span / 20000 * 0.9  # the recorded spacing, sped up, not a burst

    engine = _engine(event_service.env["WAREHOUSE_URL"])
    deadline = time.time() + 120  # the last window closes a window length and the grace after the last line
    while time.time() < deadline:
        with engine.connect() as conn:
            live = [store.load_json(r) for r in conn.execute(sa.select(store.verdicts.c.row)).scalars()]
        if len(live) >= len(batch):
            break
        time.sleep(0.5)
    s = status(event_service)
    assert (s["late"], s["pending"]) == (0, 0), s
    assert by_window(live) == by_window(batch)
    assert len(by_window(batch)) >= 10

    examples = json.loads((FIXTURES / "live_pick" / "seed_examples.json").read_text(encoding="utf-8"))
    got = {r["msg_id"]: r for r in live}
    assert len(examples) == 9 and all({k: got[ex["msg_id"]][k] for k in ex} == ex for ex in examples)
    assert (got["MSG-20260908-1403"]["verdict"], got["MSG-20260908-1403"]["cooldown_elapsed_sec"]) == ("방금 답한 주제", 38)


def test_the_original_pace_needs_an_event_clock_service(tmp_path):
    service = Service(tmp_path, "--tags", "gold", "--input", str(SAMPLE)).start()
    try:
        r = subprocess.run([str(BIN / "verdicts"), "replay", str(SAMPLE / "live_chat.jsonl"), "--to", service.ws + "/ws/ingest",
                            "--pace", "original"], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and "start it with `verdicts serve --clock event`" in r.stderr
        assert status(service)["received"] == 0
    finally:
        service.stop()


def test_a_replayed_broadcast_on_the_default_tagger_closes_with_the_gold_runs_suggestions(tmp_path):
    """The operator's week-3 loop on the defaults: the service reads bodies with the live default
    tagger (no `--tags`), the broadcast is replayed as recorded, and closing it from the console
    (`POST /live/close`, what the page's 방송 닫기 sends) yields the cooldown and closeness suggestions
    the gold run gives (tests/live/test_suggestions_per_tagger.py)."""
    from live import sheets
    from tests.live.broadcasts import FIRST, write_raw

    raw = write_raw(tmp_path / "raw")
    chat = tmp_path / "broadcast.jsonl"
    chat.write_text("\n".join(FIRST) + "\n", encoding="utf-8")
    service = Service(tmp_path, "--clock", "event", "--input", str(raw), late_horizon=None).start()  # `--tags model`: the default
    try:
        r = subprocess.run([str(BIN / "verdicts"), "replay", str(chat), "--to", service.ws + "/ws/ingest", "--pace", "original",
                            "--speed", "100"], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        engine = _engine(service.env["WAREHOUSE_URL"])
        deadline = time.time() + 120
        while time.time() < deadline:
            with engine.connect() as conn:
                live = [store.load_json(x) for x in conn.execute(sa.select(store.verdicts.c.row)).scalars()]
            if len(live) >= len(FIRST):
                break
            time.sleep(0.5)
        assert len(live) == len(FIRST) and {x["provenance"]["tagger"] for x in live} == {"kiwi"}
        close = urllib.request.Request(service.http + "/live/close", data=json.dumps({"character_id": "CH-0007"}).encode(),
                                       method="POST", headers={"content-type": "application/json"})
        with urllib.request.urlopen(close, timeout=120) as r:
            done = json.loads(r.read())
        assert done["closed"], done
    finally:
        service.stop()
    found = {(s["field"], s["topic"]): (s["current_value"], s["proposed_value"], s["status"])
             for s in sheets.list_suggestions(engine, done["broadcast_id"])}
    assert found == {("reply_cooldown_sec", None): (180, 150, "open"), ("min_closeness_by_topic", "팬과의추억"): (3, 2, "open")}


def test_the_replay_command_names_what_is_missing():
    from tests.cli.helpers import run

    chat = SAMPLE / "live_chat.jsonl"
    code, _, err = run("replay", chat)
    assert code == 2 and "give one of --rate LINES_PER_SEC, --speed X or --pace original" in err
    code, _, err = run("replay", chat, "--rate", "5", "--speed", "2")
    assert code == 2 and "give one of" in err
    for extra in ([], ["--to", "ws://127.0.0.1:9/ws/ingest", "--shift-to-now"], ["--to", "ws://127.0.0.1:9/ws/ingest", "--rate", "40"]):
        code, _, err = run("replay", chat, "--pace", "original", *extra)
        assert code == 2 and "--pace original keeps the recorded spacing and sent_at" in err, extra
