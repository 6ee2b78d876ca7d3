"""retry's explanation read row by row: a dict per row (`frame_records`) handed to its verdict's
builder. The column-wise `rules.retry.explain` is held to it."""

from __future__ import annotations

import pandas as pd

from rules.common import evidence
from rules.common.korean import josa
from rules.retry import verdicts as V
from rules.retry.baseline import DEFAULT, FALLBACK
from rules.retry.config import RetryConfig
from rules.retry.display import show, show_pair
from rules.retry.explain import CATALOG, EVENTS, USED, explain_context


def ev(dataset: str, field: str, value) -> dict:
    return evidence.row("dataset", dataset, field, value)


def explain(f: pd.DataFrame, config: RetryConfig, context: tuple[dict, dict, dict] | None = None) -> tuple[list, list]:
    """Evidence and reason of each row of `f`; `context` (`explain_context` of every event) when `f` is
    a part of them."""
    texts, names, session_names = context if context is not None else explain_context(f)
    build = {V.EXACT_RETRY: _exact, V.REWORDED_RETRY: _reworded, V.SURFACE_HOP: _hop, V.ONE_SHOT: _one_shot}
    cited, reasons = [], []
    for r in evidence.frame_records(f[USED]):
        r["matched_text"] = texts.get(r["matched_event_id"])
        r["matched_surface"] = names.get(r["matched_event_id"])
        r["session_names"] = session_names[r["session_id"]]
        parts = build[r["verdict"]](r, config)
        parts += _baseline_note(r, config)
        if r["result_shown"] is None:
            parts.append("결과가 떴는지 기록이 비어 있지만 다시 시도 판정에는 쓰지 않습니다.")
        cited.append(_evidence(r))
        reasons.append(" ".join(parts))
    return cited, reasons


def _evidence(r: dict) -> list[dict]:
    e = [ev(EVENTS, "input_text", r["input_text"]), ev(EVENTS, "surface_key_raw", r["surface_key_raw"])]
    if r["matched_event_id"] is not None:
        e.append(ev(EVENTS, "input_text", r["matched_text"]))
    if r["baseline_source"] in (DEFAULT, FALLBACK):
        e.append(ev(CATALOG, "default_baseline", r["baseline_default"]))
    return e


def _earlier(r: dict) -> str:
    return f"앞서 보낸 말({r['matched_event_id']})"


# -- one builder per verdict -------------------------------------------------------------


def _exact(r: dict, config: RetryConfig) -> list[str]:
    if r["input_text"] == r["matched_text"]:
        parts = [f"{_earlier(r)}과 글자까지 같은 말을 다시 보내, 같은 말을 다시 시도한 것으로 봅니다."]
    else:
        parts = [f"공백과 문장부호를 지우면 {_earlier(r)}과 같아, 같은 말을 다시 보낸 것으로 봅니다."]
    if r["max_exact"] != 1:
        parts.append(f"띄어쓰기가 달라 낱말로 견준 겹침은 {show(r['max_exact'], config.display_decimals)}입니다.")
    return parts


def _reworded(r: dict, config: RetryConfig) -> list[str]:
    top, base = show_pair(r["max_exact"], r["baseline"], config.display_decimals)
    return [f"{_earlier(r)}과 낱말이 겹치는 정도 {josa(top, '이/가')} 이 접점의 평소 겹침 {josa(base, '을/를')} 넘어, "
            "말을 바꿔 다시 시도한 것으로 봅니다."]


def _hop(r: dict, config: RetryConfig) -> list[str]:
    names = r["session_names"]
    overlap = show(r["hop_overlap"], config.display_decimals)
    parts = [f"한 세션에서 {'·'.join(names)} {len(names)}개 접점을 오갔고, {r['matched_surface']} 접점에서 {_earlier(r)}과 "
             f"낱말이 겹쳐({overlap}) 접점 사이를 돌아다닌 것으로 봅니다."]
    if r["max_exact"] is not None:
        top, base = show_pair(r["max_exact"], r["baseline"], config.display_decimals)
        parts.append(f"같은 접점 안 겹침 {josa(top, '은/는')} 평소 겹침 {josa(base, '을/를')} 넘지 않았습니다.")
    return parts


def _one_shot(r: dict, config: RetryConfig) -> list[str]:
    d = config.display_decimals
    if r["max_exact"] is None:
        parts = ["세션에서 이 접점에 처음 보낸 말이라 앞서 견줄 것이 없습니다."]
    elif r["matched_event_id"] is None:
        parts = ["이 접점에 앞서 보낸 말과 겹치는 낱말이 없어 새 요청으로 셉니다."]
    elif r["max_exact"] == r["baseline"]:
        top = show(r["max_exact"], d)
        parts = [f"{_earlier(r)}과 겹치는 정도 {josa(top, '이/가')} 이 접점의 평소 겹침과 같아 다시 시도로 보지 않습니다.",
                 "평소만큼만 겹친 것이라 새 요청으로 셉니다."]
    else:
        top, base = show_pair(r["max_exact"], r["baseline"], d)
        parts = [f"{_earlier(r)}과 겹치는 정도 {josa(top, '이/가')} 이 접점의 평소 겹침 {base}에 못 미쳐 새 요청으로 셉니다."]
    n = r["session_surfaces"]
    if n >= config.hop_min_surfaces and r["hop_match"] is None:
        parts.append(f"세션이 접점 {n}개를 오갔지만 다른 접점에서 앞서 보낸 말과 겹치는 낱말은 없습니다.")
    elif r["hop_match"] is not None:
        parts.append(f"다른 접점에서 앞서 보낸 말({r['hop_match']})과 낱말이 겹치지만 세션이 오간 접점이 {n}개뿐이라 "
                     "접점 사이를 돌아다닌 것으로 보지 않습니다.")
    return parts


def _baseline_note(r: dict, config: RetryConfig) -> list[str]:
    if r["baseline_source"] == DEFAULT:
        value = show(r["baseline"], config.display_decimals)
        return [f"이 접점에는 서로 다른 세션끼리 견줄 말이 없어 카탈로그 기본값 {josa(value, '을/를')} 평소 겹침으로 썼습니다."]
    if r["baseline_source"] == FALLBACK:
        value = show(r["baseline"], config.display_decimals)
        return [f"이 접점에는 서로 다른 세션끼리 견줄 말이 없고 카탈로그 기본값도 비어 있어 평소 겹침을 {josa(value, '으로/로')} 두었습니다."]
    return []
