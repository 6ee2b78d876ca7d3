"""What every request crosses (`web.boundary`): a page, socket or POST addressed to a
foreign Host (DNS rebinding) or sent from a foreign Origin is refused before any route sees it, on
the service as `verdicts serve` builds it, with and without a token; `?token=` given twice is refused."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient, WebSocketDenialResponse

from web.app import create_app
from web.config import WebConfig
from tests.conftest import SEEDS

OWN = "http://127.0.0.1:8765"
REVIEW = "/admin/live_pick/runs/all/review/live_pick.1"
PAGES = ("/admin", "/admin/live_pick/runs/all/board", "/live", "/live/status", "/suggestions")
POSTS = (("/live/pickup", {"json": {"msg_id": "MSG-20260908-1402"}}),
         ("/suggestions/apply", {"json": {"suggestion_id": "S-1"}}),
         ("/live/feeds", {"json": {}}),
         (REVIEW, {"data": {"item": "MSG-20260908-1402", "decision": "agree", "reviewer": "kim"}}))
SOCKETS = ("/ws/ingest", "/ws/windows")


def served(tmp_path, **settings) -> TestClient:
    url = f"sqlite:///{tmp_path / 'wh.sqlite'}"
    config = WebConfig(home=tmp_path, warehouse_url=url, raw_dir=SEEDS, admin_warm=False, tags="gold", **settings)
    return TestClient(create_app(config), base_url=OWN)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with served(tmp_path_factory.mktemp("boundary")) as c:
        yield c


def denied(client: TestClient, path: str, headers: dict) -> int | None:
    """The status a socket handshake was refused with; None when it was accepted."""
    try:
        with client.websocket_connect("ws://127.0.0.1:8765" + path, headers=headers):
            return None
    except WebSocketDenialResponse as refused:
        return refused.status_code


def test_a_page_on_a_rebound_name_is_refused_everywhere(client):
    """A page on evil.test (resolving to 127.0.0.1) is same-origin to the browser: its requests carry
    Host and Origin of evil.test. Before the Host check they read the admin pages and the live status,
    opened both sockets and recorded a review decision."""
    evil = {"host": "evil.test:8765"}
    for path in PAGES:
        got = client.get(path, headers=evil)
        assert got.status_code == 421 and "evil.test" in got.text and "--allow-host" in got.text, path
    for path, body in POSTS:
        assert client.post(path, headers={**evil, "origin": "http://evil.test:8765"}, **body).status_code == 421, path
    for path in SOCKETS:
        assert denied(client, path, {**evil, "origin": "http://evil.test:8765"}) == 421, path
    assert client.get("/healthz", headers=evil).status_code == 421
    assert client.get("/healthz", headers={"host": ""}).status_code == 400


def test_loopback_names_and_listed_hosts_are_served(client, tmp_path):
    for host in ("127.0.0.1:8765", "localhost:8765", "LOCALHOST", "[::1]:8765", "localhost.:8765"):
        assert client.get("/live/status", headers={"host": host}).status_code == 200, host
    assert client.get("/live/status", headers={"host": "127.0.0.2:8765"}).status_code == 421
    with served(tmp_path, allowed_hosts=("verdicts.lan",), host="192.168.7.7") as lan:
        for host in ("verdicts.lan:8765", "192.168.7.7:8765", "127.0.0.1:8765"):
            assert lan.get("/live/status", headers={"host": host}).status_code == 200, host
        assert lan.get("/live/status", headers={"host": "other.lan"}).status_code == 421


def test_sockets_and_posts_from_another_origin_are_refused(client):
    """Another page on this machine (another port of localhost) is another origin: it could write chat
    lines into /ws/ingest and reach every POST before the shared Origin check."""
    for origin in ("http://localhost:9999", "http://evil.example", "null", "http://127.0.0.1:8765.evil.example"):
        for path in SOCKETS:
            assert denied(client, path, {"origin": origin}) == 403, (path, origin)
        for path, body in POSTS:
            got = client.post(path, headers={"origin": origin}, **body)
            assert got.status_code == 403 and "origin" in got.text.lower(), (path, origin, got.text)
    # Origin: null with no Sec-Fetch-Site (Chromium sends none on plain-http names): a sandboxed frame's form
    got = client.post(REVIEW, headers={"origin": "null"}, data={"item": "MSG-20260908-1402", "decision": "agree", "reviewer": "x"})
    assert got.status_code == 403 and "null" in got.text
    # no Origin but a browser's cross-site marker; a cross-site sub-resource read
    assert client.post("/live/pickup", headers={"sec-fetch-site": "cross-site"}, json={"msg_id": "x"}).status_code == 403
    assert client.get("/admin", headers={"sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors"}).status_code == 403
    assert client.get("/admin", headers={"sec-fetch-site": "same-site", "sec-fetch-mode": "no-cors"}).status_code == 403
    assert client.get("/admin", headers={"sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate"}).status_code == 200
    assert client.get("/admin", headers={"sec-fetch-site": "same-origin", "sec-fetch-mode": "cors"}).status_code == 200


def test_the_services_own_origin_and_listed_ones_pass(client, tmp_path):
    assert denied(client, "/ws/windows", {"origin": OWN}) is None
    assert denied(client, "/ws/ingest", {}) is None  # not a browser: no Origin (the token guards it when set)
    assert client.post("/live/pickup", headers={"origin": OWN}, json={"msg_id": "MSG-NONE"}).status_code == 404
    with served(tmp_path, allowed_origins=("null", "http://console.lan:3000/")) as open_to:
        for origin in ("null", "http://console.lan:3000"):
            assert denied(open_to, "/ws/windows", {"origin": origin}) is None, origin
            assert open_to.post("/live/pickup", headers={"origin": origin}, json={"msg_id": "MSG-NONE"}).status_code == 404


def test_a_token_given_twice_is_refused(tmp_path):
    with served(tmp_path, token="s3cret") as c:
        assert c.get("/live?token=s3cret").status_code == 200
        for query in ("token=bad&token=s3cret", "token=s3cret&token=s3cret"):
            got = c.get(f"/live?{query}")
            assert got.status_code == 400 and "more than once" in got.text, query
        assert denied(c, "/ws/windows?token=bad&token=s3cret", {}) == 400
