"""Sheet tuning suggestions from one closed broadcast (seed 001, week 3).

From the verdict rows of one character's broadcast, `figures` counts per topic: lines answered,
lines held by the cooldown (with their elapsed seconds), lines held by closeness (with the
viewers' levels), lines deferred by rank, and repeat askers (viewers with two or more lines on
the topic). A line counts under the topic its verdict cites, from the tags it was judged with
(`cited_topic`: the `live_chat.topic_tags` value of a gold run, the `live_chat.body` value with
agg `tag:<tagger>` of a tagger's run — lexicon, kiwi and openai alike): the answered topic for
방금 답한 주제, the topic that set the threshold for 관계 단계에 아직 못 미침, the first tag of a
ranked line. Out-of-world lines count only in
the broadcast's totals: no sheet value here would bring them in.

Two rules, thresholds in `config.yaml` under `suggestions`:

- `shorten_cooldown`: enough lines held by `reply_cooldown_sec`, and a large enough share of the
  in-world lines → propose their median (lower median) elapsed seconds, rounded down to the
  configured step and never below the floor.
- `lower_closeness`: per topic, enough lines held by its `min_closeness_by_topic`, and a large
  enough share of the topic's in-world lines → propose the held viewers' median (lower median)
  level, at most `max_step` below the current value. A world topic missing from the map is held
  at `missing_topic_min_closeness`; the proposal then adds the topic to the map.

At most `max_per_broadcast` suggestions, strongest first (more held lines, then the cooldown
before closeness, then topic name). Fewer in-world lines than `min_judged_lines` is too thin:
nothing is suggested and the result says so. Each suggestion has a deterministic id (the same
broadcast, base version and proposal always give the same id).

Evidence rows use the usual `{dataset, field, agg, value}` form; the `agg`s, re-computable
from the broadcast's verdict rows, are:
`count` (in-world lines, of the topic when a `topic_tags` row is cited), `count_just_answered`,
`count_below_closeness`, `count_answered`, `count_deferred`, `median_low_elapsed_sec` (of the lines
held by the cooldown), `median_low_level` (closeness of the viewers held by closeness),
`count_repeat_askers` (distinct viewers with two or more in-world lines on one topic), and `missing_default` (a topic absent from the map: the configured value).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from rules.common.distinct import exact_factorize
from rules.common.evidence import row as evidence_row
from rules.common.korean import josa
from rules.live_pick import verdicts as V
from rules.live_pick.config import LivePickConfig

COOLDOWN_RULE = "shorten_cooldown"
CLOSENESS_RULE = "lower_closeness"
RULE_ORDER = (COOLDOWN_RULE, CLOSENESS_RULE)


@dataclass
class Suggestion:
    suggestion_id: str
    broadcast_id: str
    character_id: str
    rule: str
    field: str
    topic: str | None
    current_value: float | int
    proposed_value: float | int
    base_version: int | None
    evidence: list[dict]
    rationale: str
    strength: int
    """Lines the suggestion rests on (held lines); orders suggestions."""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Suggested:
    figures: pd.DataFrame
    """One row per topic: lines, answered, cooldown_held, closeness_held, deferred, repeat_askers,
    elapsed (list of seconds), levels (list)."""
    totals: dict
    suggestions: list[Suggestion]
    notes: list[str] = field(default_factory=list)
    """Polite Korean sentences: why a rule suggested nothing (too thin, below a threshold)."""
    thin: bool = False


def line_facts(rows: list[dict], config: LivePickConfig) -> pd.DataFrame:
    """Per verdict row: viewer, verdict, cited topic, elapsed seconds, closeness level."""

    def cited(r: dict, dataset: str, name: str):
        for e in r.get("evidence") or []:
            if e.get("dataset") == dataset and e.get("field") == name and e.get("agg") is None:
                return True, e.get("value")
        return False, None

    out = []
    for r in rows:
        topic = cited_topic(r)
        known, level = cited(r, "viewer_relation", "closeness_level")
        out.append({
            "msg_id": r["msg_id"], "viewer_id": r.get("viewer_id"), "verdict": r["verdict"],
            "topic": topic if isinstance(topic, str) else None,
            "elapsed": r.get("cooldown_elapsed_sec"),
            "level": level if known else config.first_time_viewer.closeness_level,
        })
    return pd.DataFrame(out, columns=["msg_id", "viewer_id", "verdict", "topic", "elapsed", "level"])


def cited_topic(row: dict) -> str | None:
    """The tag a verdict row's rules used, whichever tagger gave it: the gold column
    (`live_chat.topic_tags`) or a tagger's reading of the body (`live_chat.body`, agg `tag:<name>`)."""
    for e in row.get("evidence") or []:
        if e.get("dataset") != "live_chat":
            continue
        agg = e.get("agg")
        if (e.get("field") == "topic_tags" and agg is None) or (e.get("field") == "body" and isinstance(agg, str) and agg.startswith("tag:")):
            value = e.get("value")
            return value if isinstance(value, str) else None
    return None


