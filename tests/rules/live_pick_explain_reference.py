"""live_pick's explanation read row by row: a dict per row handed to its verdict's builder,
evidence de-duplicated per row (`per_verdict`). The column-wise `rules.live_pick.explain` is held to it."""

from __future__ import annotations

import pandas as pd

from rules.common import evidence
from rules.common.explain import per_verdict
from rules.common.korean import duration, inline, josa, won
from rules.live_pick import verdicts as V
from rules.live_pick.config import LivePickConfig
from rules.live_pick.explain import (CLOSENESS_HEDGE, FAILED_ANSWER, FIRST_VIEWER_HEDGE, NO_TAG_HEDGE, READS, RETRY_HEDGE,
                                     ranked)


def ev(dataset: str, field: str, value, agg: str | None = None) -> dict:
    return evidence.row("dataset", dataset, field, value, agg)


def explain(f: pd.DataFrame, config: LivePickConfig) -> tuple[list, list, list]:
    build = {
        V.OUT_OF_WORLD: _out_of_world,
        V.JUST_ANSWERED: _just_answered,
        V.BELOW_CLOSENESS: _below_closeness,
        V.PICK: _ranked,
        V.DEFERRED: _ranked,
    }
    return per_verdict(f, "verdict", build, config, reads=READS)


# -- shared pieces ----------------------------------------------------------------------


def _who(r: dict) -> str:
    return inline(r["nickname"] if r["has_relation"] else r["viewer_id"])


def tag_ev(r: dict, tag) -> dict:
    """Evidence for a tag the rules used: the gold column, or the tagger's reading of the body."""
    if r["tagger"] == "gold":
        return ev("live_chat", "topic_tags", tag)
    return ev("live_chat", "body", tag, agg=f"tag:{r['tagger']}")


def _tagger_out_of_world(r: dict, name: str) -> tuple[list, str, str | None]:
    """A tagger run left the line without tags: nothing found, an answer discarded, or no answer."""
    who = f"태거({r['tagger']})"
    rest = " 답변 후보에서 빼고 운영자가 직접 집어 올릴 수 있게 남깁니다."
    if r["tag_discard"] == "outside_vocabulary":
        vocab = set(r["world_topic_tags"]) | set(r["banned_tags"])
        outside = next(t for t in r["tag_answer"] if t not in vocab)
        s = f"{who}가 낸 태그 {josa(inline(outside), '이/가')} {name}의 주제 어휘 밖이라 그 답을 버렸습니다." + rest
        return [tag_ev(r, outside)], s, None
    if r["tag_discard"] in FAILED_ANSWER:
        s = f"{who}의 응답이 {FAILED_ANSWER[r['tag_discard']]} 이 줄에 주제 태그를 붙이지 못했습니다." + rest
        return [tag_ev(r, None)], s, RETRY_HEDGE
    s = (f"{who}가 이 줄에서 주제 태그를 하나도 뽑지 못해 {name}의 세계관 주제와 겹치는지 볼 수 없습니다. "
         "겹침이 확인되지 않으면 답하지 않는 쪽으로 두고 운영자가 직접 집어 올릴 수 있게 남깁니다.")
    return [tag_ev(r, None)], s, NO_TAG_HEDGE


def _viewer_evidence(r: dict) -> list[dict]:
    """Closeness (or the absence of a relation row) and the last reply, when there is one."""
    if not r["has_relation"]:
        return [ev("viewer_relation", "viewer_id", 0, agg="count")]
    return [
        ev("viewer_relation", "closeness_level", r["closeness_level"]),
        ev("viewer_relation", "last_replied_at", r["last_replied_at"]),
    ]


def _elapsed_evidence(r: dict) -> list[dict]:
    if r["cooldown_elapsed_sec"] is None:
        return []
    return [ev("live_chat", "sent_at", r["sent_at"]), ev("viewer_relation", "last_replied_at", r["last_replied_at"])]


def _first_viewer_sentence(r: dict, config: LivePickConfig) -> str:
    return f"{josa(inline(r['viewer_id']), '은/는')} 관계 기록이 없는 첫 시청자라 친밀 {config.first_time_viewer.closeness_level}단계로 봅니다."


# -- one builder per verdict -------------------------------------------------------------


def _out_of_world(r: dict, config: LivePickConfig):
    name = inline(r["character_name"])
    e = [ev("live_chat", "body", r["body"])]
    hedge = None
    if r["n_tags"] == 0 and r["tagger"] != "gold":
        more, s, hedge = _tagger_out_of_world(r, name)
        e += more
    elif r["n_tags"] == 0:
        if r["tags"] is None:
            e.append(ev("live_chat", "topic_tags", None))
            first = "수집기 태그(topic_tags)가 비어 있어"
        else:
            e.append(ev("live_chat", "topic_tags", 0, agg="count"))
            first = "이 줄에는 주제 태그가 0개라"
        s = (
            f"{first} {name}의 세계관 주제와 겹치는지 볼 수 없습니다. "
            "겹침이 확인되지 않으면 답하지 않는 쪽으로 두고 운영자가 직접 집어 올릴 수 있게 남깁니다."
        )
        hedge = NO_TAG_HEDGE
    elif r["banned_tag"] is not None:
        tag = r["banned_tag"]
        shown = inline(tag)
        e += [tag_ev(r, tag), ev("character_sheet", "banned_tags", tag)]
        s = f"{name}의 금칙 주제인 {josa(shown, '이/가')} 걸린 줄입니다."
        if r["donation_amount"] > 0:
            e.append(ev("live_chat", "donation_amount", r["donation_amount"]))
            s += f" 후원 {won(r['donation_amount'])}이 걸려 있어도 순위를 매기지 않습니다."
        s += " 답변 후보에서 빼고 운영자에게만 보여 줍니다."
    else:
        tag = r["offworld_tag"]
        shown = inline(tag)
        n_world = len(r["world_topic_tags"])
        e += [tag_ev(r, tag), ev("character_sheet", "world_topic_tags", tag, agg="not_in")]
        s = (
            f"{josa(shown, '은/는')} {name}의 세계관 주제 {n_world}개에 들지 않습니다. "
            "캐릭터가 설정 밖 이야기를 지어내지 않도록 답변 후보에서 뺍니다."
        )
    e += _elapsed_evidence(r)
    return e, s, hedge


