"""Throughput of the live_pick gates and engine on synthetic chat, in one process.

    .venv/bin/python benchmarks/live_pick_engine.py [ROWS ...]

Prints, per size: seconds for gating (JSON + schema + ids + timestamps), judging (rules,
evidence, summaries), the re-computation checks, and peak resident memory. Lines are the
sample broadcast's lines repeated over later windows with fresh ids, so every rule fires.
`versioned` judges the same lines again against five sheet versions per character whose
changes fall inside the lines' span (each line picks the version in force when its window
opened), and `ratio` is that time over the plain judge of the same run.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rules.live_pick.checks import run_checks  # noqa: E402
from rules.live_pick.config import load_config  # noqa: E402
from rules.live_pick.engine import judge, records  # noqa: E402
from rules.live_pick.normalise import normalise, read_input_dir  # noqa: E402
from rules.live_pick.sheets import EFFECTIVE, VERSION  # noqa: E402


def synthetic_raw(rows: int) -> dict[str, pd.DataFrame]:
    raw = read_input_dir(ROOT / "seeds" / "live_pick")
    lines = [json.loads(t) for t in raw["live_chat"]["text"] if t.startswith("{") and '"msg_id"' in t]
    out = []
    for i in range(rows):
        base = dict(lines[i % len(lines)])
        shift = timedelta(minutes=10 * (i // len(lines)))
        try:
            sent = datetime.fromisoformat(base["sent_at"]) + shift
        except (KeyError, TypeError, ValueError):
            continue
        base["msg_id"] = f"MSG-BENCH-{i}"
        base["sent_at"] = sent.isoformat()
        out.append(json.dumps(base, ensure_ascii=False))
    raw["live_chat"] = pd.DataFrame({"dataset": "live_chat", "file": "synthetic", "line": range(1, len(out) + 1), "text": out})
    return raw


def versioned(sheet: pd.DataFrame, chat: pd.DataFrame, versions: int = 5) -> pd.DataFrame:
    """`versions` versions of every character, the later ones coming into force across the chat's span."""
    first, last = int(chat["sent_at_ns"].min()), int(chat["sent_at_ns"].max())
    parts = []
    for v in range(1, versions + 1):
        part = sheet.copy()
        part[VERSION] = v
        part[EFFECTIVE] = pd.array([None if v == 1 else first + (last - first) * (v - 1) // versions] * len(part), dtype="Int64")
        part["reply_cooldown_sec"] = (part["reply_cooldown_sec"] - 10 * (v - 1)).clip(lower=0)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def main(sizes: list[int]) -> None:
    config = load_config()
    print(f"{'rows':>10} {'gates s':>9} {'judge s':>9} {'checks s':>9} {'rows/s':>10} {'versioned s':>12} {'ratio':>6} {'peak MB':>9}")
    for n in sizes:
        raw = synthetic_raw(n)
        t0 = time.perf_counter()
        norm = normalise(raw, config)
        t1 = time.perf_counter()
        verdicts = judge(norm.chat, norm.sheet, norm.relation, config)
        rows = records(verdicts)
        t2 = time.perf_counter()
        results = run_checks(norm, rows, config)
        t3 = time.perf_counter()
        assert all(r.passed for r in results), [r.id for r in results if not r.passed]
        sheets = versioned(norm.sheet, norm.chat)
        t4 = time.perf_counter()
        records(judge(norm.chat, sheets, norm.relation, config))
        t5 = time.perf_counter()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{n:>10,} {t1 - t0:>9.2f} {t2 - t1:>9.2f} {t3 - t2:>9.2f} {n / (t2 - t0):>10,.0f} {t5 - t4:>12.2f} "
              f"{(t5 - t4) / (t2 - t1):>6.2f} {peak:>9.0f}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10_000, 100_000])
