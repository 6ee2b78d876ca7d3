"""Evidence rows, summaries and hedges for each verdict.

The verdict is already decided; this module only says why, citing the values it rests on.
Evidence without `agg` copies a cited row's value (one element for a list column, the
topic's entry for a map column). With `agg` the value is re-computable:

- `count` on live_chat.msg_id: lines ranked in the same character window;
- `count` on live_chat.topic_tags: the line's number of tags;
- `count` on viewer_relation.viewer_id: relation rows of the viewer (0: first-time viewer);
- `not_in` on character_sheet.world_topic_tags: the value is a line tag absent from that list;
- `tag:<tagger>` on live_chat.body: a tag the named tagger answered for the body (stored with
  each row under `provenance`; the tags used, or the tag whose answer was discarded); value null
  when the tagger answered nothing. Gold runs cite `live_chat.topic_tags` itself, and only then.

Built column-wise (`column_wise`): each verdict's rows at once, from the columns it cites, every
name and tag worded once per distinct value. No builder cites a (dataset, field, agg) twice in
one row, so there is nothing to de-duplicate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rules.common import evidence
from rules.common.collector import cycle_collection_paused
from rules.common.evidence_table import Cited, Slot, lists
from rules.common.explain import Columns, column_wise, each
from rules.common.json_columns import Encoded
from rules.common.korean import duration, inline, josa, won
from rules.live_pick import verdicts as V
from rules.live_pick.config import LivePickConfig

CLOSENESS_HEDGE = "친밀 단계는 시청 시간과 후원으로 오르는 값이라 실제 서비스에서는 기준을 다시 잡아야 합니다."
NO_TAG_HEDGE = "태그를 못 붙인 이유가 감정 표현이라서인지 분류가 흔들려서인지는 이 데이터만으로 갈라지지 않습니다."
FAILED_ANSWER = {
    "malformed_answer": "형식에 맞지 않아",
    "timeout": "제시간에 오지 않아",
    "endpoint_error": "오류로 끝나",
    "over_budget": "이 구간의 호출 한도를 넘어",
}
RETRY_HEDGE = "태거가 다시 답하면 판정이 달라질 수 있으니 운영자가 본문을 직접 읽어 보는 편이 낫습니다."
READS = ("viewer_id", "sent_at", "body", "donation_amount", "is_question", "tags", "tag_answer", "tag_discard", "tagger",
         "character_name", "world_topic_tags", "banned_tags", "min_closeness_by_topic", "reply_cooldown_sec", "nickname",
         "closeness_level", "last_replied_at", "has_relation", "cooldown_elapsed_sec", "n_tags", "banned_tag", "offworld_tag",
         "answered_tag", "first_tag", "required_tag", "required_closeness", "required_in_map", "verdict", "rank_in_window",
         "ranked_in_window")
"""The feature columns the builders below read: the only ones made into plain values."""
PLACE = ("rank_in_window", "ranked_in_window")
"""What a waiting line's place decides, which its `ranked_base` (made before the ranking) never reads."""
FIRST_VIEWER_HEDGE = "관계 기록이 없어 친밀 {level}단계로 봤고, 기록이 늦게 들어온 것인지는 이 데이터만으로 가릴 수 없습니다."


def explain(f: pd.DataFrame, config: LivePickConfig, encoded: bool = False) -> tuple[list | Encoded, list, list]:
    """Evidence, summary and hedge of each row; `encoded`: the evidence as each row's JSON text."""
    build = {
        V.OUT_OF_WORLD: _out_of_world,
        V.JUST_ANSWERED: _just_answered,
        V.BELOW_CLOSENESS: _below_closeness,
        V.PICK: _ranked,
        V.DEFERRED: _ranked,
    }
    return column_wise(f, "verdict", build, config, READS, encoded)


# -- shared pieces, a column at a time ---------------------------------------------------


def _who(c: Columns) -> list:
    """How each line's viewer is named: the nickname of a known viewer, else the id (raw values)."""
    return [nick if known else viewer for known, nick, viewer in zip(c["has_relation"], c["nickname"], c["viewer_id"])]


def _first_viewer_sentences(c: Columns, config: LivePickConfig) -> list:
    """The sentence about a viewer with no relation row, for those lines alone (None for the others,
    which never say it): most viewers are known, and each has an id of their own to word."""
    level = config.first_time_viewer.closeness_level
    known = c["has_relation"]
    new = iter(each(lambda v: f"{josa(inline(v), '은/는')} 관계 기록이 없는 첫 시청자라 친밀 {level}단계로 봅니다.",
                    [v for v, k in zip(c["viewer_id"], known) if not k]))
    return [None if k else next(new) for k in known]


NO_OVERLAP = ("의 세계관 주제와 겹치는지 볼 수 없습니다. "
              "겹침이 확인되지 않으면 답하지 않는 쪽으로 두고 운영자가 직접 집어 올릴 수 있게 남깁니다.")
