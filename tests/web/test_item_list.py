"""The admin pages' item list: a run's items page by page, filtered by verdict, text and columns.
A day the nightly chain stored is read from the warehouse (SQLite here) a page at a time; any other
run is filtered in memory, and both give the same pages."""

from __future__ import annotations

import re
from collections import Counter

import pandas as pd
import pytest
from starlette.testclient import TestClient

from assets.resources.warehouse import WarehouseResource
from evals import domains
from web.admin.item_list import PAGE_SIZE, ItemQuery, memory_page, stored_page
from web.app import create_app
from web.config import WebConfig
from schemas import column_kinds

DAY = "2026-09-08"
ITEMS = f"/admin/live_pick/runs/day-{DAY}/items"
PICK, OUT_OF_WORLD = "지금 답변할 질문", "세계관 밖이라 넘김"


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A generated live_pick day's verdicts stored as the nightly chain stores them; no raw folder,
    so only the warehouse can answer for the day."""
    root = tmp_path_factory.mktemp("item-list")
    d = domains.get("live_pick")
    d.generate(3_000, 1, root / "input")
    rows = d.judge_dir(root / "input").rows
    url = f"sqlite:///{root / 'wh.sqlite'}"
    warehouse = WarehouseResource(url=url)
    warehouse.replace_partition("live_pick_verdicts", DAY, pd.DataFrame(rows)[d.spec.output_columns],
                                json_columns=d.spec.verdict_json_columns, kinds=column_kinds("live_pick", d.spec.output_schema))
    (root / "raw").mkdir()
    return root, warehouse, rows


@pytest.fixture
def client(stored):
    root, warehouse, _ = stored
    config = WebConfig(home=root, warehouse_url=warehouse.url, raw_dir=root / "raw", token=None, admin_warm=False, judge_helper=False)
    with TestClient(create_app(config), base_url="http://127.0.0.1:8765") as c:
        yield c


def ids(html: str) -> list[str]:
    return re.findall(r"<details class='item' id='i-\d+' data-id='([^']*)'", html)


def chip(html: str, name: str) -> int:
    return int(re.search(rf"{re.escape(name)}</span> <b>(\d+)</b>", html).group(1))


def test_pages_follow_each_other_in_id_order(client, stored):
    _, _, rows = stored
    everything = sorted(r["msg_id"] for r in rows)
    first = client.get(ITEMS)
    assert first.status_code == 200 and "창고에 저장한 판정" in first.text
    assert ids(first.text) == everything[:PAGE_SIZE]
    second = client.get(ITEMS, params={"page": 2})
    assert ids(second.text) == everything[PAGE_SIZE:2 * PAGE_SIZE]
    assert f"판정 {len(rows)}건 가운데 {PAGE_SIZE + 1}–{2 * PAGE_SIZE}번째" in second.text
    assert "rel='next'" in first.text and "rel='prev'" in second.text
    last = -(-len(rows) // PAGE_SIZE)
    assert ids(client.get(ITEMS, params={"page": last}).text) == everything[(last - 1) * PAGE_SIZE:]


def test_a_verdict_narrows_the_list_and_a_text_narrows_the_counts(client, stored):
    _, _, rows = stored
    page = client.get(ITEMS, params={"verdict": OUT_OF_WORLD})
    theirs = sorted(r["msg_id"] for r in rows if r["verdict"] == OUT_OF_WORLD)
    assert ids(page.text) == theirs[:PAGE_SIZE]
    assert chip(page.text, OUT_OF_WORLD) == len(theirs) and chip(page.text, PICK) == sum(r["verdict"] == PICK for r in rows)
    text = "쿨다운"
    found = client.get(ITEMS, params={"q": text})
    matching = [r for r in rows if text in r["summary"] or text in r["msg_id"]]
    assert 0 < len(matching) < len(rows)
    counts = Counter(r["verdict"] for r in matching)
    assert chip(found.text, PICK) == counts[PICK] and chip(found.text, OUT_OF_WORLD) == counts[OUT_OF_WORLD]
    assert f"판정 {len(matching)}건 가운데" in found.text
    window = rows[0]["window_start"]
    one = client.get(ITEMS, params={"window_start": window, "character_id": rows[0]["character_id"], "verdict": PICK})
    assert ids(one.text) == sorted(r["msg_id"] for r in rows if r["window_start"] == window
                                   and r["character_id"] == rows[0]["character_id"] and r["verdict"] == PICK)


def test_the_stored_day_and_a_run_in_memory_give_the_same_pages(stored):
    _, warehouse, rows = stored
    for query in (ItemQuery(), ItemQuery(page=3), ItemQuery(verdict=PICK, page=2), ItemQuery(text="쿨다운", verdict=OUT_OF_WORLD),
                  ItemQuery(text="msg-2026"), ItemQuery(equal={"character_id": rows[-1]["character_id"]}, page=2)):
        a, b = stored_page(warehouse, "live_pick", DAY, query), memory_page("live_pick", rows, query)
        assert (a.counts, a.total) == (b.counts, b.total), query
        assert a.rows == b.rows, query


def test_a_cut_board_links_the_list_that_holds_the_rest(tmp_path, monkeypatch):
    import html as H

    from evals.boards import live_pick as board
    from tests.conftest import SEEDS

    monkeypatch.setattr(board, "MAX_PER_WINDOW_REASON", 1)
    config = WebConfig(home=tmp_path, warehouse_url=f"sqlite:///{tmp_path / 'wh.sqlite'}", raw_dir=SEEDS, token=None,
                       admin_warm=False, judge_helper=False)
    with TestClient(create_app(config), base_url="http://127.0.0.1:8765") as c:
        page = c.get("/admin/live_pick/runs/all/board").text
        assert "요약 화면" in page
        links = re.findall(r"전체는 <a href='(/admin/live_pick/runs/all/items\?[^']*)'>", page)
        assert links and all("window_start=" in x and "verdict=" in x for x in links)
        rest = c.get(H.unescape(links[0]))
        assert rest.status_code == 200 and "이 화면이 원본 폴더에서 판정한 결과" in rest.text
        shown = ids(rest.text)
        assert len(shown) >= 2  # the window's reason held more than the one line the board kept
        rows = {r["msg_id"]: r for r in domains.get("live_pick").judge_dir(SEEDS / "live_pick").rows}
        assert len({(rows[i]["character_id"], rows[i]["window_start"], rows[i]["verdict"]) for i in shown}) == 1


@pytest.mark.postgres
def test_a_day_stored_on_postgresql_pages_as_in_memory(stored, postgres_url):
    _, _, rows = stored
    d = domains.get("live_pick")
    warehouse = WarehouseResource(url=postgres_url)
    kinds = column_kinds("live_pick", d.spec.output_schema)
    frame = pd.DataFrame(rows)[d.spec.output_columns]
    for column, kind in kinds.items():
        if kind == "integer" and column in frame:  # as the judge's frames hold them: nullable integers
            frame[column] = pd.array([None if v is None or v != v else int(v) for v in frame[column]], dtype="Int64")
    warehouse.replace_partition("live_pick_verdicts", DAY, frame, json_columns=d.spec.verdict_json_columns, kinds=kinds)
    for query in (ItemQuery(page=2), ItemQuery(verdict=PICK), ItemQuery(text="쿨다운", verdict=OUT_OF_WORLD),
                  ItemQuery(text="50%_"), ItemQuery(equal={"window_start": rows[0]["window_start"]})):
        a, b = stored_page(warehouse, "live_pick", DAY, query), memory_page("live_pick", rows, query)
        assert (a.counts, a.total, [r["msg_id"] for r in a.rows]) == (b.counts, b.total, [r["msg_id"] for r in b.rows]), query
