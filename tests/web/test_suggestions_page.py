"""The /suggestions area: the page lists a closed broadcast's suggestions, the JSON endpoints apply
and reject them with the token, and cross-site or malformed requests are refused."""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient

from live import sheets
from assets.resources.warehouse import _engine
from web.app import create_app
from web.config import WebConfig
from tests.live.broadcasts import FIRST, FIRST_ID, judge_and_close, write_raw

TOKEN = "s3cret-token"


@pytest.fixture
def served(tmp_path):
    url = f"sqlite:///{tmp_path / 'wh.sqlite'}"
    engine = _engine(url)
    done = judge_and_close(engine, write_raw(tmp_path / "raw"), FIRST)
    app = create_app(WebConfig(warehouse_url=url, token=TOKEN, home=tmp_path))
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        yield client, engine, {s["field"]: s["suggestion_id"] for s in sheets.list_suggestions(engine, done["broadcast_id"])}


def post(client, path, body, **headers):
    return client.post(path, json=body, headers={"X-Verdicts-Token": TOKEN, **headers})


def test_the_page_lists_suggestions_escaped_with_buttons_and_history(served):
    client, _, ids = served
    assert client.get("/suggestions").status_code == 403
    page = client.get(f"/suggestions?token={TOKEN}")
    assert page.status_code == 200 and "script-src 'self'" in page.headers["content-security-policy"]
    text = page.text
    assert FIRST_ID in text and ids["reply_cooldown_sec"] in text and "180 → 150" in text
    assert 'id="operator"' in text and 'class="apply"' in text and 'class="reject"' in text and "<script>" not in text.replace('<script src="/suggestions/static/suggestions.js" defer></script>', "")
    assert "설정표 이력" in text and "파일에서 읽은 처음 값" in text
    js = client.get("/suggestions/static/suggestions.js")
    assert js.status_code == 200 and "window.confirm" in js.text
    assert client.get("/suggestions/static/..%2Fpage.py").status_code == 404


def test_apply_and_reject_through_the_endpoints(served):
    client, engine, ids = served
    cool, close = ids["reply_cooldown_sec"], ids["min_closeness_by_topic"]
    # cross-site and malformed requests change nothing
    assert client.post("/suggestions/apply", json={"suggestion_id": cool}).status_code == 403  # no token
    assert post(client, "/suggestions/apply", {"suggestion_id": cool}, Origin="https://evil.example").status_code == 403
    form = client.post("/suggestions/apply", data={"suggestion_id": cool}, headers={"X-Verdicts-Token": TOKEN})
    assert form.status_code == 415
    assert post(client, "/suggestions/apply", {"id": cool}).status_code == 400
    assert len(sheets.history(engine, "CH-0007")) == 1

    r = post(client, "/suggestions/apply", {"suggestion_id": cool, "by": "운영자"}, Origin="http://127.0.0.1:8765")
    assert r.status_code == 200 and r.json()["version"] == 2 and r.json()["changed"]
    again = post(client, "/suggestions/apply", {"suggestion_id": cool})
    assert again.status_code == 200 and not again.json()["changed"]
    assert post(client, "/suggestions/apply", {"suggestion_id": "SUG-NOPE"}).status_code == 404
    assert post(client, "/suggestions/reject", {"suggestion_id": close}).status_code == 400  # no reason
    # the other suggestion changes another value: still open after the first was applied
    page = client.get(f"/suggestions?token={TOKEN}").text
    assert f'class="apply" data-id="{close}"' in page
    done = post(client, "/suggestions/reject", {"suggestion_id": close, "reason": "<b>추억</b>은 그대로", "by": "운영자2"})
    assert done.status_code == 200
    page = client.get(f"/suggestions?token={TOKEN}").text
    assert "반영됨 (v2)" in page and "&lt;b&gt;추억&lt;/b&gt;은 그대로 · 운영자2 · " in page and "반영 · 운영자 · " in page
    assert re.search(r"반영 · 운영자 · \d{4}-\d\d-\d\d \d\d:\d\d KST", page)
    assert [h["author"] for h in sheets.history(engine, "CH-0007")] == [None, "운영자"]
    decided = {s["field"]: s["decided_by"] for s in sheets.list_suggestions(engine, FIRST_ID)}
    assert decided == {"reply_cooldown_sec": "운영자", "min_closeness_by_topic": "운영자2"}
