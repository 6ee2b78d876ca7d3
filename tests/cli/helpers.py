"""Shared pieces of the command-line tests: a domain's sample paths, `verdicts` run in-process,
JSON-lines files read and written, sample folders copied so that a test can break them, and the
judged sample with its quarantine."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from orchestration.cli import main
from tests.conftest import FIXTURES, SEEDS


def domain_paths(domain: str) -> tuple[Path, Path, Path]:
    """The domain's sample folder, its golden labels and its test fixtures folder."""
    sample = SEEDS / domain
    return sample, sample / "golden.jsonl", FIXTURES / domain


def run(*argv) -> tuple[int, str, str]:
    """main(argv) with stdout and stderr captured; an argparse exit counts as its code."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def read_jsonl(path: Path) -> list[dict]:
    """The rows of a JSON-lines file; blank lines are skipped."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, rows) -> Path:
    """Write rows one JSON value a line (None as `null`); returns the path to pass on."""
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def copy_sample(sample: Path, dest: Path, names) -> Path:
    """Copy the named dataset files of a sample folder into dest, byte for byte; returns dest."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        (dest / f"{name}.jsonl").write_bytes((sample / f"{name}.jsonl").read_bytes())
    return dest


def drop_column(path: Path, column: str) -> None:
    """Remove a column from every JSON line of a file; lines that are not JSON stay as written."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            lines.append(line)
            continue
        obj.pop(column, None)
        lines.append(json.dumps(obj, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def judge_sample(folder: Path, domain: str, sample: Path) -> dict:
    """`judge` over a whole sample into folder: exit code, stderr, output and quarantine paths, rows."""
    out, q = folder / "verdicts.jsonl", folder / "quarantine.jsonl"
    code, _, stderr = run("judge", domain, "--input", sample, "--out", out, "--quarantine", q)
    return {"code": code, "stderr": stderr, "out": out, "q": q, "rows": read_jsonl(out) if out.exists() else []}


def assert_quarantine_matches(q: list[dict], expected: list[dict]) -> None:
    """The quarantined rows' dataset, line, id and reason code are exactly the expected ones."""
    key = lambda r: (r["dataset"], r["line"])  # noqa: E731
    assert sorted(({k: r[k] for k in ("dataset", "line", "id", "reason_code")} for r in q), key=key) == sorted(expected, key=key)
