"""Runs the admin pages show: a domain's raw folder as a whole and per day, and every upload.

A run is judged from its folder exactly as `verdicts judge` / `validate` / `board` do it (the
same engine, gates and checks as the Dagster chain), then kept in memory until its files change,
the least recently used first out when more than `run_cache_runs` runs or an estimated
`run_cache_bytes` are held. Run keys: `all` (the whole raw folder), `day-YYYY-MM-DD` (ASCII digits,
a real date, one the raw folder has lines on), `up-<hex>` (an upload).
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from evals.board import Board, BoardSpec
from evals.domains import get as get_domain
from evals import domains
from web.config import WebConfig

MAIN_DATASET = {"persona": ("turns", "created_at"), "live_pick": ("live_chat", "sent_at"),
                "retry": ("interaction_events", "sent_at"), "handoff": ("chat_messages", "sent_at")}
"""The dataset whose timestamps split a domain's raw folder into days, as the Dagster partitions do."""

RUN_KEY = re.compile(r"all|day-[0-9]{4}-[0-9]{2}-[0-9]{2}|up-[0-9a-f]{32}")
"""The forms of a run key (whole string, ASCII only: `\\d` would take other scripts' digits)."""
RUN_OVERHEAD_BYTES = 64 * 1024
"""What a judged run holds besides its tables and rows (board, report, checks): about 60–90 KB on the
sample's smallest days, measured with tracemalloc."""


def valid_key(key: str) -> bool:
    """A run key of one of the three forms, its day a real calendar date."""
    if not isinstance(key, str) or not RUN_KEY.fullmatch(key):
        return False
    if key.startswith("day-"):
        try:
            dt.date.fromisoformat(key[4:])
        except ValueError:
            return False
    return True


def footprint(run: "Run") -> int:
    """Bytes a judged run is taken to hold: its tables' own count (pandas, deep), twice its rows as
    JSON, and the fixed part. Within about a third of what tracemalloc measured on the sample's runs."""
    import orjson
    import pandas as pd

    tables = sum(int(t.memory_usage(deep=True).sum()) for t in run.tables.values() if isinstance(t, pd.DataFrame))
    rows = len(orjson.dumps(run.rows, default=str, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS))
    return tables + 2 * rows + RUN_OVERHEAD_BYTES
STAGES = ("읽기와 게이트", "판정", "자동 검증", "리포트")


@dataclass
class Run:
    domain: str
    key: str
    folder: Path
    day: str | None
    sample: bool
    rows: list[dict]
    board: Board
    tables: dict
    golden: list[dict] | None
    samples: dict[str, list[str]] = field(default_factory=dict)
    """Manual check key → the ids of this run's sample."""

    @property
    def spec(self) -> BoardSpec:
        return get_domain(self.domain).board()

    @property
    def report(self):
        return self.board.report

    @property
    def by_id(self) -> dict[str, dict]:
        f = self.spec.id_field
        return {r[f]: r for r in self.rows if isinstance(r.get(f), str)}

    @property
    def title(self) -> str:
        return run_title(self.key, self.sample)


def run_title(key: str, sample: bool = False) -> str:
    if key == "all":
        return "샘플 데이터 전체" if sample else "원본 폴더 전체"
    if key.startswith("day-"):
        return key[4:]
    return f"업로드 {key[3:11]}"


def _signature(folder: Path) -> tuple:
    return tuple(sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in folder.glob("*.jsonl")))


