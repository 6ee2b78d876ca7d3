"""Reports made from a folder the way every report path makes them, and read back in their three forms."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

from evals import domains
from evals.render import render_html, render_markdown
from tests.conftest import SEEDS


def make_report(name: str, folder: Path | None = None, *, golden: bool = True, day: str | None = None,
                decisions: dict | None = None, tags: str = "gold", golden_path: Path | None = None):
    """(verdict rows, report) of a folder judged, checked and reported as `verdicts eval` does."""
    d = domains.get(name)
    folder = Path(folder or SEEDS / name)
    judged = d.judge_dir(folder, day=day, tags=tags)
    checks, gated = d.check_dir(folder, judged.rows, day=day)
    path = golden_path or folder / "golden.jsonl"
    labels = d.load_golden(path) if golden and path.is_file() else None
    report = d.report(judged.rows, labels, checks, gated.quarantine, gated.reconciliation, scope=f"{name} · {day or folder.name}",
                      judged=gated.normalised, golden_path=path if labels is not None else None, input_dir=folder, decisions=decisions)
    return judged.rows, report


def forms(report) -> tuple[str, str, dict]:
    """(Markdown, HTML, JSON data) as the files hold them (the JSON through a round-trip)."""
    return render_markdown(report), render_html(report), json.loads(json.dumps(report.to_dict(), ensure_ascii=False))


def html_text(page: str) -> str:
    """The page's visible text, roughly: tags dropped, the embedded data block removed."""
    page = re.sub(r"<script.*?</script>", "", page, flags=re.S)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def md_section(md: str, heading: str) -> str:
    """The body of `## heading…` up to the next `## `."""
    start = md.index(f"## {heading}")
    end = md.find("\n## ", start + 3)
    return md[start: end if end >= 0 else len(md)]


def copy_sample(name: str, to: Path) -> Path:
    """The sample folder copied outside seeds/ (so it is not the project's sample data)."""
    out = to / name
    shutil.copytree(SEEDS / name, out)
    return out
