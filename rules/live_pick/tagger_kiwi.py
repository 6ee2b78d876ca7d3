"""The `kiwi` tagger: Korean morphological analysis (kiwipiepy with its packaged model, offline).

Bodies and vocabulary entries go through the same analyser; a body's content lemmas (particles,
endings, suffixes and symbols dropped) are matched against each topic's entries, so inflected
and spaced forms meet their dictionary form, and a compound noun the analyser keeps whole meets
an entry that is its head ("배낭여행" → 여행). The analyser takes about two seconds and a few
hundred MB to load: it is built once per process, on first use, and never by `judge` with gold
tags (nothing imports kiwipiepy until this tagger is asked for).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import yaml

from rules.live_pick.tagging import Proposal, dedupe_tags

VOCABULARY_PATH = Path(__file__).with_name("topic_lemmas.yaml")
CONTENT_PREFIXES = ("N", "V", "M", "XR", "SL", "SH", "SN")
"""Part-of-speech tags kept as content: nouns, predicates, adverbs/determiners, roots, foreign words, numbers."""
NOT_CONTENT = ("VCP", "VCN")
"""The copulas 이다 / 아니다 carry no topic."""
KNOWN_BODIES = 100_000
"""Bodies whose lemmas and tags are kept (emptied when full): a few tens of MB at most."""


def content_lemmas(tokens) -> tuple[str, ...]:
    return tuple(t.lemma.casefold() for t in tokens
                 if t.tag.startswith(CONTENT_PREFIXES) and not t.tag.startswith(NOT_CONTENT))


def read_vocabulary(path: str | Path | None = None) -> dict[str, list[str]]:
    source = Path(path or VOCABULARY_PATH)
    data = yaml.safe_load(source.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict) or not all(isinstance(v, list) and v for v in data.values()):
        raise ValueError(f"{source}: expected a map of tag → non-empty list of words")
    return {str(tag): [str(e) for e in entries] for tag, entries in data.items()}


def _user_nouns(vocabulary: dict[str, list[str]]) -> list[str]:
    """One-word Hangul entries that are not verbs: registered with the analyser as nouns, so
    that "고음" or "팬미팅" in a sentence stays one word instead of being split by context."""
    return sorted({e for entries in vocabulary.values() for e in entries
                   if " " not in e and "+" not in e and len(e) >= 2 and not e.endswith("다")
                   and all("가" <= ch <= "힣" for ch in e)})


def build_analyser(vocabulary: dict[str, list[str]]):
    from kiwipiepy import Kiwi

    kiwi = Kiwi()
    for word in _user_nouns(vocabulary):
        kiwi.add_user_word(word, "NNG", 0.0)
    return kiwi


def parse_vocabulary(kiwi, vocabulary: dict[str, list[str]]):
    """tag → entries; an entry is one or more lemma runs that must all occur (`A + B`)."""
    out = {}
    for tag, entries in vocabulary.items():
        parsed = []
        for entry in entries:
            runs = tuple(content_lemmas(kiwi.tokenize(part.strip())) for part in entry.split("+"))
            if not all(runs):
                raise ValueError(f"vocabulary {tag}: entry {entry!r} has no content word")
            parsed.append(runs)
        out[tag] = tuple(parsed)
    return out


HEAD_MIN = 2
"""Syllables a one-word noun entry needs to match as the head of a compound ("보드게임" meets "게임",
"배낭여행" meets "여행"); shorter entries match only whole ("곡" never meets "작곡")."""


def _is_head(entry: str) -> bool:
    return len(entry) >= HEAD_MIN and not entry.endswith("다") and all("가" <= ch <= "힣" for ch in entry)


def _has_run(lemmas: tuple[str, ...], run: tuple[str, ...]) -> bool:
    """The run occurs in the lemmas, contiguous; a one-noun run also as the head (last part) of a
    longer noun the analyser kept whole: Korean compounds put the head last."""
    n = len(run)
    if n == 1:
        word = run[0]
        return word in lemmas or (_is_head(word) and any(len(w) > len(word) and w.endswith(word) for w in lemmas))
    return any(lemmas[i:i + n] == run for i in range(len(lemmas) - n + 1))


def match(lemmas: tuple[str, ...], vocabulary) -> list[str]:
    """Tags, in vocabulary order, with an entry whose every run occurs in the lemmas."""
    return dedupe_tags(tag for tag, entries in vocabulary.items()
                       if any(all(_has_run(lemmas, run) for run in entry) for entry in entries))


class KiwiTagger:
    name = "kiwi"

    def __init__(self, vocabulary_path: str | Path | None = None):
        words = read_vocabulary(vocabulary_path)
        self._lock = threading.Lock()  # one analyser, possibly called from several threads of a service
        self._known: dict[str, tuple[tuple[str, ...], tuple[str, ...] | None]] = {}
        self.kiwi = build_analyser(words)
        self.vocabulary = parse_vocabulary(self.kiwi, words)

    def _read(self, bodies: Sequence[str]) -> list[tuple[tuple[str, ...], tuple[str, ...] | None]]:
        """(content lemmas, matched tags) per body. One analyser call per line: short chat lines gain
        nothing from the analyser's worker threads. Both are kept by body: a live window's lines
        are tagged as they arrive and again by the checks when it closes, and chat repeats itself
        ("ㅋㅋㅋ", the same question)."""
        out = []
        with self._lock:
            known = self._known
            for b in bodies:
                if not isinstance(b, str):
                    out.append(((), None))
                    continue
                found = known.get(b)
                if found is None:
                    if len(known) >= KNOWN_BODIES:
                        known.clear()
                    lemmas = content_lemmas(self.kiwi.tokenize(b))
                    found = known[b] = (lemmas, tuple(match(lemmas, self.vocabulary)) or None)
                out.append(found)
        return out

    def lemmas(self, bodies: Sequence[str]) -> list[tuple[str, ...]]:
        return [lemmas for lemmas, _ in self._read(bodies)]

    def propose(self, bodies: Sequence[str], vocabularies=None, groups=None) -> list[Proposal]:
        return [Proposal(list(tags) if tags else None) for _, tags in self._read(bodies)]


_BUILDING = threading.Lock()


def shared_tagger() -> KiwiTagger:
    """The process's one kiwi tagger, built on first use (a few seconds: the analyser's model
    loads on its first sentence); a caller while another thread builds it waits for that one."""
    with _BUILDING:
        return _built()


@lru_cache(maxsize=1)
def _built() -> KiwiTagger:
    return KiwiTagger()