LEFT_TO_OPERATOR = " 답변 후보에서 빼고 운영자가 직접 집어 올릴 수 있게 남깁니다."


# -- one builder per verdict, each over that verdict's rows ------------------------------


def _out_of_world(c: Columns, config: LivePickConfig):
    """The body; then what left the line out — a tagger's discarded or missing answer, no tags at all,
    a banned tag (and the donation it carried), or a tag outside the world; then its time and the
    viewer's last reply when the cooldown was measured. The evidence as slots, each branch's in turn
    (a line cites one branch's)."""
    n = len(c["body"])
    names = each(inline, c["character_name"])
    banned = each(lambda t: None if t is None else josa(inline(t), "이/가"), c["banned_tag"])
    offworld = each(lambda t: None if t is None else josa(inline(t), "은/는"), c["offworld_tag"])
    n_tags = np.array(c["n_tags"], dtype=np.int64)
    gold = np.array(c["tagger"], dtype=object) == "gold"
    untagged_run, untagged_gold = (n_tags == 0) & ~gold, (n_tags == 0) & gold
    discard = np.array(c["tag_discard"], dtype=object)
    outside = untagged_run & (discard == "outside_vocabulary")
    no_list = untagged_gold & np.array([t is None for t in c["tags"]], dtype=bool)
    has_banned = (n_tags > 0) & (np.array(c["banned_tag"], dtype=object) != None)  # noqa: E711
    with_donation = has_banned & (np.array(c["donation_amount"], dtype=np.int64) > 0)
    off_world = (n_tags > 0) & ~has_banned
    measured = np.array(c["cooldown_elapsed_sec"], dtype=object) != None  # noqa: E711
    outside_tag = [None] * n  # the first answered tag outside the character's vocabulary
    for i in np.flatnonzero(outside).tolist():
        vocab = set(c["world_topic_tags"][i]) | set(c["banned_tags"][i])
        outside_tag[i] = next(t for t in c["tag_answer"][i] if t not in vocab)
    cited = Cited([
        Slot("dataset", "live_chat", "body", c["body"]),
        *_tag_slots(c, outside_tag, untagged_run),
        Slot("dataset", "live_chat", "topic_tags", [None] * n, no_list),
        Slot("dataset", "live_chat", "topic_tags", [0] * n, untagged_gold & ~no_list, agg="count"),
        *_tag_slots(c, c["banned_tag"], has_banned),
        Slot("dataset", "character_sheet", "banned_tags", c["banned_tag"], has_banned),
        Slot("dataset", "live_chat", "donation_amount", c["donation_amount"], with_donation),
        *_tag_slots(c, c["offworld_tag"], off_world),
        Slot("dataset", "character_sheet", "world_topic_tags", c["offworld_tag"], off_world, agg="not_in"),
        Slot("dataset", "live_chat", "sent_at", c["sent_at"], measured),
        Slot("dataset", "viewer_relation", "last_replied_at", c["last_replied_at"], measured),
    ], n)
    summaries, hedges = [], []
    for n_tags_, tagger, tags, discard_, world, banned_tag, banned_shown, offworld_shown, donation, outside_, name in zip(
            c["n_tags"], c["tagger"], c["tags"], c["tag_discard"], c["world_topic_tags"], c["banned_tag"], banned,
            offworld, c["donation_amount"], outside_tag, names):
        hedge = None
        if n_tags_ == 0 and tagger != "gold":  # a tagger run left the line without tags
            who = f"태거({tagger})"
            if discard_ == "outside_vocabulary":
                s = f"{who}가 낸 태그 {josa(inline(outside_), '이/가')} {name}의 주제 어휘 밖이라 그 답을 버렸습니다." + LEFT_TO_OPERATOR
            elif discard_ in FAILED_ANSWER:
                s = f"{who}의 응답이 {FAILED_ANSWER[discard_]} 이 줄에 주제 태그를 붙이지 못했습니다." + LEFT_TO_OPERATOR
                hedge = RETRY_HEDGE
            else:
                s = f"{who}가 이 줄에서 주제 태그를 하나도 뽑지 못해 {name}{NO_OVERLAP}"
                hedge = NO_TAG_HEDGE
        elif n_tags_ == 0:
            s = f"수집기 태그(topic_tags)가 비어 있어 {name}{NO_OVERLAP}" if tags is None else f"이 줄에는 주제 태그가 0개라 {name}{NO_OVERLAP}"
            hedge = NO_TAG_HEDGE
        elif banned_tag is not None:
            s = f"{name}의 금칙 주제인 {banned_shown} 걸린 줄입니다."
            if donation > 0:
                s += f" 후원 {won(donation)}이 걸려 있어도 순위를 매기지 않습니다."
            s += " 답변 후보에서 빼고 운영자에게만 보여 줍니다."
        else:
            s = (f"{offworld_shown} {name}의 세계관 주제 {len(world)}개에 들지 않습니다. "
                 "캐릭터가 설정 밖 이야기를 지어내지 않도록 답변 후보에서 뺍니다.")
        summaries.append(s)
        hedges.append(hedge)
    return cited, summaries, hedges


