"""Markdown snippets that read well in the Dagster UI."""

from __future__ import annotations

from evals.render import md_cell


def md_table(headers: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def counts_table(counts: dict[str, int], key: str = "verdict", value: str = "rows") -> str:
    return md_table([key, value], [[k, v] for k, v in counts.items()])
