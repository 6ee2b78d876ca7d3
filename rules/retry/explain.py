"""Evidence rows and the Korean reason for each verdict.

The verdict is already decided; this module says why, citing the values it rests on.
Evidence copies values as written in the input rows: the event's input_text and
surface_key_raw, the matched event's input_text, and the catalog's default_baseline when the
surface had no cross-session pair. Numbers in reasons are rounded for reading only.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from rules.common import evidence, evidence_table
from rules.common.collector import cycle_collection_paused
from rules.common.distinct import exact_duplicated, exact_factorize
from rules.common.evidence_table import Slot
from rules.common.json_columns import Encoded
from rules.common.korean import josa
from rules.retry import verdicts as V
from rules.retry.baseline import DEFAULT, FALLBACK
from rules.retry.config import RetryConfig
from rules.retry.display import show, show_pair

EVENTS, CATALOG = "interaction_events", "surface_catalog"
USED = ["event_id", "session_id", "input_text", "surface_key_raw", "surface_key", "result_shown", "verdict",
        "matched_event_id", "baseline", "baseline_source", "baseline_default", "max_exact", "hop_match", "hop_overlap",
        "session_surfaces"]


CONTEXT = ("matched_text", "matched_surface", "session_names")
"""What explaining a row reads of the other events (`explain_context`), one column each."""


def explain_context(f: pd.DataFrame, matched_pos: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """What explaining each row of `f` (every event, decided, in any order) reads of the others, by
    `CONTEXT` column: the input text and the surface name as shown of the event it matched (None
    when it matched none), and for a surface_hop its session's surfaces' names as shown, each once,
    in the session's order (None for other verdicts).

    `matched_pos`: the row of each row's matched event (-1: none), as deciding found it; else the
    matched events are found through a hash index of the ids (`Index.get_indexer`), not a dict of
    every event. Names are made once per distinct surface name, and lists only for the sessions
    that hold a surface_hop, from their (session, name) pairs left after repeats are dropped."""
    n = len(f)
    shown = _shown(f["surface_name"])
    at = _matched_rows(f["event_id"].to_numpy(dtype=object), f["matched_event_id"].to_numpy(dtype=object)) \
        if matched_pos is None else matched_pos
    session_names = np.full(n, None, dtype=object)
    verdicts = f["verdict"].to_numpy(dtype=object)
    hop = np.flatnonzero(verdicts == V.SURFACE_HOP)
    if len(hop):
        sessions = f["session_id"].to_numpy(dtype=object)
        codes = exact_factorize(f["session_id"])[0]  # ids holding "\x00" kept apart, which `isin` would not
        rows = np.flatnonzero(np.isin(codes, codes[hop]))
        pairs = pd.DataFrame({"session": sessions[rows], "name": shown[rows]})
        first = rows[~exact_duplicated(pairs, ["session", "name"])]
        lists: dict = {}
        for session, name in zip(sessions[first].tolist(), shown[first].tolist()):
            lists.setdefault(session, []).append(name)
        session_names[hop] = [lists[s] for s in sessions[hop].tolist()]
    return {"matched_text": np.append(f["input_text"].to_numpy(dtype=object), None)[at],
            "matched_surface": np.append(shown, None)[at], "session_names": session_names}


def _shown(surface_names: pd.Series) -> np.ndarray:
    """Each row's surface name as shown (`_name`), made once per distinct name."""
    codes, surfaces = exact_factorize(surface_names)
    shown = np.array([*map(_name, surfaces), None], dtype=object)[codes]
    missing = np.flatnonzero(codes < 0)  # None and NaN factorize alike but are shown apart
    shown[missing] = [_name(v) for v in surface_names.to_numpy()[missing]]
    return shown


def _matched_rows(ids: np.ndarray, matched: np.ndarray) -> np.ndarray:
    """The row of each matched id among `ids` (the last, when an id repeats, as a dict of them would
    hold it), -1 where it is none of them."""
    if set(map(type, ids)) <= {str} and set(map(type, matched)) <= {str, type(None)}:
        index = pd.Index(ids, dtype=object)
        if index.is_unique:  # Python's equality on the ids (texts holding "\x00" kept apart)
            at = index.get_indexer(matched)
            at[matched == None] = -1  # noqa: E711 - elementwise; no id is None here
            return at
    last = {e: i for i, e in enumerate(ids.tolist())}
    return np.array([last.get(m, -1) for m in matched.tolist()], dtype=np.intp)


