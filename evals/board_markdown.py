"""The Markdown sections of a report (tables, bullet lists, headings, paragraphs) as board HTML."""

from __future__ import annotations

import html
import re

_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def inline_md(text: str) -> str:
    # Report Markdown escapes angle brackets already: undo, then escape once for HTML.
    out = html.escape(html.unescape(text.replace("\\|", "|")), quote=True)
    out = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", out)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", out)


def md_table_rows(block: str) -> list[list[str]]:
    """The cells of a Markdown table (header first, separator dropped), still in Markdown."""
    rows = []
    for line in block.strip().splitlines():
        cells = [c.strip() for c in _CELL_SPLIT.split(line.strip().strip("|"))]
        if all(c and set(c) <= set("-:") for c in cells):
            continue
        rows.append(cells)
    return rows


def markdown_html(md: str) -> str:
    """The Markdown the reports write (tables, bullet lists, headings, paragraphs) as HTML."""
    out = []
    for block in re.split(r"\n\s*\n", md.strip()):
        lines = block.strip().splitlines()
        if not lines:
            continue
        if all(x.lstrip().startswith("|") for x in lines):
            rows = md_table_rows(block)
            head, body = rows[0], rows[1:]
            out.append("<table><thead><tr>" + "".join(f"<th>{inline_md(c)}</th>" for c in head) + "</tr></thead><tbody>"
                       + "".join("<tr>" + "".join(f"<td>{inline_md(c)}</td>" for c in r) + "</tr>" for r in body) + "</tbody></table>")
        elif all(x.lstrip().startswith("- ") for x in lines):
            out.append("<ul>" + "".join(f"<li>{inline_md(x.lstrip()[2:])}</li>" for x in lines) + "</ul>")
        elif lines[0].startswith("#"):
            out.append(f"<h3>{inline_md(lines[0].lstrip('#').strip())}</h3>")
            if lines[1:]:
                out.append(markdown_html("\n".join(lines[1:])))
        else:
            out.append(f"<p>{inline_md(' '.join(lines))}</p>")
    return "".join(out)
