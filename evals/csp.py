"""The Content-Security-Policy every HTML file the project writes carries in a `<meta>` tag.

A written page (board, report) is opened from disk or any static host, with no server to send
a header or a fresh nonce per response, so each inline script and style it needs is allowed by
its SHA-256 hash. Nothing else may run, load or be submitted: an inline script that is not the
page's own (say, log text that slipped past escaping) is refused by the browser.
"""

from __future__ import annotations

import base64
import hashlib
import html


def source_hash(text: str) -> str:
    """The CSP hash source of an inline element's exact text."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def policy(scripts: tuple[str, ...] = (), styles: tuple[str, ...] = ()) -> str:
    """Only these inline scripts and styles; no other script, style, fetch, frame, plug-in, base or form target.

    `<script type="application/json">` data blocks are never executed and need no hash."""
    script_src = " ".join(source_hash(s) for s in scripts) or "'none'"
    style_src = " ".join(source_hash(s) for s in styles) or "'none'"
    return (f"default-src 'none'; script-src {script_src}; style-src {style_src}; img-src data:; "
            "object-src 'none'; base-uri 'none'; form-action 'none'")


def meta(scripts: tuple[str, ...] = (), styles: tuple[str, ...] = ()) -> str:
    """The `<meta http-equiv>` tag; it must come before every script and style of the page."""
    return f"<meta http-equiv='Content-Security-Policy' content=\"{html.escape(policy(scripts, styles))}\">"
