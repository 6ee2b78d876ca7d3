"""`verdicts suggest / apply / reject / sheet-history` on a warehouse with one closed broadcast."""

from __future__ import annotations

import re

import pytest

from assets.resources.warehouse import _engine
from tests.cli.helpers import run
from tests.live.broadcasts import FIRST, FIRST_ID, judge_and_close, write_raw


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'wh.sqlite'}"
    monkeypatch.setenv("WAREHOUSE_URL", url)
    monkeypatch.setenv("VERDICTS_RAW_DIR", str(tmp_path / "raw"))
    raw = write_raw(tmp_path / "raw")
    return _engine(url), raw


def test_history_of_a_fresh_warehouse_is_the_sheet_file(warehouse):
    code, out, _ = run("sheet-history", "CH-0007")
    assert code == 0 and "| 1 |" in out and "as loaded" in out and "| 180 |" in out
    assert re.search(r"\| \d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? KST \|", out), out  # made, on the operator's wall clock
    code, _, err = run("sheet-history", "CH-9999")
    assert code == 2 and "no character 'CH-9999'" in err


def test_suggest_apply_reject_and_history_from_the_command_line(warehouse):
    engine, raw = warehouse
    done = judge_and_close(engine, raw, FIRST)
    assert done["broadcast_id"] == FIRST_ID and len(done["suggestions"]) == 2

    code, out, _ = run("suggest", "live_pick")
    assert code == 0 and out.startswith(FIRST_ID) and "2 suggestions" in out
    code, out, _ = run("suggest", "live_pick", "--broadcast", FIRST_ID)
    assert code == 0 and "쿨다운에 걸려 미룬 줄이 30건 가운데 10건이었고" in out and "180 → 150" in out
    ids = re.findall(r"SUG-[0-9A-F]{12}", out)
    cool, close = ids[0], ids[1]  # strongest first: ten held lines, then six
    assert set(ids) == set(done["suggestions"])
    code, _, err = run("suggest", "live_pick", "--broadcast", "CH-0007-20990101T000000")
    assert code == 2 and f"closed: {FIRST_ID}" in err

    code, out, _ = run("apply", cool, "--by", "operator-kim")
    assert code == 0 and "CH-0007 sheet version 2: reply_cooldown_sec 180 → 150" in out
    code, out, _ = run("apply", cool)
    assert code == 0 and "applied already" in out
    code, _, err = run("apply", "SUG-FFFFFFFFFFFF")
    assert code == 2 and "no suggestion 'SUG-FFFFFFFFFFFF'" in err
    code, out, _ = run("reject", close, "--reason", "추억 주제는 3단계로 둡니다", "--by", "operator-kim")
    assert code == 0 and "rejected: 추억 주제는 3단계로 둡니다" in out
    code, _, err = run("apply", close)
    assert code == 2 and "was rejected" in err
    code, _, err = run("reject", cool, "--reason", "늦게 바꿈")
    assert code == 2 and "was applied as version 2" in err

    code, out, _ = run("sheet-history", "CH-0007")
    assert code == 0 and "| made | in force from |" in out
    v1, v2 = (next(line for line in out.splitlines() if line.startswith(f"| {v} |")) for v in (1, 2))
    assert "suggestion" in v2 and cool in v2 and "operator-kim" in v2 and "reply_cooldown_sec 180 → 150" in v2
    assert re.search(r"\| 2 \| \d{4}-\d\d-\d\d \d\d:\d\d:\d\d KST \| \d{4}-\d\d-\d\d \d\d:\d\d:\d\d KST \|", v2)
    assert "from the start" in v1 and "UTC" not in out and "+00:00" not in out
    code, out, _ = run("suggest", "live_pick", "--broadcast", FIRST_ID)
    assert "applied (v2) · by operator-kim · " in out and "rejected: 추억 주제는 3단계로 둡니다 · by operator-kim · " in out
    assert out.count(" KST") >= 2


def test_live_close_prints_to_stdout_and_live_reseed_puts_the_files_relations_back(warehouse):
    from web.live.banners import relations_differ
    from rules.live_pick.config import load_config

    engine, raw = warehouse
    judge_and_close(engine, raw, FIRST)
    differ = relations_differ(raw, engine, load_config())
    assert differ is not None and differ["viewers"] > 0  # the close wrote answers back
    assert "live-reseed" in differ["message"] and "명 다릅니다" in differ["message"]
    code, out, err = run("live-close", "CH-0007")
    assert code == 0 and "CH-0007: nothing judged since the last close, 0 answered lines written back" in out and not err
    code, out, _ = run("live-reseed", "--input", str(raw))
    assert code == 0 and "viewer relations reseeded from" in out
    assert relations_differ(raw, engine, load_config()) is None
    code, _, err = run("live-reseed", "--input", str(raw / "nowhere"))
    assert code == 2 and "no viewer_relation.jsonl" in err
