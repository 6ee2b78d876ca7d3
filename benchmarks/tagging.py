"""What tagging adds per chat line, in batches of 400 lines (one second of a 400 lines/s broadcast).

    .venv/bin/python benchmarks/tagging.py [BATCHES]

Per tagger (lexicon, kiwi): the analyser's one-off load, then the median over BATCHES batches
(default 20) of milliseconds per line to tag (`tag_lines`: the tagger plus the vocabulary rule)
and of the whole judgement with that tagger minus the judgement of the same lines on gold tags
(what the tagger adds to a live window). The floor, measured in the same run, is the engine
judging the batch on gold tags; ratios are against it. Lines are the sample broadcast's lines
repeated with fresh ids (see live_pick_engine.py).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from live_pick_engine import synthetic_raw  # noqa: E402

from rules.live_pick.config import load_config  # noqa: E402
from rules.live_pick.engine import judge  # noqa: E402
from rules.live_pick.normalise import normalise  # noqa: E402
from rules.live_pick.tags import tag_lines, tag_source  # noqa: E402

BATCH = 400


def per_line_ms(fn, lines: int) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000 / lines


def main(batches: int) -> None:
    config = load_config()
    norm = normalise(synthetic_raw(BATCH * batches), config)
    chat, sheet, relation = norm.chat, norm.sheet, norm.relation
    parts = [chat.iloc[i:i + BATCH] for i in range(0, len(chat), BATCH)]
    floor = statistics.median(per_line_ms(lambda p=p: judge(p, sheet, relation, config), len(p)) for p in parts)
    print(f"{len(chat)} lines in {len(parts)} batches of ≤{BATCH}; floor (judge on gold tags): {floor:.3f} ms/line")
    print(f"{'tagger':>8} {'load s':>7} {'tag ms/line':>12} {'× floor':>8} {'added to judge ms/line':>23}")
    for name in ("lexicon", "kiwi"):
        t = time.perf_counter()
        tagger = tag_source(name)
        load = time.perf_counter() - t
        tag = statistics.median(per_line_ms(lambda p=p: tag_lines(p, sheet, tagger), len(p)) for p in parts)
        added = statistics.median(
            per_line_ms(lambda p=p: judge(p, sheet, relation, config, tagger), len(p))
            - per_line_ms(lambda p=p: judge(p, sheet, relation, config), len(p)) for p in parts)
        print(f"{name:>8} {load:7.2f} {tag:12.3f} {tag / floor:8.2f} {added:23.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
