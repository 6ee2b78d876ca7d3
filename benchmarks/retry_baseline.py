"""The exact retry baseline at scale: the fast counter against the plain pairwise loop.

    .venv/bin/python benchmarks/retry_baseline.py [--naive N] [--sizes N ...] [--seed S]

One run prints: the naive O(n²) loop and the fast counter on the same N events (default
5,000) with both medians and the ratio of times; then the fast counter alone on larger
inputs (default 100,000 and 1,000,000 events) in one surface. Every measurement runs in a
fresh child process, so its peak resident memory is its own.

Inputs are synthetic but shaped like real Korean requests to a summarising surface: a
pointer or date, a document noun (some with a product or people's name), an optional format
or tone, and a verb — "요약해줘" in most of them, which is what makes naive inverted indexes
quadratic. Sessions hold one to eight events; a third of follow-ups re-send or reword the
previous request (punctuation, a word added or dropped).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

POINTERS = ["이거", "이", "저", "그", "방금", "위", "아래", "첨부한", "올린", "이번", "지난", "오늘", "어제", "새로", "보낸", "받은"]
DOCUMENTS = ["보고서", "회의록", "계약서", "논문", "기사", "이메일", "메일", "공지", "발표자료", "제안서", "기획안", "견적서",
             "매뉴얼", "리뷰", "댓글", "뉴스", "칼럼", "강의", "녹취록", "인터뷰", "블로그", "글", "문서", "파일", "자료", "영상",
             "대본", "소설", "시나리오", "판결문", "약관", "정책", "가이드", "기술문서", "명세서", "이력서", "자기소개서", "리포트",
             "설문", "결과", "데이터", "표", "차트", "엑셀", "슬라이드", "챕터", "단락", "페이지", "스레드", "채팅"]
PERIODS = ["1분기", "2분기", "3분기", "4분기", "상반기", "하반기", "2024년", "2025년", "작년", "올해", "이번달", "지난주", "월간", "주간"]
FORMATS = ["세", "줄로", "한", "문단으로", "짧게", "간단히", "자세히", "핵심만", "요점만", "표로", "목록으로", "영어로", "쉽게",
           "번호", "붙여서", "세줄", "세줄로", "개조식으로", "초등학생도", "이해하게", "전문가처럼", "중립적으로", "100자", "이내로"]
TAILS = ["다시", "좀", "한번", "빨리", "부탁해", "제발", "더", "다시요", "부탁드려요", "고마워"]
VERBS = ["요약해줘"] * 40 + ["정리해줘", "요약", "요약해", "요약해주세요", "줄여줘", "간추려줘", "요약해줄래", "정리", "요약좀"]
SYLLABLES = list("가나다라마바사아자차카타파하민서준지윤현우도하은수영재석진호태경")


def _name(rng: random.Random) -> str:
    # Product, company and people's names: a long tail, drawn Zipf-like.
    rank = int(rng.paretovariate(1.1)) % 30_000
    r = random.Random(rank)
    return "".join(r.choice(SYLLABLES) for _ in range(r.randint(2, 3)))


def _request(rng: random.Random) -> list[str]:
    words = []
    if rng.random() < 0.5:
        words.append(rng.choice(POINTERS))
    if rng.random() < 0.35:
        words.append(rng.choice(PERIODS))
    if rng.random() < 0.45:
        words.append(_name(rng))
    words.append(rng.choice(DOCUMENTS))
    for _ in range(rng.choice((0, 0, 1, 1, 2))):
        words.append(rng.choice(FORMATS))
    words.append(rng.choice(VERBS))
    if rng.random() < 0.2:
        words.append(rng.choice(TAILS))
    return words


def _retry(rng: random.Random, previous: list[str]) -> list[str]:
    words = list(previous)
    move = rng.random()
    if move < 0.3:
        return words  # re-sent; punctuation is added below
    if move < 0.6 or len(words) < 3:
        words.insert(rng.randrange(len(words) + 1), rng.choice(FORMATS + TAILS))
    else:
        words.pop(rng.randrange(len(words) - 1))
    return words


def generate(n: int, seed: int = 20260921) -> tuple[list[str], list[str]]:
    """n input texts and their session ids, in one surface."""
    rng = random.Random(seed)
    texts, sessions = [], []
    session = 0
    while len(texts) < n:
        session += 1
        previous = None
        for _ in range(min(rng.choice((1, 1, 1, 2, 2, 3, 4, 5, 8)), n - len(texts))):
            words = _retry(rng, previous) if previous and rng.random() < 0.35 else _request(rng)
            text = " ".join(words) + rng.choice(("", "", "", "!", "?", ".", "!!", " 🙏", "~"))
            texts.append(text)
            sessions.append(f"s{session:07d}")
            previous = words
    return texts, sessions


# -- measurements (each in a child process) -------------------------------------------------


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _prepare(n: int, seed: int):
    import numpy as np

    import rules.retry.baseline  # noqa: F401 - imports are not part of any timing
    from rules.retry.text import words
    from rules.retry.wordsets import index_word_sets

    texts, sessions = generate(n, seed)
    t0 = time.perf_counter()
    word_sets = [words(t) for t in texts]
    _, codes = np.unique(np.array(sessions), return_inverse=True)
    t1 = time.perf_counter()
    return word_sets, sessions, codes.astype(np.int64).ravel(), t1 - t0, index_word_sets


def _fast(word_sets, codes, index_word_sets):
    from rules.retry.baseline import as_overlaps, cross_session_pairs, median  # imported before timing starts

    ids, ws = index_word_sets(word_sets)
    overlaps = as_overlaps(cross_session_pairs(ids, codes, ws))
    return median(overlaps), sum(overlaps.values()), len(ws)


def _child_compare(n: int, seed: int, queue) -> None:
    from rules.retry.baseline import median, naive_overlaps

    word_sets, sessions, codes, _, index_word_sets = _prepare(n, seed)
    t0 = time.perf_counter()
    fast, pairs, distinct = _fast(word_sets, codes, index_word_sets)
    t1 = time.perf_counter()
    naive = median(naive_overlaps(word_sets, sessions))
    t2 = time.perf_counter()
    queue.put({"n": n, "fast": fast, "naive": naive, "fast_s": t1 - t0, "naive_s": t2 - t1, "pairs": pairs, "distinct": distinct})


def _child_fast(n: int, seed: int, queue) -> None:
    word_sets, _, codes, tokenise_s, index_word_sets = _prepare(n, seed)
    before = _peak_mb()
    t0 = time.perf_counter()
    value, pairs, distinct = _fast(word_sets, codes, index_word_sets)
    t1 = time.perf_counter()
    queue.put({"n": n, "fast": value, "fast_s": t1 - t0, "tokenise_s": tokenise_s, "pairs": pairs, "distinct": distinct,
               "peak_mb": _peak_mb(), "input_mb": before})


def _in_child(target, *args) -> dict:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, queue))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--naive", type=int, default=5_000, help="events for the naive-vs-fast comparison")
    p.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000], help="events for the fast counter alone")
    p.add_argument("--seed", type=int, default=20260921)
    args = p.parse_args(argv)

    r = _in_child(_child_compare, args.naive, args.seed)
    same = r["fast"] == r["naive"]
    print(f"naive vs fast on {r['n']:,} events ({r['distinct']:,} distinct word sets, {r['pairs']:,} cross-session pairs)")
    print(f"  naive  {r['naive_s']:8.2f} s   median {r['naive']} ≈ {float(r['naive']):.4f}")
    print(f"  fast   {r['fast_s']:8.2f} s   median {r['fast']} ≈ {float(r['fast']):.4f}")
    print(f"  same value: {'yes' if same else 'NO'}; fast is {r['naive_s'] / r['fast_s']:,.0f}× faster")
    print()
    print(f"{'events':>11} {'distinct sets':>14} {'cross pairs':>18} {'median':>9} {'words s':>8} {'baseline s':>11} {'peak MB':>8} {'+MB':>6}")
    for n in args.sizes:
        r = _in_child(_child_fast, n, args.seed)
        print(f"{r['n']:>11,} {r['distinct']:>14,} {r['pairs']:>18,} {str(r['fast']):>9} {r['tokenise_s']:>8.2f} "
              f"{r['fast_s']:>11.2f} {r['peak_mb']:>8.0f} {r['peak_mb'] - r['input_mb']:>6.0f}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
