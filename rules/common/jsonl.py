"""Reading raw dataset files: JSON Lines, one row per non-blank line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

import pandas as pd

from schemas import required_columns

RAW_COLUMNS = ["dataset", "file", "line", "text"]


class DatasetError(Exception):
    """A dataset file that cannot be read at all, or lacks a required column.

    The whole file is rejected; the message names the file and, when it applies, the column.
    """

    def __init__(self, dataset: str, file: str, message: str, column: str | None = None):
        self.dataset, self.file, self.column, self.reason = dataset, file, column, message
        where = f"{file}" + (f", column '{column}'" if column else "")
        super().__init__(f"{dataset}: {where}: {message}")


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def parse_object(text: str) -> dict | None:
    """A line as a JSON object; None for anything else (NaN and Infinity are not JSON)."""
    return parse_line(text)[0]


def parse_line(text: str) -> tuple[dict | None, str | None]:
    """(object, None) for a JSON object line, else (None, why not)."""
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        return None, f"not JSON: {exc}"
    if not isinstance(obj, dict):
        return None, f"a JSON {type(obj).__name__}, not an object"
    return obj, None


def lenient_get(text: str, field: str):
    """A field of a line that is not strict JSON (for naming the row in quarantine)."""
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    return obj.get(field) if isinstance(obj, dict) else None


def dataset_path(input_dir: str | Path, dataset: str) -> Path:
    return Path(input_dir) / f"{dataset}.jsonl"


def read_raw(path: str | Path, dataset: str, required: Iterable[str] = ()) -> pd.DataFrame:
    """Every non-blank line of a JSON Lines file, untouched, with its 1-based line number.

    Raises DatasetError when the file is missing or not UTF-8, or when a required column
    appears in none of its JSON objects (a wrong file rather than a few bad rows).
    """
    path = Path(path)
    name = str(path)
    if not path.is_file():
        raise DatasetError(dataset, name, "file not found")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(dataset, name, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise DatasetError(dataset, name, f"cannot be read ({exc.strerror})") from exc
    # Only \n ends a JSON line: str.splitlines would also break at U+2028 and U+0085,
    # which may sit unescaped inside a JSON string.
    lines = [(i, t.removesuffix("\r")) for i, t in enumerate(text.split("\n"), start=1) if t.strip()]
    raw = pd.DataFrame(
        {
            "dataset": dataset,
            "file": name,
            "line": pd.array([i for i, _ in lines], dtype="int64"),
            "text": [t for _, t in lines],
        },
        columns=RAW_COLUMNS,
    )
    _require_columns(raw, dataset, name, tuple(required))
    return raw


def read_input_dir(input_dir: str | Path, domain: str, datasets: Iterable[str]) -> dict[str, pd.DataFrame]:
    """Raw lines of each of a domain's datasets in a directory (DatasetError names a bad file)."""
    return {name: read_raw(dataset_path(input_dir, name), name, required_columns(domain, name)) for name in datasets}


def _require_columns(raw: pd.DataFrame, dataset: str, name: str, required: tuple[str, ...]) -> None:
    if raw.empty or not required:
        return
    seen: set[str] = set()
    objects = 0
    for text in raw["text"]:
        try:
            obj = json.loads(text)
        except ValueError:
            continue
        if isinstance(obj, dict):
            objects += 1
            seen.update(obj)
            if seen.issuperset(required):
                return
    if objects == 0:
        raise DatasetError(dataset, name, "no line is a JSON object; is this a JSON Lines file?")
    missing = [c for c in required if c not in seen]
    raise DatasetError(dataset, name, "required column is missing from every row", column=missing[0])


def write_jsonl(path: str | Path, rows: Iterable[dict]) -> int:
    """Write rows as UTF-8 JSON Lines (Korean kept readable); returns the count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n


def read_jsonl_objects(path: str | Path) -> list[dict | None]:
    """Objects of a JSON Lines file in order; None for a line that is not a JSON object."""
    out: list[dict | None] = []
    with Path(path).open(encoding="utf-8-sig") as fh:
        for line in fh:
            if line.strip():
                out.append(parse_object(line))
    return out
