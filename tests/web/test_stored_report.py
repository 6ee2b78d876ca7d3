"""A day the nightly chain stored: its report and board pages come from the warehouse, with the same
figures as the day judged again from the raw folder, and keep them when the folder changes or goes."""

from __future__ import annotations

import html as H
import json
import re
import shutil

import pytest
from starlette.testclient import TestClient

from assets import persona
from assets.common.chain import build_assets
from tests.assets.helpers import materialise_day, resources_in
from tests.conftest import SEEDS
from web.app import create_app
from web.config import WebConfig

DOMAIN, DAY = "persona", "2026-10-05"
REPORT, BOARD = f"/admin/{DOMAIN}/runs/day-{DAY}/report", f"/admin/{DOMAIN}/runs/day-{DAY}/board"
STORED = "야간 실행이 저장한 결과"


def section(page: str, name: str) -> str:
    found = re.search(rf"<section id='{name}'.*?</section>", page, re.S)
    return found.group(0) if found else ""


def figures(page: str) -> dict:
    """What the report page says of the day: each metric's n / d and status, the checks with pass/fail,
    the verdict counts, the wrong cases (id, golden label, verdict) and the labelled items."""
    text = H.unescape
    metrics = re.findall(r"<tr id='m-\d+' data-metric='([^']*)'>.*?<td class='num'>([^<]*)</td><td class='num'>([^<]*)</td>"
                         r"<td>[^<]*</td><td class='status'>([^<]*)</td>", section(page, "metrics"), re.S)
    checks = re.findall(r"<li class='(pass|fail)'><span class='mark'>[^<]*</span> <code>([^<]*)</code>", section(page, "checks"))
    counts = re.findall(r"<tr><td>(.*?)</td><td class='num'>(\d+)</td></tr>", section(page, "counts"))
    cases = re.findall(r"<li><a href='[^']*'><code>([^<]*)</code></a> 정답 (.*?) → 판정 (.*?)<div", section(page, "cases"))
    labelled = re.search(r"라벨 (\d+)건 · 다름 (\d+)건", section(page, "golden"))
    return {"metrics": [tuple(map(text, m)) for m in metrics], "checks": checks, "counts": [(text(re.sub("<[^>]+>", "", k)), int(n)) for k, n in counts],
            "cases": sorted(cases), "labelled": labelled.groups() if labelled else None,
            "scope": re.search(r"판정 (\d+)건</p>", page).group(1)}


def board_items(page: str) -> set[str]:
    return set(re.findall(r"<details class='item'[^>]* data-id='([^']*)'", page))


def run_row(page: str, key: str) -> tuple[str, list[str]] | None:
    """(where the figures came from, the cells) of run `key`'s row of a run table."""
    found = re.search(rf"<tr data-run='{key}' data-source='(\w+)'>(.*?)</tr>", page, re.S)
    return (found.group(1), [H.unescape(re.sub("<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", found.group(2))]) if found else None


def _stored_day_pages(tmp_path, warehouse_url: str) -> None:
    raw = tmp_path / "raw"
    shutil.copytree(SEEDS / DOMAIN, raw / DOMAIN)
    golden = raw / DOMAIN / "golden.jsonl"  # every tenth label flipped: the day has wrong cases to show
    labels = [json.loads(line) for line in golden.read_text(encoding="utf-8").splitlines()]
    for g in labels[::10]:
        g["persona_code"] = "age_conflict" if g["persona_code"] == "consistent" else "consistent"
    golden.write_text("".join(json.dumps(g, ensure_ascii=False) + "\n" for g in labels), encoding="utf-8")
    config = WebConfig(home=tmp_path / "home", warehouse_url=warehouse_url, raw_dir=raw, token=None, admin_warm=False, judge_helper=False)
    with TestClient(create_app(config), base_url="http://127.0.0.1:8765") as client:
        judged = client.get(REPORT)  # not stored yet: judged from the raw folder
        judged_board = client.get(BOARD)
        assert judged.status_code == 200 and STORED not in judged.text
        judged_row = run_row(client.get(f"/admin/{DOMAIN}").text, f"day-{DAY}")
        assert judged_row[0] == "judged" and run_row(client.get("/admin").text, f"day-{DAY}") == judged_row
        assert materialise_day(build_assets(persona.CHAIN), resources_in(tmp_path, url=warehouse_url, raw_root=raw), DAY).success
        stored = client.get(REPORT)
        assert stored.status_code == 200 and STORED in stored.text and "data-source='stored'" in stored.text
        want = figures(judged.text)
        assert want["metrics"] and want["checks"] and want["counts"] and want["cases"] and want["labelled"]
        assert figures(stored.text) == want
        board = client.get(BOARD)
        assert board.status_code == 200 and STORED in board.text
        assert board_items(board.text) == board_items(judged_board.text) != set()
        # The index and the domain page give the stored day's figures from its stored report.
        assert run_row(client.get(f"/admin/{DOMAIN}").text, f"day-{DAY}") == ("stored", judged_row[1])
        assert run_row(client.get("/admin").text, f"day-{DAY}") == ("stored", judged_row[1])

        # The raw folder changes (every stated job another) and then goes: the stored figures stay.
        turns = raw / DOMAIN / "turns.jsonl"
        turns.write_text(turns.read_text(encoding="utf-8").replace('"stated_job": "', '"stated_job": "우주비행사 '), encoding="utf-8")
        assert figures(client.get(REPORT).text) == want
        shutil.rmtree(raw / DOMAIN)
        gone = client.get(REPORT)
        assert gone.status_code == 200 and STORED in gone.text and figures(gone.text) == want
        board = client.get(BOARD)
        assert board.status_code == 200 and board_items(board.text) == board_items(judged_board.text)
        # Not judged again: listed and given its figures with the raw folder gone.
        assert run_row(client.get(f"/admin/{DOMAIN}").text, f"day-{DAY}") == ("stored", judged_row[1])


def test_a_stored_day_s_pages_come_from_the_warehouse(tmp_path):
    _stored_day_pages(tmp_path, f"sqlite:///{tmp_path / 'wh.sqlite'}")


@pytest.mark.postgres
def test_a_stored_day_s_pages_come_from_the_warehouse_on_postgresql(tmp_path, postgres_url):
    _stored_day_pages(tmp_path, postgres_url)