def _just_answered(c: Columns, config: LivePickConfig):
    """The line's time, the viewer's last reply, the tag and the topic answered, and the cooldown."""
    cited = Cited([
        Slot("dataset", "live_chat", "sent_at", c["sent_at"]),
        Slot("dataset", "viewer_relation", "last_replied_at", c["last_replied_at"]),
        *_tag_slots(c, c["answered_tag"]),
        Slot("dataset", "viewer_relation", "answered_topics", c["answered_tag"]),
        Slot("dataset", "character_sheet", "reply_cooldown_sec", c["reply_cooldown_sec"]),
    ], len(c["sent_at"]))
    s = [f"{who}에게 {shown} 이야기를 답한 지 {duration(elapsed)}밖에 지나지 않아 쿨다운 {duration(cooldown)} 안입니다. "
         "같은 사람에게 같은 주제를 잇달아 답하면 대화가 겹쳐 보여 미뤄 둡니다."
         for who, shown, elapsed, cooldown in zip(each(inline, _who(c)), each(inline, c["answered_tag"]),
                                                  c["cooldown_elapsed_sec"], c["reply_cooldown_sec"])]
    return cited, s, [None] * cited.n


def _below_closeness(c: Columns, config: LivePickConfig):
    """The body, the tag, the topic's threshold when the character's map names it, and the viewer's
    closeness and last reply (or the absence of a relation row)."""
    n = len(c["body"])
    in_map = np.array(c["required_in_map"], dtype=bool)
    known = np.array(c["has_relation"], dtype=bool)
    thresholds = [mins[tag] if listed else None
                  for mins, tag, listed in zip(c["min_closeness_by_topic"], c["required_tag"], c["required_in_map"])]
    cited = Cited([
        Slot("dataset", "live_chat", "body", c["body"]),
        *_tag_slots(c, c["required_tag"]),
        Slot("dataset", "character_sheet", "min_closeness_by_topic", thresholds, in_map),
        *_viewer_slots(c, known),
    ], n)
    first = _first_viewer_sentences(c, config)
    s = [f"{who} 꺼낸 {shown} 주제는 친밀 {need}단계부터이고 이 시청자는 {closeness}단계입니다. "
         f"관계가 쌓이기 전에는 답변 후보에서 뺍니다.{'' if known_ else ' ' + new}"
         for who, shown, need, closeness, known_, new in zip(
             each(lambda v: josa(inline(v), "이/가"), _who(c)), each(inline, c["required_tag"]),
             each(_num, c["required_closeness"]), c["closeness_level"], c["has_relation"], first)]
    return cited, s, [CLOSENESS_HEDGE] * n


def _ranked(c: Columns, config: LivePickConfig):
    """Ranked lines: what `_bases` says whatever the place, then what `ranked` adds; the evidence as
    slots (`_base_slots` and the window's count), the sentences as `_base_sentences` and `_place`."""
    n = len(c["verdict"])
    said = _base_sentences(c, config)
    cited = Cited([*_base_slots(c), Slot("dataset", "live_chat", "msg_id", c["ranked_in_window"], agg="count")], n)
    summaries = [" ".join([*parts, _place(verdict, rank, k, config)])
                 for (parts, _), verdict, rank, k in zip(said, c["verdict"], c["rank_in_window"], c["ranked_in_window"])]
    return cited, summaries, [hedge for _, hedge in said]


def _bases(c: Columns, config: LivePickConfig) -> list[tuple[list[dict], list[str], str | None]]:
    """What each ranked line's explanation says whatever its place in the window: evidence, sentences
    and hedge (`ranked` adds what its rank decides)."""
    cited = lists(_base_slots(c), len(c["sent_at"]))
    return [(e, parts, hedge) for e, (parts, hedge) in zip(cited, _base_sentences(c, config))]


def _base_slots(c: Columns) -> list[Slot]:
    """What a ranked line cites whatever its place: its donation and question flag, the tag its rules
    used, its viewer's closeness and last reply (or the absence of a relation row), its time and the
    character's cooldown."""
    known = np.array(c["has_relation"], dtype=bool)
    return [
        Slot("dataset", "live_chat", "donation_amount", c["donation_amount"]),
        Slot("dataset", "live_chat", "is_question", c["is_question"]),
        *_tag_slots(c, c["first_tag"]),
        *_viewer_slots(c, known),
        Slot("dataset", "live_chat", "sent_at", c["sent_at"]),
        Slot("dataset", "character_sheet", "reply_cooldown_sec", c["reply_cooldown_sec"]),
    ]


