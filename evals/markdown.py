"""Markdown tables with every cell escaped (light to import: no statistics here)."""

from __future__ import annotations

import html


def md_cell(value) -> str:
    text = "" if value is None else str(value)
    text = html.escape(text, quote=False).replace("|", "\\|")
    return " ".join(text.split())


def md_table(headers: list[str], rows: list[list]) -> str:
    """A Markdown table; every cell escaped."""
    lines = ["| " + " | ".join(md_cell(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
