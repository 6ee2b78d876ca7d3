"""Limits that hold before memory is spent: strict run keys and a bounded run cache, request bodies
counted while they stream (a chunked upload is refused at the limit, not after), JSON posts read
strictly (a lone surrogate is a 400 with a reason, not a 500), and the security headers on every
response, a 500 included."""

from __future__ import annotations

import socket
import time

import pytest
from starlette.testclient import TestClient

from web.admin.runs import Runs
from web.app import create_app
from web.config import WebConfig
from tests.conftest import SEEDS
from tests.live.console import InProcess

OWN = "http://127.0.0.1:8765"
JSON_POSTS = ("/live/pickup", "/suggestions/apply", "/suggestions/reject", "/live/feeds")


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("limits")
    config = WebConfig(home=tmp, warehouse_url=f"sqlite:///{tmp / 'wh.sqlite'}", raw_dir=SEEDS, admin_warm=False, tags="gold")
    with TestClient(create_app(config), base_url=OWN, raise_server_exceptions=False) as c:
        yield c


def test_run_keys_are_ascii_real_dates_of_the_data_and_nothing_after():
    from web.admin.runs import valid_key

    assert valid_key("day-2026-09-08") and valid_key("all") and valid_key("up-" + "a" * 32)
    for key in ("day-２０２６-09-08", "day-2026-09-08\n", "day-2026-02-30", "day-2026-13-01", "day-2026-9-08", "up-" + "A" * 32,
                "all ", "day-٢٠٢٦-09-08"):
        assert not valid_key(key), repr(key)


def test_invented_days_are_not_found_and_not_kept(client):
    """Before, any `day-\\d{4}-\\d{2}-\\d{2}` key was judged and kept for good (full-width digits and a
    trailing newline included): 2,000 invented days held 230 MB more."""
    runs = client.app.state.admin.runs
    assert client.get("/admin/live_pick/runs/day-2026-09-08/board").status_code == 200
    held = runs.held()
    for key in ("day-2031-01-01", "day-2026-02-30", "day-２０２６-09-08", "day-2026-09-08%0A", "day-2026-09-08%0a"):
        got = client.get(f"/admin/live_pick/runs/{key}/board")
        assert got.status_code == 404, (key, got.status_code)
    assert runs.held() == held
    assert client.get("/admin/live_pick/diff?a=day-2026-09-08&b=day-2026-02-30").status_code == 400


def test_the_run_cache_keeps_the_recently_used_within_its_count_and_bytes(tmp_path):
    runs = Runs(WebConfig(raw_dir=SEEDS, home=tmp_path, run_cache_runs=2))
    for key in ("all", "day-2026-09-08", "day-2026-09-09"):
        runs.load("live_pick", key)
    assert runs.held()[0] == 2 and runs.cached("live_pick", "all") is None
    runs.cached("live_pick", "day-2026-09-08")  # used: the other one goes next
    runs.load("live_pick", "all")
    assert runs.cached("live_pick", "day-2026-09-08") is not None and runs.cached("live_pick", "day-2026-09-09") is None
    count, size = runs.held()
    assert count == 2 and size > 100_000
    small = Runs(WebConfig(raw_dir=SEEDS, home=tmp_path, run_cache_bytes=size // 2))
    for key in ("all", "day-2026-09-08", "day-2026-09-09"):
        small.load("live_pick", key)
    assert small.held()[0] == 1 and small.cached("live_pick", "day-2026-09-09") is not None


@pytest.mark.parametrize("body, reason", [
    (b'{"msg_id": "\\ud800", "suggestion_id": "\\udfff"}', "lone surrogate"),
    (b'{"msg_id": "MSG-1", "suggestion_id": "S-1", "by": "\\ud83d"}', "lone surrogate"),
    (b'{"msg_id": NaN}', "not JSON"),
    (b'{"msg_id": "\xff"}', "not UTF-8"),
    (b'{"msg_id": ', "not JSON"),
    (b"[" * 100_000, "size limit"),
])
def test_malformed_json_is_a_400_with_a_reason(client, body, reason):
    for path in JSON_POSTS:
        got = client.post(path, content=body, headers={"content-type": "application/json"})
        if reason == "size limit":  # refused from its Content-Length, before a byte of it is read
            assert got.status_code == 413, (path, got.status_code)
        else:
            assert got.status_code == 400 and reason in got.json()["error"], (path, got.status_code, got.text)
        assert "content-security-policy" in got.headers


def test_every_response_carries_the_security_headers_a_500_included(client, monkeypatch):
    async def broken():
        raise RuntimeError("the store went away")

    monkeypatch.setattr(client.app.state.live, "status", broken)
    failed = client.get("/live/status")
    assert failed.status_code == 500
    for got in (failed, client.get("/live/status", headers={"host": "evil.test"}), client.get("/nowhere"),
                client.post("/live/pickup", content=b"x" * 70_000)):
        assert "script-src 'self'" in got.headers.get("content-security-policy", ""), got.status_code
        assert got.headers["x-content-type-options"] == "nosniff" and got.headers["x-frame-options"] == "DENY"


def test_a_chunked_upload_is_refused_while_it_streams(tmp_path):
    """No Content-Length: the body is counted as it arrives and refused at the limit. Before, the whole
    body was read (1 GB: 1 GB more resident memory) and only then measured."""
    served = InProcess(tmp_path, raw_dir=SEEDS, upload_max_bytes=300_000).start()
    try:
        sent, status = _chunked_upload(served.port, total=64 * 2**20)
        assert status.startswith("HTTP/1.1 413"), status
        assert sent < 8 * 2**20, f"{sent} bytes went in before the refusal"
    finally:
        served.stop()


def _chunked_upload(port: int, total: int) -> tuple[int, str]:
    """Send a multipart upload in 64 KiB chunks until the service answers; (bytes sent, status line)."""
    head = (b"--b\r\nContent-Disposition: form-data; name=\"files\"; filename=\"live_chat.jsonl\"\r\n"
            b"Content-Type: application/x-ndjson\r\n\r\n")
    chunk = b"{}\n" * (64 * 1024 // 3)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(f"POST /admin/live_pick/upload HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                     "Content-Type: multipart/form-data; boundary=b\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
        sock.sendall(f"{len(head):x}\r\n".encode() + head + b"\r\n")
        sent, answer = len(head), b""
        sock.settimeout(0.005)
        deadline = time.monotonic() + 120
        while sent < total and time.monotonic() < deadline:
            try:
                answer += sock.recv(4096)
            except (TimeoutError, BlockingIOError):
                pass
            except ConnectionResetError:
                break
            if answer:
                break
            try:
                sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
        sock.settimeout(30)
        try:
            while b"\r\n" not in answer:
                more = sock.recv(4096)
                if not more:
                    break
                answer += more
        except (TimeoutError, ConnectionResetError):
            pass
    return sent, answer.split(b"\r\n", 1)[0].decode(errors="replace")


def test_a_json_post_without_a_length_is_counted_as_it_streams(client):
    """Sent in chunks (no Content-Length), a body past 64 KiB is refused at the limit with the reason."""
    for path in JSON_POSTS:
        got = client.post(path, content=iter([b'{"msg_id": "', b"x" * 40_000, b"y" * 40_000, b'"}']),
                          headers={"content-type": "application/json"})
        assert "content-length" not in got.request.headers
        assert got.status_code == 413 and "size limit" in got.json()["error"], (path, got.status_code, got.text)