def explain(f: pd.DataFrame, config: RetryConfig, encoded: bool = False) -> tuple[list | Encoded, list]:
    """Evidence and reason of each row of `f`: decided rows holding their `CONTEXT` columns (a part
    of every event), or every event, whose context is then worked out here. `encoded`: the evidence
    as each row's JSON text (`evidence_table.texts`), where no cited value needs spelling otherwise.

    Column-wise: the cited columns read once as `to_dict` gives them, every number shown and every
    particle chosen once per distinct value, and one pass over the rows that joins the sentences
    their verdict and baseline call for — no dict per row, no builder call per row."""
    if not set(CONTEXT) <= set(f.columns):
        f = f.assign(**explain_context(f))
    c = evidence.record_columns(f, USED)
    context = [f[k].to_numpy(dtype=object).tolist() for k in CONTEXT]
    slots = cited_slots(c, context[0])
    cited = evidence_table.texts(slots, len(f)) if encoded else None
    if cited is None:
        cited = evidence_table.lists(slots, len(f))
    d = config.display_decimals
    ctx = _Said(d)
    reasons = []
    with cycle_collection_paused():
        for (text, verdict, matched, shown_result, source, baseline, top, hop, hop_overlap, n,
             matched_text, matched_surface, names) in zip(
                c["input_text"], c["verdict"], c["matched_event_id"], c["result_shown"], c["baseline_source"],
                c["baseline"], c["max_exact"], c["hop_match"], c["hop_overlap"], c["session_surfaces"], *context):
            if verdict == V.EXACT_RETRY:
                parts = _exact(ctx, text, matched, matched_text, top)
            elif verdict == V.REWORDED_RETRY:
                parts = _reworded(ctx, matched, top, baseline)
            elif verdict == V.SURFACE_HOP:
                parts = _hop(ctx, names, matched_surface, matched, top, baseline, hop_overlap)
            elif verdict == V.ONE_SHOT:
                parts = _one_shot(ctx, config, matched, top, baseline, hop, n)
            else:
                raise KeyError(verdict)
            if source == DEFAULT:
                parts.append(ctx.default_note(baseline))
            elif source == FALLBACK:
                parts.append(ctx.fallback_note(baseline))
            if shown_result is None:
                parts.append("결과가 떴는지 기록이 비어 있지만 다시 시도 판정에는 쓰지 않습니다.")
            reasons.append(" ".join(parts))
    return cited, reasons


def cited_slots(c: dict[str, list], matched_text: list) -> list[Slot]:
    """What each row cites: its input text and surface key as written, the matched event's input text
    when it matched one, and the catalog's default when the baseline came from the catalog or the
    fallback."""
    matched = np.array(c["matched_event_id"], dtype=object) != None  # noqa: E711 - elementwise
    source = np.array(c["baseline_source"], dtype=object)
    return [
        Slot("dataset", EVENTS, "input_text", c["input_text"]),
        Slot("dataset", EVENTS, "surface_key_raw", c["surface_key_raw"]),
        Slot("dataset", EVENTS, "input_text", matched_text, matched),
        Slot("dataset", CATALOG, "default_baseline", c["baseline_default"], (source == DEFAULT) | (source == FALLBACK)),
    ]


class _Said:
    """Numbers as shown and the sentences built on them, each worked out once per distinct value:
    a surface's baseline and the few overlaps short texts can have repeat across thousands of rows."""

    def __init__(self, decimals: int):
        self.show = _by_identity(lambda v: show(v, decimals))
        self.pair = _by_identity(lambda a, b: show_pair(a, b, decimals))
        self.josa = lru_cache(maxsize=None)(josa)
        self.default_note = _by_identity(
            lambda b: f"이 접점에는 서로 다른 세션끼리 견줄 말이 없어 카탈로그 기본값 {josa(show(b, decimals), '을/를')} 평소 겹침으로 썼습니다.")
        self.fallback_note = _by_identity(
            lambda b: (f"이 접점에는 서로 다른 세션끼리 견줄 말이 없고 카탈로그 기본값도 비어 있어 평소 겹침을 "
                       f"{josa(show(b, decimals), '으로/로')} 두었습니다."))