def figures(facts: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Per-topic figures of the in-world lines, and the broadcast's totals."""
    inworld = facts[facts["verdict"] != V.OUT_OF_WORLD]
    totals = {
        "lines": len(facts), "out_of_world": int((facts["verdict"] == V.OUT_OF_WORLD).sum()), "in_world": len(inworld),
        "answered": int((inworld["verdict"] == V.PICK).sum()),
        "cooldown_held": int((inworld["verdict"] == V.JUST_ANSWERED).sum()),
        "closeness_held": int((inworld["verdict"] == V.BELOW_CLOSENESS).sum()),
        "deferred": int((inworld["verdict"] == V.DEFERRED).sum()),
    }
    columns = ["topic", "lines", "answered", "cooldown_held", "closeness_held", "deferred", "repeat_askers", "elapsed", "levels"]
    if inworld.empty:
        totals["repeat_askers"] = 0
        return pd.DataFrame(columns=columns), totals
    # Topics and viewers as exact codes (NA where missing, left out as a group-by leaves it): pandas'
    # group-by reads text only up to a NUL. The topics' text comes back, in Python's order, at the end.
    topic_codes, topic_names = exact_factorize(inworld["topic"])
    viewer_codes = exact_factorize(inworld["viewer_id"])[0]
    inworld = inworld.assign(topic=pd.array(np.where(topic_codes >= 0, topic_codes, 0), dtype="Int64"),
                             viewer_id=pd.array(np.where(viewer_codes >= 0, viewer_codes, 0), dtype="Int64"))
    inworld.loc[topic_codes < 0, "topic"] = pd.NA
    inworld.loc[viewer_codes < 0, "viewer_id"] = pd.NA
    by = inworld.assign(
        answered=inworld["verdict"].eq(V.PICK), cooldown_held=inworld["verdict"].eq(V.JUST_ANSWERED),
        closeness_held=inworld["verdict"].eq(V.BELOW_CLOSENESS), deferred=inworld["verdict"].eq(V.DEFERRED),
    ).groupby("topic", sort=True)
    out = by.agg(lines=("msg_id", "size"), answered=("answered", "sum"), cooldown_held=("cooldown_held", "sum"),
                 closeness_held=("closeness_held", "sum"), deferred=("deferred", "sum"))
    per_viewer = inworld.groupby(["topic", "viewer_id"]).size()
    out["repeat_askers"] = (per_viewer >= 2).groupby(level="topic").sum().reindex(out.index, fill_value=0)
    held = inworld[inworld["verdict"] == V.JUST_ANSWERED].dropna(subset=["elapsed"])
    out["elapsed"] = held.groupby("topic")["elapsed"].agg(lambda s: sorted(int(x) for x in s)).reindex(out.index)
    low = inworld[inworld["verdict"] == V.BELOW_CLOSENESS]
    out["levels"] = low.groupby("topic")["level"].agg(lambda s: sorted(int(x) for x in s)).reindex(out.index)
    for col in ("elapsed", "levels"):
        out[col] = [v if isinstance(v, list) else [] for v in out[col]]
    out = out.reset_index()
    out["topic"] = topic_names[out["topic"].to_numpy(dtype=np.int64)] if len(out) else out["topic"].astype(object)
    out = out.iloc[np.argsort(out["topic"].to_numpy(dtype=object), kind="stable")].reset_index(drop=True)
    for col in ("lines", "answered", "cooldown_held", "closeness_held", "deferred", "repeat_askers"):
        out[col] = out[col].astype("int64")
    repeats = per_viewer[per_viewer >= 2].reset_index()
    totals["repeat_askers"] = int(repeats["viewer_id"].nunique())  # distinct viewers, whatever the topic
    return out[columns], totals


def suggest(rows: list[dict], sheet: dict, broadcast_id: str, config: LivePickConfig) -> Suggested:
    """Suggestions for one character's closed broadcast, judged against `sheet` (its base version)."""
    facts = line_facts(rows, config)
    per_topic, totals = figures(facts)
    rules = config.suggestions
    if totals["in_world"] < rules.min_judged_lines:
        note = (f"이 방송에서 세계관 안의 줄이 {totals['in_world']}건{_by_topic(per_topic, 'lines')}뿐이라 기준 {rules.min_judged_lines}건에 못 미칩니다. "
                "자료가 얇아 이번에는 설정표 변경을 제안하지 않습니다.")
        return Suggested(per_topic, totals, [], [note], thin=True)
    notes: list[str] = []
    unplaced = {col: totals[col] - int(per_topic[col].sum()) for col in ("cooldown_held", "closeness_held")}
    if any(unplaced.values()):
        notes.append(f"판정 근거에 주제가 적히지 않은 줄이 쿨다운 {unplaced['cooldown_held']}건, 친밀 단계 {unplaced['closeness_held']}건 있어 "
                     "주제별 수치에서 빠졌습니다.")
    candidates = [*_cooldown(facts, per_topic, totals, sheet, broadcast_id, config, notes),
                  *_closeness(per_topic, sheet, broadcast_id, config, notes)]
    candidates.sort(key=lambda s: (-s.strength, RULE_ORDER.index(s.rule), s.topic or ""))
    kept = candidates[: rules.max_per_broadcast]
    if len(candidates) > len(kept):
        notes.append(f"제안할 만한 변경이 {len(candidates)}건이었지만 근거가 두터운 {len(kept)}건만 남겼습니다.")
    return Suggested(per_topic, totals, kept, notes)


def suggestion_id(broadcast_id: str, character_id: str, field_name: str, topic: str | None, base_version, proposed) -> str:
    key = "\x1f".join(str(x) for x in (broadcast_id, character_id, field_name, topic or "", base_version, _num(proposed)))
    return "SUG-" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:12].upper()


