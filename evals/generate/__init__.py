"""Deterministic synthetic input for every domain, at any size, built from the seed samples.

The seed sample of a domain already holds the hard cases its README lists. A generated folder
repeats the sample's valid rows in blocks: per-block datasets (turns, chat lines, sessions,
rooms, …) are copied with fresh ids, so the relations inside one copy (a viewer's cooldown, a
session's retries, a customer's re-entry) stay what the sample makes them; shared datasets
(profiles, character sheets, the surface catalog, articles, phrases) are written once, so
every copy is judged against them. The main dataset holds exactly `rows` lines.

Exactly 3 deliberately malformed rows go into every dataset, at places drawn from the seed,
and `malformed.json` lists them as {dataset: [{line, reason_code}]}.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rules.common.cells import trim
from rules.common.spec import DomainSpec

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "seeds"
MALFORMED_FILE = "malformed.json"

Row = dict
Maker = Callable[[Row, str], "Row | str"]
"""(a valid row written just before, a fresh id) → the malformed row, or its raw line."""


@dataclass(frozen=True)
class Plan:
    """How one domain's folder is built."""

    domain: str
    spec: DomainSpec
    """The domain's rules (`rules.<domain>.spec.SPEC`): the sample is gated by them."""
    main: str
    """The dataset whose line count is `rows`."""
    copied: dict[str, tuple[str, ...]]
    """Per-block datasets → the id fields that get a per-block suffix."""
    shared: tuple[str, ...]
    malformed: dict[str, tuple[tuple[str, Maker], ...]] = field(default_factory=dict)
    """dataset → three (reason_code, maker)."""


_SEED_ROWS: dict[str, dict[str, tuple[Row, ...]]] = {}


def seed_rows(plan: Plan) -> dict[str, tuple[Row, ...]]:
    """The seed sample's rows that pass the domain's gates, per dataset, in file order (read once)."""
    if plan.domain not in _SEED_ROWS:
        _SEED_ROWS[plan.domain] = _seed_rows(plan)
    return _SEED_ROWS[plan.domain]


def _seed_rows(plan: Plan) -> dict[str, tuple[Row, ...]]:
    from rules.common.bounded_json import parse_object

    folder = SEEDS / plan.domain
    quarantine = plan.spec.load(folder)[0].quarantine
    bad = set(zip(quarantine["dataset"], quarantine["line"].astype(int)))
    out = {}
    for path in sorted(folder.glob("*.jsonl")):
        if path.stem == "golden":
            continue
        lines = path.read_text(encoding="utf-8").split("\n")
        out[path.stem] = tuple(
            parse_object(t) for i, t in enumerate(lines, start=1) if t.strip() and (path.stem, i) not in bad
        )
    return out


def suffixed(value: object, suffix: str) -> object:
    """value with suffix after its trimmed core, so whitespace around an id stays where it was."""
    if not isinstance(value, str):
        return value
    core = trim(value)
    if not core:
        return value
    end = value.index(core) + len(core)
    return value[:end] + suffix + value[end:]


def copy(row: Row, fields: tuple[str, ...], suffix: str) -> Row:
    out = dict(row)
    for f in fields:
        if f in out:
            out[f] = suffixed(out[f], suffix)
    return out


def block_suffix(tag: str, block: int) -> str:
    return f"~{tag}{block:x}"


def _stream(plan: Plan, name: str, blocks: int, tag: str, limit: int | None) -> Iterator[Row]:
    rows = seed_rows(plan)[name]
    if name in plan.shared:
        yield from rows
        return
    fields, n = plan.copied[name], 0
    for b in range(blocks):
        suffix = block_suffix(tag, b)
        for row in rows:
            if limit is not None and n >= limit:
                return
            yield copy(row, fields, suffix)
            n += 1


def _write(path: Path, rows: Iterator[Row], total: int, bad: tuple[tuple[str, Maker], ...], rng: random.Random,
           tag: str) -> list[dict]:
    """Write `total` lines: the rows, with the malformed ones at drawn lines (never line 1)."""
    lines = sorted(rng.sample(range(2, total + 1), len(bad)))
    placed, out, previous = dict(zip(lines, bad)), [], None
    with path.open("w", encoding="utf-8") as fh:
        for line in range(1, total + 1):
            if line in placed:
                code, make = placed[line]
                made = make(dict(previous), f"BAD-{tag}-{len(out) + 1}")
                fh.write((made if isinstance(made, str) else dumps(made)) + "\n")
                out.append({"line": line, "reason_code": code})
            else:
                previous = next(rows)
                fh.write(dumps(previous) + "\n")
    return out


def dumps(row: Row) -> str:
    return json.dumps(row, ensure_ascii=False)


def build(plan: Plan, rows: int, seed: int, out_dir: Path) -> dict:
    """Write the folder; return {"rows": {dataset: lines}, "malformed": {dataset: [...]}}."""
    rng = random.Random(f"{plan.domain}:{seed}")
    tag = f"{rng.getrandbits(24):06x}"
    per_block = len(seed_rows(plan)[plan.main])
    valid_main = rows - len(plan.malformed[plan.main])
    if valid_main < 1:
        raise ValueError(f"rows must be at least {len(plan.malformed[plan.main]) + 1}")
    blocks = -(-valid_main // per_block)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    counts, malformed = {}, {}
    for name in (plan.main, *sorted(n for n in seed_rows(plan) if n != plan.main)):
        limit = valid_main if name == plan.main else None
        size = valid_main if name == plan.main else len(seed_rows(plan)[name]) * (1 if name in plan.shared else blocks)
        bad = plan.malformed[name]
        total = size + len(bad)
        malformed[name] = _write(out_dir / f"{name}.jsonl", _stream(plan, name, blocks, tag, limit), total, bad, rng, tag)
        counts[name] = total
    (out_dir / MALFORMED_FILE).write_text(json.dumps(malformed, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return {"rows": counts, "malformed": malformed}


# -- makers shared by the domains ---------------------------------------------------------


def with_fields(id_field: str | None = None, **values) -> Maker:
    """The previous row with a fresh id (when id_field is given) and the fields set."""

    def make(prev: Row, fresh: str) -> Row:
        if id_field:
            prev[id_field] = fresh
        prev.update(values)
        return prev

    return make


def truncated(id_field: str) -> Maker:
    """The previous row under a fresh id, cut short: not JSON."""

    def make(prev: Row, fresh: str) -> str:
        prev[id_field] = fresh
        return dumps(prev)[:-3]

    return make


def repeated(changes: dict) -> Maker:
    """The previous row again under the same id, with other values: a later duplicate."""

    def make(prev: Row, fresh: str) -> Row:
        prev.update(changes)
        return prev

    return make
