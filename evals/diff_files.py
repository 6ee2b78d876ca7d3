"""`verdicts diff A B`: the runs to compare, read from what the other commands write.

A and B may each be a `verdicts eval` output folder (or its summary.json), a report.json (from
`verdicts agree`, `verdicts eval` or the nightly report), or a folder holding one (a nightly
day's report folder). Folders of several domains are compared domain by domain.
"""

from __future__ import annotations

import json
from pathlib import Path

from evals.diff import RunDiff, diff_views, view_of_json


def reports_in(path: Path) -> dict[str, dict]:
    """domain → report.json data found at `path`; ValueError when it holds none."""
    path = Path(path)
    if path.is_file() and path.name == "summary.json":
        path = path.parent
    if path.is_dir() and (path / "summary.json").is_file():
        found = {p.parent.name: p for p in sorted(path.glob("*/report.json"))}
    elif path.is_dir() and (path / "report.json").is_file():
        found = {"": path / "report.json"}
    elif path.is_file():
        found = {"": path}
    else:
        raise ValueError(f"{path}: not a report.json, an eval output folder or a report folder")
    out = {}
    for name, p in found.items():
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{p}: not a readable report.json ({exc.__class__.__name__})") from None
        if not isinstance(data, dict) or "metrics" not in data or "domain" not in data:
            raise ValueError(f"{p}: not a golden-agreement report (no 'domain' and 'metrics')")
        out[name or data["domain"]] = data
    if not out:
        raise ValueError(f"{path}: holds no <domain>/report.json")
    return out


def diff_paths(a: Path, b: Path, domains: list[str] | None = None) -> dict[str, RunDiff]:
    """domain → the diff of A against B, for the domains both hold (or those named)."""
    left, right = reports_in(a), reports_in(b)
    names = [n for n in left if n in right] if not domains else domains
    missing = [n for n in names if n not in left or n not in right]
    if missing:
        raise ValueError(f"not in both runs: {', '.join(missing)} (A: {', '.join(left)}; B: {', '.join(right)})")
    if not names:
        raise ValueError(f"no domain in both runs (A: {', '.join(left)}; B: {', '.join(right)})")
    return {n: diff_views(view_of_json(left[n]), view_of_json(right[n])) for n in names}