def median_low(values: list) -> int | float:
    """The lower of the two middle values: always one of the observed values."""
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


# -- the rules ------------------------------------------------------------------------------


def _cooldown(facts, per_topic, totals, sheet, broadcast_id, config, notes) -> list[Suggestion]:
    rule = config.suggestions.cooldown
    held, inworld, current = totals["cooldown_held"], totals["in_world"], int(sheet["reply_cooldown_sec"])
    where = _by_topic(per_topic, "cooldown_held")
    if held < rule.min_held:
        notes.append(f"쿨다운에 걸린 줄이 {held}건{where}이라 기준 {rule.min_held}건에 못 미쳐 쿨다운은 그대로 둡니다.")
        return []
    share = held / inworld
    if share < rule.min_held_share:
        notes.append(f"쿨다운에 걸린 줄이 세계관 안의 {inworld}건 가운데 {held}건{where}으로 기준 비율 {rule.min_held_share:.0%}에 못 미쳐 쿨다운은 그대로 둡니다.")
        return []
    elapsed = [int(x) for x in facts.loc[facts["verdict"] == V.JUST_ANSWERED, "elapsed"].dropna()]
    med = median_low(elapsed)
    proposed = max(rule.floor_sec, (med // rule.step_sec) * rule.step_sec)
    if proposed >= current:
        notes.append(f"쿨다운에 걸린 줄의 중앙값 경과가 {med}초라 {rule.step_sec}초 단위로 줄일 여지가 없어 쿨다운은 그대로 둡니다.")
        return []
    released = sum(1 for e in elapsed if e >= proposed)
    repeat = totals["repeat_askers"]
    version = sheet.get("sheet_version")
    evidence = [
        _ev("character_sheet", "reply_cooldown_sec", current),
        _ev("live_chat", "msg_id", inworld, "count"),
        _ev("live_chat", "msg_id", held, "count_just_answered"),
        _ev("live_chat", "sent_at", med, "median_low_elapsed_sec"),
        _ev("viewer_relation", "viewer_id", repeat, "count_repeat_askers"),
    ]
    text = (f"쿨다운에 걸려 미룬 줄이 {inworld}건 가운데 {held}건이었고 중앙값 경과가 {med}초였습니다. "
            f"쿨다운을 {current}초에서 {proposed}초로 줄이면 이 방송에서 미룬 {held}건 가운데 {released}건이 순위 경쟁으로 돌아옵니다.")
    if repeat:
        text += f" 같은 주제를 두 번 이상 물은 시청자도 {repeat}명 있었습니다."
    text += " 팬이 느끼는 간격이 맞는지는 방송 뒤 채팅 반응을 보고 정해 주세요."
    return [Suggestion(suggestion_id(broadcast_id, sheet["character_id"], "reply_cooldown_sec", None, version, proposed),
                       broadcast_id, sheet["character_id"], COOLDOWN_RULE, "reply_cooldown_sec", None, current, int(proposed),
                       _int_or_none(version), evidence, text, held)]


def _closeness(per_topic, sheet, broadcast_id, config, notes) -> list[Suggestion]:
    rule = config.suggestions.closeness
    mapping = sheet["min_closeness_by_topic"] or {}
    version = sheet.get("sheet_version")
    out = []
    untouched = [t for t, held in zip(per_topic["topic"], per_topic["closeness_held"]) if held == 0]
    if untouched:
        notes.append(f"{', '.join(untouched)} 주제는 친밀 단계로 뺀 줄이 없어 기준을 낮출 근거가 없습니다.")
    for t in per_topic.itertuples(index=False):
        if t.closeness_held == 0:
            continue
        in_map = t.topic in mapping
        current = _tidy(mapping[t.topic] if in_map else config.missing_topic_min_closeness)
        if t.closeness_held < rule.min_held:
            notes.append(f"{josa(t.topic, '은/는')} 친밀 단계로 뺀 줄이 {t.closeness_held}건이라 기준 {rule.min_held}건에 못 미쳐 그대로 둡니다.")
            continue
        if t.closeness_held / t.lines < rule.min_held_share:
            notes.append(f"{josa(t.topic, '은/는')} 친밀 단계로 뺀 줄이 {t.lines}건 가운데 {t.closeness_held}건으로 "
                         f"기준 비율 {rule.min_held_share:.0%}에 못 미쳐 그대로 둡니다.")
            continue
        med = median_low(t.levels)
        proposed = _tidy(max(current - rule.max_step, med, 0))
        if proposed >= current:
            continue
        released = sum(1 for lv in t.levels if lv >= proposed)
        evidence = [
            _ev("character_sheet", "min_closeness_by_topic", current) if in_map
            else _ev("character_sheet", "min_closeness_by_topic", current, "missing_default"),
            _ev("live_chat", "topic_tags", t.topic),
            _ev("live_chat", "msg_id", int(t.lines), "count"),
            _ev("live_chat", "msg_id", int(t.closeness_held), "count_below_closeness"),
            _ev("viewer_relation", "closeness_level", med, "median_low_level"),
            _ev("live_chat", "msg_id", int(t.answered), "count_answered"),
        ]
        where = "" if in_map else f"{josa(t.topic, '은/는')} 설정표의 주제별 기준에 없어 기본값 {_num(current)}단계가 적용되었습니다. "
        text = (f"{where}{t.topic} 주제에서 친밀 단계가 모자라 뺀 줄이 {t.lines}건 가운데 {t.closeness_held}건이었고 "
                f"그 시청자들의 중앙값 단계가 {med}단계였습니다. 기준을 {_num(current)}단계에서 {_num(proposed)}단계로 낮추면 "
                f"그 가운데 {released}건이 답변 후보로 돌아옵니다. 관계 단계는 회사마다 쌓는 방식이 달라 운영자가 확인한 뒤 반영해 주세요.")
        out.append(Suggestion(
            suggestion_id(broadcast_id, sheet["character_id"], "min_closeness_by_topic", t.topic, version, proposed),
            broadcast_id, sheet["character_id"], CLOSENESS_RULE, "min_closeness_by_topic", t.topic, current, proposed,
            _int_or_none(version), evidence, text, int(t.closeness_held)))
    return out


# -- helpers --------------------------------------------------------------------------------


def _ev(dataset: str, name: str, value, agg: str | None = None) -> dict:
    return evidence_row("dataset", dataset, name, value, agg)


def _by_topic(per_topic: pd.DataFrame, column: str) -> str:
    """"(노래 3건, 게임 1건)": the topics behind a count, for a note; empty when there are none."""
    parts = [f"{t} {int(n)}건" for t, n in zip(per_topic["topic"], per_topic[column]) if n]
    return f"({', '.join(parts)})" if parts else ""


def _tidy(v):
    """3.0 → 3 (thresholds as written), other floats unchanged."""
    return int(v) if float(v).is_integer() else float(v)


def _num(v) -> str:
    return str(_tidy(v))


def _int_or_none(v):
    return None if v is None or v != v else int(v)