def _just_answered(r: dict, config: LivePickConfig):
    tag = r["answered_tag"]
    shown = inline(tag)
    e = [
        ev("live_chat", "sent_at", r["sent_at"]),
        ev("viewer_relation", "last_replied_at", r["last_replied_at"]),
        tag_ev(r, tag),
        ev("viewer_relation", "answered_topics", tag),
        ev("character_sheet", "reply_cooldown_sec", r["reply_cooldown_sec"]),
    ]
    s = (
        f"{_who(r)}에게 {shown} 이야기를 답한 지 {duration(r['cooldown_elapsed_sec'])}밖에 지나지 않아 "
        f"쿨다운 {duration(r['reply_cooldown_sec'])} 안입니다. "
        "같은 사람에게 같은 주제를 잇달아 답하면 대화가 겹쳐 보여 미뤄 둡니다."
    )
    return e, s, None


def _below_closeness(r: dict, config: LivePickConfig):
    tag = r["required_tag"]
    shown = inline(tag)
    need = _num(r["required_closeness"])
    e = [ev("live_chat", "body", r["body"]), tag_ev(r, tag)]
    if r["required_in_map"]:
        e.append(ev("character_sheet", "min_closeness_by_topic", r["min_closeness_by_topic"][tag]))
    e += _viewer_evidence(r)
    s = (
        f"{josa(_who(r), '이/가')} 꺼낸 {shown} 주제는 친밀 {need}단계부터이고 "
        f"이 시청자는 {r['closeness_level']}단계입니다. 관계가 쌓이기 전에는 답변 후보에서 뺍니다."
    )
    if not r["has_relation"]:
        s += " " + _first_viewer_sentence(r, config)
    return e, s, CLOSENESS_HEDGE


def _ranked(r: dict, config: LivePickConfig):
    base = ranked_base(r, config)
    cited, summary = ranked(base, r["verdict"], r["rank_in_window"], r["ranked_in_window"], config)
    return cited, summary, base[2]


def ranked_base(r: dict, config: LivePickConfig) -> tuple[list[dict], list[str], str | None]:
    """What a ranked line's explanation says whatever its place in the window: evidence, sentences
    and hedge (`ranked` adds what its rank decides)."""
    tag = r["first_tag"]
    shown = inline(tag)
    e = [
        ev("live_chat", "donation_amount", r["donation_amount"]),
        ev("live_chat", "is_question", r["is_question"]),
        tag_ev(r, tag),
        *_viewer_evidence(r),
        ev("live_chat", "sent_at", r["sent_at"]),
        ev("character_sheet", "reply_cooldown_sec", r["reply_cooldown_sec"]),
    ]
    kind = "물은" if r["is_question"] else "보낸"
    if r["donation_amount"] > 0:
        first = f"{josa(_who(r), '이/가')} {won(r['donation_amount'])}을 얹어 {kind} {shown} 이야기입니다."
    else:
        first = f"{josa(_who(r), '이/가')} 후원 없이 {kind} {shown} 이야기입니다."
    parts = [first]
    if not r["has_relation"]:
        parts.append(_first_viewer_sentence(r, config))
    elif r["cooldown_elapsed_sec"] is None:
        parts.append("이 시청자에게는 아직 답한 적이 없습니다.")
    elif r["cooldown_elapsed_sec"] >= r["reply_cooldown_sec"]:
        parts.append(f"지난 답변에서 {josa(duration(r['cooldown_elapsed_sec']), '이/가')} 지나 "
                     f"쿨다운 {josa(duration(r['reply_cooldown_sec']), '을/를')} 넘었습니다.")
    else:
        parts.append(
            f"지난 답변에서 {josa(duration(r['cooldown_elapsed_sec']), '이/가')} 지나 쿨다운 {duration(r['reply_cooldown_sec'])} 안이지만 "
            f"{josa(shown, '은/는')} 앞서 답한 주제가 아닙니다."
        )
    hedge = None if r["has_relation"] else FIRST_VIEWER_HEDGE.format(level=config.first_time_viewer.closeness_level)
    return evidence.dedupe(e), parts, hedge


def _num(v) -> str:
    """A threshold as written: 3 rather than 3.0."""
    return str(int(v)) if float(v).is_integer() else str(v)
