"""Markdown snippets that read well in the Dagster UI."""

from __future__ import annotations

from evals.markdown import md_table

__all__ = ["counts_table", "md_table"]


def counts_table(counts: dict[str, int], key: str = "verdict", value: str = "rows") -> str:
    return md_table([key, value], [[k, v] for k, v in counts.items()])