class Runs:
    """Judged runs by (domain, key), computed once per version of their files."""

    def __init__(self, config: WebConfig):
        self.config = config
        self.uploads_root = Path(config.home) / "uploads"
        self._cache: OrderedDict[tuple[str, str], tuple[tuple, Run, int]] = OrderedDict()
        """(domain, key) → (the files' signature, the run, its footprint), least recently used first."""
        self._held = 0
        self._days: dict[str, tuple[tuple, list[str]]] = {}
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._guard = threading.Lock()

    def raw_folder(self, domain: str) -> Path:
        return Path(self.config.raw_dir) / domain

    def is_sample(self, folder: Path) -> bool:
        from rules.common.environment import SAMPLE_DIR

        return Path(folder).resolve().parent == SAMPLE_DIR.resolve()

    def upload_folder(self, domain: str, upload_id: str) -> Path:
        return self.uploads_root / domain / upload_id

    def folder_of(self, domain: str, key: str) -> Path:
        if key.startswith("up-"):
            return self.upload_folder(domain, key[3:])
        return self.raw_folder(domain)

    def days(self, domain: str) -> list[str]:
        """Days of the raw folder's main dataset (Asia/Seoul), newest first; none when it cannot be read."""
        from rules.common.days import line_days
        from rules.common.jsonl import DatasetError, read_raw

        folder = self.raw_folder(domain)
        dataset, time_field = MAIN_DATASET[domain]
        sig = _signature(folder) if folder.is_dir() else ()
        hit = self._days.get(domain)
        if hit and hit[0] == sig:
            return hit[1]
        try:
            raw = read_raw(folder / f"{dataset}.jsonl", dataset)
            found = sorted({d for d in line_days(raw, time_field, "Asia/Seoul") if isinstance(d, str)}, reverse=True) if len(raw) else []
        except DatasetError:
            found = []
        self._days[domain] = (sig, found)
        return found

    def cached_days(self, domain: str) -> list[str]:
        """The raw folder's days if already found for its files as they are, else none (nothing is read)."""
        folder = self.raw_folder(domain)
        hit = self._days.get(domain)
        return hit[1] if hit and hit[0] == (_signature(folder) if folder.is_dir() else ()) else []

    def uploads(self, domain: str) -> list[str]:
        """Upload ids of the domain, newest first."""
        root = self.uploads_root / domain
        if not root.is_dir():
            return []
        found = [p for p in root.iterdir() if p.is_dir() and re.fullmatch(r"[0-9a-f]{32}", p.name)]
        return [p.name for p in sorted(found, key=lambda p: p.stat().st_mtime_ns, reverse=True)]

    def keys(self, domain: str) -> list[str]:
        return ["all", *[f"day-{d}" for d in self.days(domain)], *[f"up-{u}" for u in self.uploads(domain)]]

    def cached(self, domain: str, key: str) -> Run | None:
        with self._guard:
            hit = self._cache.get((domain, key))
        folder = self.folder_of(domain, key)
        if hit and folder.is_dir() and hit[0] == _signature(folder):
            with self._guard:
                if (domain, key) in self._cache:
                    self._cache.move_to_end((domain, key))
            return hit[1]
        return None

    def held(self) -> tuple[int, int]:
        """(runs, estimated bytes) in memory."""
        with self._guard:
            return len(self._cache), self._held

    def _keep(self, domain: str, key: str, sig: tuple, run: Run) -> None:
        size = footprint(run)
        with self._guard:
            old = self._cache.pop((domain, key), None)
            self._held -= old[2] if old else 0
            self._cache[(domain, key)] = (sig, run, size)
            self._held += size
            while len(self._cache) > 1 and (len(self._cache) > self.config.run_cache_runs or self._held > self.config.run_cache_bytes):
                _, (_, _, gone) = self._cache.popitem(last=False)
                self._held -= gone

    def load(self, domain: str, key: str, progress: Callable[[str], None] = lambda stage: None) -> Run:
        """The judged run (DatasetError when a file cannot be used); one computation at a time per run.
        KeyError for a key that is not one (`valid_key`) or a day the raw folder has no line on."""
        if not valid_key(key):
            raise KeyError(key)
        if key.startswith("day-") and key[4:] not in self.days(domain):
            raise KeyError(f"{key} (no line of the raw folder is on that day)")
        with self._guard:
            lock = self._locks.setdefault((domain, key), threading.Lock())
        with lock:
            run = self.cached(domain, key)
            if run is None:
                folder = self.folder_of(domain, key)
                sig = _signature(folder) if folder.is_dir() else ()
                run = self._judge(domain, key, folder, progress)
                self._keep(domain, key, sig, run)
            return run

    def _judge(self, domain_name: str, key: str, folder: Path, progress) -> Run:
        from rules.common.jsonl import DatasetError

        if not folder.is_dir():
            raise DatasetError(MAIN_DATASET[domain_name][0], str(folder), "folder not found")
        domain = domains.get(domain_name)  # one instance per run: some domains keep the last view for the report
        day = key[4:] if key.startswith("day-") else None
        from_sample = self.is_sample(folder)
        progress(STAGES[0])
        golden_path = folder / "golden.jsonl"
        golden = domain.load_golden(golden_path) if golden_path.is_file() else None
        judged = domain.judge_dir(folder, day=day)
        progress(STAGES[1])
        progress(STAGES[2])
        checks, gated = domain.check_dir(folder, judged.rows, day=day)
        progress(STAGES[3])
        scope = f"{domain_name} · {run_title(key, from_sample)}"
        # Decisions are filled when a page is shown (`pages.filled_report`): they change without the files changing.
        report = domain.report(judged.rows, golden, checks, gated.quarantine, gated.reconciliation, scope=scope, judged=gated.normalised,
                               golden_path=golden_path if golden is not None else None, input_dir=folder, sample=from_sample)
        extra = domain.board().gather(domain, folder, judged) if key == "all" or key.startswith("up-") else {}
        tables = dict(judged.normalised.tables)
        board = Board(domain_name, judged.rows, report, domain.board(), sample=from_sample, **extra)
        run = Run(domain_name, key, folder, day, from_sample, judged.rows, board, tables, golden)
        run.samples = {k: drawn["ids"] for k, drawn in report.manual.items()}
        return run
