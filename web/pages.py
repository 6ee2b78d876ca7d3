"""What the served pages share: the document head (the page's own stylesheet and script, no
inline code under the app's Content-Security-Policy) and the handler that serves a page's
static files."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import PlainTextResponse


def head(title: str, stylesheet: str, script: str) -> str:
    """`<!doctype>` through `</head>` of a page; `title` is written as it is (escape it first if it
    comes from data)."""
    return f"""<!doctype html>
<html lang="ko">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="{stylesheet}">
<script src="{script}" defer></script>
</head>
"""


def static_files(folder: Path, kinds: dict[str, str]):
    """An endpoint serving the files `kinds` names (name → media type) from `folder`, unrevalidated
    copies never kept; any other name is not found."""

    async def static_file(request: Request):
        name = request.path_params["name"]
        if name not in kinds:
            return PlainTextResponse("not found", status_code=404)
        return PlainTextResponse((folder / name).read_text(encoding="utf-8"), media_type=kinds[name],
                                 headers={"cache-control": "no-cache"})

    return static_file