def _by_identity(fn):
    """`fn` remembered per its arguments' identities. The rows share a few number objects (each
    overlap and baseline is one Fraction, spread by rank), which are looked up by address here:
    a Fraction's hash is worked out in Python on every lookup. Equal values held by different
    objects are each worked out once. The arguments are kept, so no address is reused meanwhile."""
    memo: dict = {}

    def remembered(*args):
        key = tuple(map(id, args))
        found = memo.get(key)
        if found is None:
            found = memo[key] = (fn(*args), args)
        return found[0]

    return remembered


def _name(surface_name) -> str:
    """A catalog name inside a sentence: without marks that would end the sentence early."""
    return "".join(ch for ch in str(surface_name) if ch not in ".?!") or "이름 없는"


def _earlier(matched) -> str:
    return f"앞서 보낸 말({matched})"


# -- one sentence builder per verdict ------------------------------------------------------


def _exact(said: _Said, text, matched, matched_text, top) -> list[str]:
    if text == matched_text:
        parts = [f"{_earlier(matched)}과 글자까지 같은 말을 다시 보내, 같은 말을 다시 시도한 것으로 봅니다."]
    else:
        parts = [f"공백과 문장부호를 지우면 {_earlier(matched)}과 같아, 같은 말을 다시 보낸 것으로 봅니다."]
    if top != 1:
        parts.append(f"띄어쓰기가 달라 낱말로 견준 겹침은 {said.show(top)}입니다.")
    return parts


def _reworded(said: _Said, matched, top, baseline) -> list[str]:
    a, b = said.pair(top, baseline)
    return [f"{_earlier(matched)}과 낱말이 겹치는 정도 {said.josa(a, '이/가')} 이 접점의 평소 겹침 {said.josa(b, '을/를')} 넘어, "
            "말을 바꿔 다시 시도한 것으로 봅니다."]


def _hop(said: _Said, names: list, matched_surface, matched, top, baseline, overlap) -> list[str]:
    parts = [f"한 세션에서 {'·'.join(names)} {len(names)}개 접점을 오갔고, {matched_surface} 접점에서 {_earlier(matched)}과 "
             f"낱말이 겹쳐({said.show(overlap)}) 접점 사이를 돌아다닌 것으로 봅니다."]
    if top is not None:
        a, b = said.pair(top, baseline)
        parts.append(f"같은 접점 안 겹침 {said.josa(a, '은/는')} 평소 겹침 {said.josa(b, '을/를')} 넘지 않았습니다.")
    return parts


def _one_shot(said: _Said, config: RetryConfig, matched, top, baseline, hop, n) -> list[str]:
    if top is None:
        parts = ["세션에서 이 접점에 처음 보낸 말이라 앞서 견줄 것이 없습니다."]
    elif matched is None:
        parts = ["이 접점에 앞서 보낸 말과 겹치는 낱말이 없어 새 요청으로 셉니다."]
    elif top == baseline:
        parts = [f"{_earlier(matched)}과 겹치는 정도 {said.josa(said.show(top), '이/가')} 이 접점의 평소 겹침과 같아 다시 시도로 보지 않습니다.",
                 "평소만큼만 겹친 것이라 새 요청으로 셉니다."]
    else:
        a, b = said.pair(top, baseline)
        parts = [f"{_earlier(matched)}과 겹치는 정도 {said.josa(a, '이/가')} 이 접점의 평소 겹침 {b}에 못 미쳐 새 요청으로 셉니다."]
    if n >= config.hop_min_surfaces and hop is None:
        parts.append(f"세션이 접점 {n}개를 오갔지만 다른 접점에서 앞서 보낸 말과 겹치는 낱말은 없습니다.")
    elif hop is not None:
        parts.append(f"다른 접점에서 앞서 보낸 말({hop})과 낱말이 겹치지만 세션이 오간 접점이 {n}개뿐이라 "
                     "접점 사이를 돌아다닌 것으로 보지 않습니다.")
    return parts