def _tag_slots(c: Columns, tags: list, where: np.ndarray | None = None) -> list[Slot]:
    """The tag each line's rules used (`where` they cite one), as slots: one per tagger, each line
    citing its own tagger's — the gold column, or the tagger's reading of the body."""
    taggers = np.array(c["tagger"], dtype=object)
    return [Slot("dataset", "live_chat", "topic_tags", tags, _and(taggers == tagger, where)) if tagger == "gold"
            else Slot("dataset", "live_chat", "body", tags, _and(taggers == tagger, where), agg=f"tag:{tagger}")
            for tagger in dict.fromkeys(c["tagger"])]


def _and(mask: np.ndarray, where: np.ndarray | None) -> np.ndarray:
    return mask if where is None else mask & where


def _viewer_slots(c: Columns, known: np.ndarray) -> list[Slot]:
    """Closeness and the last reply of a known viewer; the absence of a relation row of the others."""
    return [
        Slot("dataset", "viewer_relation", "closeness_level", c["closeness_level"], known),
        Slot("dataset", "viewer_relation", "last_replied_at", c["last_replied_at"], known),
        Slot("dataset", "viewer_relation", "viewer_id", [0] * len(known), ~known, agg="count"),
    ]


def _base_sentences(c: Columns, config: LivePickConfig) -> list[tuple[list[str], str | None]]:
    """The sentences and hedge of `_bases`."""
    who = each(lambda v: josa(inline(v), "이/가"), _who(c))
    shown = each(inline, c["first_tag"])
    not_answered = each(lambda t: josa(inline(t), "은/는"), c["first_tag"])
    first_viewer = _first_viewer_sentences(c, config)
    new_hedge = FIRST_VIEWER_HEDGE.format(level=config.first_time_viewer.closeness_level)
    out = []
    for donation, question, known, cooldown, elapsed, who_, shown_, not_answered_, first_viewer_ in zip(
            c["donation_amount"], c["is_question"], c["has_relation"], c["reply_cooldown_sec"], c["cooldown_elapsed_sec"],
            who, shown, not_answered, first_viewer):
        kind = "물은" if question else "보낸"
        if donation > 0:
            first = f"{who_} {won(donation)}을 얹어 {kind} {shown_} 이야기입니다."
        else:
            first = f"{who_} 후원 없이 {kind} {shown_} 이야기입니다."
        if not known:
            second = first_viewer_
        elif elapsed is None:
            second = "이 시청자에게는 아직 답한 적이 없습니다."
        elif elapsed >= cooldown:
            second = f"지난 답변에서 {josa(duration(elapsed), '이/가')} 지나 쿨다운 {josa(duration(cooldown), '을/를')} 넘었습니다."
        else:
            second = (f"지난 답변에서 {josa(duration(elapsed), '이/가')} 지나 쿨다운 {duration(cooldown)} 안이지만 "
                      f"{not_answered_} 앞서 답한 주제가 아닙니다.")
        out.append(([first, second], None if known else new_hedge))
    return out


def ranked_bases(f: pd.DataFrame, config: LivePickConfig) -> list[tuple[list[dict], list[str], str | None]]:
    """The rank-free part of the explanation (`_bases`) of every row of a feature frame."""
    if not len(f):
        return []
    with cycle_collection_paused():
        return _bases(evidence.plain_columns(f[[c for c in READS if c not in PLACE]]), config)


def ranked(base: tuple[list[dict], list[str], str | None], verdict: str, rank: int, n: int,
           config: LivePickConfig) -> tuple[list[dict], str]:
    """A ranked line's evidence and summary: its rank-free part and what its place decides — rank
    `rank` of the `n` lines left in its window."""
    cited, parts, _ = base
    count = {"dataset": "live_chat", "field": "msg_id", "value": n, "agg": "count"}
    # the count cites an aggregate no base row holds, so it is never a repeat
    return [*cited, count], " ".join([*parts, _place(verdict, rank, n, config)])


def _place(verdict: str, rank: int, n: int, config: LivePickConfig) -> str:
    """What a ranked line's place decides: rank `rank` of the `n` lines left in its window."""
    if verdict == V.PICK:
        return f"이 구간에 남은 {n}줄 가운데 {rank}번째 자리라 지금 답변할 질문으로 세웁니다."
    return (f"걸리는 조건은 없지만 이 구간에 남은 {n}줄 가운데 {rank}번째라 "
            f"앞의 {config.picks_per_window}줄 다음 차례로 미룹니다.")


def _num(v) -> str:
    """A threshold as written: 3 rather than 3.0."""
    return str(int(v)) if float(v).is_integer() else str(v)
