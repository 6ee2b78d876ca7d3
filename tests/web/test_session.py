"""One way to present the token: a page opened once with `?token=` is answered with a session cookie
that `/live`, `/admin`, `/suggestions`, their sockets and posts all honour; before, the admin pages
kept their own cookie under `/admin` and the console's link to `/suggestions` was refused (403)."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from web.app import create_app
from web.config import WebConfig
from tests.conftest import SEEDS

TOKEN = "s3cret-token"
OWN = "http://127.0.0.1:8765"


@pytest.fixture
def client(tmp_path):
    config = WebConfig(home=tmp_path, warehouse_url=f"sqlite:///{tmp_path / 'wh.sqlite'}", raw_dir=SEEDS, admin_warm=False,
                       tags="gold", token=TOKEN)
    with TestClient(create_app(config), base_url=OWN) as c:
        yield c


PAGES = ("/live", "/live/status", "/admin", "/admin/live_pick", "/suggestions")


def test_a_token_opened_once_is_carried_by_every_page_socket_and_post(client):
    for path in PAGES:
        assert client.get(path).status_code in (401, 403), path
    # a console action without the token says so, in the page's words too
    for path, body in (("/live/pickup", {"msg_id": "M"}), ("/live/start", {"character_id": "CH-0007"}),
                       ("/live/close", {"character_id": "CH-0007"}), ("/suggestions/reject", {"suggestion_id": "S", "reason": "x"})):
        refused = client.post(path, headers={"origin": OWN}, json=body)
        assert refused.status_code == 403 and refused.json()["code"] == "token_required", path
        assert "토큰" in refused.json()["message"], path
    opened = client.get(f"/live?token={TOKEN}")
    assert opened.status_code == 200
    cookie = opened.headers["set-cookie"]
    assert "Path=/;" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie and TOKEN not in cookie
    assert 'href="/suggestions"' in opened.text  # the console's link, which carries no token
    for path in PAGES:
        assert client.get(path).status_code == 200, path
    with client.websocket_connect("ws://127.0.0.1:8765/ws/windows", headers={"origin": OWN}) as ws:
        assert ws.receive_json()["type"] == "resumed"
    assert client.post("/live/pickup", headers={"origin": OWN}, json={"msg_id": "MSG-NONE"}).status_code == 404
    assert client.post("/suggestions/reject", headers={"origin": OWN}, json={"suggestion_id": "S-NONE", "reason": "x"}).status_code == 404


def test_the_admin_pages_set_the_same_cookie(client):
    assert client.get(f"/admin?token={TOKEN}").status_code == 200
    assert client.get("/suggestions").status_code == 200 and client.get("/live/status").status_code == 200


def test_a_wrong_or_forged_cookie_and_a_wrong_token_get_nothing(client):
    wrong = client.get("/live?token=wrong")
    assert wrong.status_code == 403 and "set-cookie" not in wrong.headers
    client.cookies.set("verdicts_session_8765", TOKEN)  # the token itself is not the session value
    assert client.get("/live/status").status_code == 403
    client.cookies.clear()
    assert client.get(f"/live?token={TOKEN}").status_code == 200
    assert client.get("/live/status", headers={"x-verdicts-token": "wrong"}).status_code == 403  # a header presented is what counts
    assert client.get("/live/status").status_code == 200
