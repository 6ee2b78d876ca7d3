"""What an ingest frame holds, before anything is stored: one `Line` per chat line, each as sent.

A text frame that is a JSON array gives one line per element, cut from the frame's own text
(whitespace around it trimmed), never parsed and written again: the landing table keeps what the
sender wrote, and the gates judge exactly that. Anything else is one line. The cut is found by a
scan of strings and brackets that never recurses, so no nesting depth breaks it; an element too
deep to read is the gates' to quarantine (`too_deep`).

Some lines cannot be stored as text, or must not reach the store's text and JSON columns; they are
quarantined before the gates (`Line.reason`), with the bytes as sent kept beside an escaped text:
- a binary frame that is not UTF-8 (`not_utf8`);
- a NUL, raw or as the escape `\\u0000` (`nul_character`): PostgreSQL's text and jsonb refuse it;
- a frame of more elements than the configured limit (`too_many_lines`): stored whole as one line,
  so cheap input cannot become hundreds of thousands of rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rules.common.bounded_json import NOT_UTF8

NUL_CHARACTER = "nul_character"
TOO_MANY_LINES = "too_many_lines"
INTAKE_CODES = (NOT_UTF8, NUL_CHARACTER, TOO_MANY_LINES)
"""Reason codes given before the gates: such a line is quarantined in the transaction that lands it."""

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|"|[\[\]{},]')
"""A JSON string, a quote that opens none that closes (a string left open), or a bracket or comma:
everything else between them (numbers, literals, spaces) is part of an element and needs no look."""
JSON_SPACE = " \t\r\n"
"""The only whitespace JSON has (a frame led by another space is not an array, and is one line)."""
_NUL_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")
"""The escape of U+0000 (an odd run of backslashes before u0000; `\\\\u0000` is a backslash and text)."""


@dataclass(frozen=True)
class Line:
    text: str
    """What the landing table's text holds: the line as sent, or escaped when that cannot be text."""
    raw: bytes | None = None
    """The bytes as sent, kept when `text` is not them."""
    reason: tuple[str, str] | None = None
    """(reason code, reason) when the line is quarantined before the gates."""


def decode(message: dict) -> tuple[str, bytes | None, str | None]:
    """A WebSocket message's text: (text, None, None) for a text frame or a binary one that is UTF-8;
    else (the bytes escaped, the bytes, why they are not UTF-8)."""
    text = message.get("text")
    if text is not None:
        return text, None, None
    data = message.get("bytes") or b""
    try:
        return data.decode("utf-8"), None, None
    except UnicodeDecodeError as exc:
        return data.decode("utf-8", errors="backslashreplace"), data, f"byte {exc.start}: {exc.reason}"


def elements(text: str) -> list[str] | None:
    """The texts of a top-level JSON array's elements, as they stand in `text`; None when `text` is
    not one bracketed array (then it is one line as it is). `[]` has none."""
    body = text.strip(JSON_SPACE)
    if not body.startswith("[") or not body.endswith("]"):
        return None
    out: list[str] = []
    depth, start = 0, 1
    end = len(body) - 1
    for m in _TOKEN.finditer(body):
        tok = m.group()
        at = m.start()
        if tok == "[" or tok == "{":
            depth += 1
        elif tok == "]" or tok == "}":
            depth -= 1
            if depth == 0 and at != end:
                return None  # the outer array closed before the end: not one array
            if depth < 0:
                return None
        elif tok == "," and depth == 1:
            out.append(body[start:at].strip(JSON_SPACE))
            start = at + 1
        elif tok == '"':
            return None  # a string left open: not one array
    if depth != 0:
        return None
    last = body[start:end].strip(JSON_SPACE)
    if out or last:
        out.append(last)
    return out


def lines_of(message: dict, max_lines: int) -> list[Line]:
    """The lines of one ingest message (see the module's description)."""
    text, raw, broken = decode(message)
    if broken is not None:
        return [Line(text, raw, (NOT_UTF8, f"not UTF-8 text ({broken})"))]
    parts = elements(text)
    if parts is None:
        return [screened(text)]
    if len(parts) > max_lines:
        return [Line(*_storable(text), (TOO_MANY_LINES, f"an array of {len(parts)} elements, over the {max_lines}-line limit of one frame"))]
    return [screened(p) for p in parts]


def screened(text: str) -> Line:
    """One line as sent, quarantined before the gates when it holds a NUL."""
    if "\x00" in text or ("\\u0000" in text and _NUL_ESCAPE.search(text)):
        stored, raw = _storable(text)
        return Line(stored, raw, (NUL_CHARACTER, "holds a NUL character (U+0000), which the live store cannot keep as text"))
    return Line(text)


def _storable(text: str) -> tuple[str, bytes | None]:
    """(text a text column holds, the bytes as sent when they differ): a raw NUL shows as `\\x00`."""
    if "\x00" not in text:
        return text, None
    return text.replace("\x00", "\\x00"), text.encode("utf-8")
