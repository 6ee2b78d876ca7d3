"""What the served pages share: their head and the serving of their static files."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from web.pages import head, static_files


def test_a_page_head_links_its_own_style_and_script_and_holds_no_inline_code():
    text = head("콘솔", "/x/static/a.css", "/x/static/a.js")
    assert text.startswith("<!doctype html>") and text.endswith("</head>\n")
    assert '<link rel="stylesheet" href="/x/static/a.css">' in text
    assert '<script src="/x/static/a.js" defer></script>' in text
    assert "<title>콘솔</title>" in text
    assert text.count("<script") == 1 and "<style" not in text


def test_static_files_serves_the_files_named_and_nothing_else(tmp_path):
    (tmp_path / "a.js").write_text("let x = '가';", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("no", encoding="utf-8")
    app = Starlette(routes=[Route("/s/{name}", static_files(tmp_path, {"a.js": "text/javascript; charset=utf-8"}))])
    with TestClient(app) as client:
        ok = client.get("/s/a.js")
        assert ok.status_code == 200 and ok.text == "let x = '가';"
        assert ok.headers["content-type"] == "text/javascript; charset=utf-8"
        assert ok.headers["cache-control"] == "no-cache"
        assert client.get("/s/secret.txt").status_code == 404
        assert client.get("/s/..%2Fsecret.txt").status_code == 404
