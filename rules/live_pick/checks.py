"""Seed 001's thirteen automatic checks, plus the output schema and a full re-computation.

Each check reads the verdict rows as written in a file (anything may be wrong in them) and
the normalised input tables, and reports pass/fail with the failing msg_ids. The
re-computation uses the row-by-row reference, not the engine that produced the rows.

A row judged on a tagger's tags says so in `provenance` (tagger, its answer, the tags used):
the checks that read a line's tags, and the re-computation, use those tags for that row, while
evidence citing `live_chat.topic_tags` is still held to the gold column as written. Check 12
also holds the run's tags to the seed's discard rule and, for a deterministic tagger (lexicon,
kiwi), re-runs it on the body; an `openai` answer cannot be re-computed offline.
"""

from __future__ import annotations

import operator
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache, partial

from rules.common.checks import (CheckResult, column_problem, dataset_columns, empty_reason, enum_findings, evidence_findings,
                                 filled_findings, first_difference, hashable, is_int, polite_findings, recompute_findings,
                                 row_findings, same_json, schema_result)
from rules.common.check_parts import Repeats
from rules.common.evidence import frame_records
from rules.common.normalised import Normalised
from rules.common.verdict_rows import VerdictRows
from rules.live_pick import verdicts as V
from rules.live_pick.config import LivePickConfig
from rules.live_pick.reference import Expected, Sheets, expected_filters, rank_expected
from rules.live_pick.names import DETERMINISTIC, TAGGERS
from rules.live_pick.tags import tag_source
from rules.live_pick.sheets import VERSION
from schemas import columns
from schemas.live_pick import DOMAIN, INPUT_DATASETS, OUTPUT

REQUIRED_FILLED = ("pick_id", "msg_id", "verdict", "evidence", "summary")
KEY_OF = {"live_chat": "msg_id", "character_sheet": "character_id", "viewer_relation": "viewer_id"}
LIST_COLUMNS = {("live_chat", "topic_tags"), ("character_sheet", "world_topic_tags"),
                ("character_sheet", "banned_tags"), ("viewer_relation", "answered_topics")}
MAP_COLUMNS = {("character_sheet", "min_closeness_by_topic")}
COMPARED = ("character_id", "viewer_id", "window_start", "verdict", "rank_in_window", "cooldown_elapsed_sec", "sheet_version")
REPEATS = (Repeats("2.required_filled", "pick_id", lambda pick_id, _n: f"pick_id {pick_id} is not unique"),)
"""What a check counts over every row of a day: counted across a day's parts too (`check_parts`)."""


@dataclass
class Known:
    """What the checks read besides the verdict rows: the judged lines and the run's tags (from
    the rows' provenance) by msg_id, the re-computed verdicts, and the reference rows.

    `Known.of` builds it for a whole table. A live window builds it as its lines arrive: one
    part per batch (`ranked=False`: the lines no filter took wait for their window), the parts
    of a window `merged` and ranked (`rank`) when it finishes."""

    chat: dict[str, dict]
    run: dict[str, dict]
    expected: dict[str, Expected]
    refs: Sheets
    checked: dict[str, list] = field(default_factory=dict)
    """msg_id → evidence objects of its row already held to checks 6 and 7 (a waiting line's
    rank-free evidence, checked as it arrived: `EVIDENCE_CHECKS`): where the row's evidence starts
    with these very objects, those two checks walk only the rest."""

    @classmethod
    def of(cls, norm: Normalised, rows: list, config: LivePickConfig, refs: Sheets | None = None,
           ranked: bool = True) -> "Known":
        chat = {r["msg_id"]: r for r in frame_records(norm.tables["live_chat"])}
        run = run_provenance(rows)
        refs = Sheets.of(norm) if refs is None else refs
        known = cls(chat, run, expected_filters(chat.values(), refs, config, {m: p["tags"] for m, p in run.items()}), refs)
        if ranked:
            known.rank(config)
        return known

    def only(self, ids) -> "Known":
        ids = set(ids)
        return Known({m: r for m, r in self.chat.items() if m in ids}, {m: p for m, p in self.run.items() if m in ids},
                     {m: e for m, e in self.expected.items() if m in ids}, self.refs,
                     {m: e for m, e in self.checked.items() if m in ids})

    @classmethod
    def merged(cls, parts: list["Known"]) -> "Known":
        out = cls({}, {}, {}, parts[0].refs)
        for p in parts:
            out.chat.update(p.chat)
            out.run.update(p.run)
            out.expected.update(p.expected)
            out.checked.update(p.checked)
        return out

    def rank(self, config: LivePickConfig) -> None:
        rank_expected(self.expected, self.chat, config)


class _Context(VerdictRows):
    def __init__(self, norm: Normalised, rows: list, config: LivePickConfig, known: Known | None = None):
        super().__init__(rows, "msg_id")
        known = Known.of(norm, rows, config) if known is None else known
        self.config = config
        self.chat = known.chat
        self.run = known.run
        self.run_tags = {m: p["tags"] for m, p in self.run.items()}
        self.expected: dict[str, Expected] = known.expected
        self.checked = known.checked
        self._retagged: dict[str, dict] = {}
        self._vocabulary: dict[tuple, frozenset] = {}
        # (character_id, sheet_version): a line is checked against the version it was judged with.
        self.sheet = {(r["character_id"], _version(r)): r for versions in known.refs.sheets.values() for r in versions}
        self.relation = known.refs.viewers
        # Rows that are objects with a msg_id we know: the ones content checks can look at.
        self.known = [(i, r) for i, r in self.ids() if isinstance(r, dict) and self.names(r, self.chat)]

    @staticmethod
    def names(row: dict, ids) -> bool:
        """The row's own msg_id is one of `ids` (a row without one names nothing)."""
        return isinstance(row.get("msg_id"), str) and row["msg_id"] in ids

    def tags(self, msg_id: str) -> list | None:
        """The tags the row's run judged the line on (gold unless a tagger run says otherwise)."""
        return self.run_tags[msg_id] if msg_id in self.run_tags else self.chat[msg_id]["topic_tags"]

    def retagged(self, tagger: str) -> dict:
        """A deterministic tagger's answer per known line, computed once per check run."""
        if tagger not in self._retagged:
            ids = [i for i, _ in self.known]
            proposals = tag_source(tagger).propose([self.chat[i]["body"] for i in ids])
            self._retagged[tagger] = {i: p.answer for i, p in zip(ids, proposals)}
        return self._retagged[tagger]

    def vocabulary(self, msg_id: str) -> frozenset:
        """world_topic_tags ∪ banned_tags of the sheet the line was judged with."""
        key = (self.chat[msg_id]["character_id"], self.expected[msg_id].sheet_version)
        if key not in self._vocabulary:
            sheet = self.sheet[key]
            self._vocabulary[key] = frozenset(sheet["world_topic_tags"]) | frozenset(sheet["banned_tags"])
        return self._vocabulary[key]

    def cited_row(self, msg_id: str, dataset: str) -> dict | None:
        line = self.chat[msg_id]
        if dataset == "live_chat":
            return line
        if dataset == "character_sheet":
            return self.sheet.get((line["character_id"], self.expected[msg_id].sheet_version))
        return self.relation.get(line["viewer_id"])


def run_provenance(rows: list) -> dict[str, dict]:
    """msg_id → provenance of rows judged on a tagger's tags (well-formed ones; the schema
    check reports the others, which are then held to the gold tags)."""
    out = {}
    for r in rows:
        if not isinstance(r, dict) or not isinstance(r.get("msg_id"), str):
            continue
        p = r.get("provenance")
        if not isinstance(p, dict) or p.get("tagger") not in TAGGERS or p.get("tagger") == "gold":
            continue
        tags, answer = p.get("tags"), p.get("answer")
        if all(v is None or (isinstance(v, list) and all(isinstance(t, str) for t in v)) for v in (tags, answer)):
            out[r["msg_id"]] = {"tagger": p["tagger"], "tags": tags, "answer": answer, "discard": p.get("discard")}
    return out


def run_checks(norm: Normalised | None, rows: list, config: LivePickConfig, known: Known | None = None,
               checks=None) -> list[CheckResult]:
    """All checks (or `checks`, e.g. `EVIDENCE_CHECKS`), in seed order, on verdict rows (dicts, or
    None for an unreadable line), against the input tables `norm`, or what the checks read of them
    (`Known`) when already built."""
    ctx = _Context(norm, rows, config, known)
    return [check(ctx) for check in (CHECKS if checks is None else checks)]


def _unchecked(ctx: _Context, pairs):
    """(id, row) with only the evidence objects not held to checks 6 and 7 already (`Known.checked`)."""
    if not ctx.checked:
        yield from pairs
        return
    for id_, row in pairs:
        done = ctx.checked.get(id_) if isinstance(row, dict) else None
        items = row.get("evidence") if done is not None else None
        if isinstance(items, list) and len(items) >= len(done) and all(map(operator.is_, items, done)):
            yield id_, {"evidence": items[len(done):]}
        else:
            yield id_, row


# -- the checks ----------------------------------------------------------------------------


def output_schema(ctx: _Context) -> CheckResult:
    return schema_result(ctx.ids(), DOMAIN, OUTPUT)

def c01_verdict_enum(ctx: _Context) -> CheckResult:
    return enum_findings(ctx.ids(), "verdict", V.ORDER).result("1.verdict_enum", "verdict is one of the five enum values")

def c02_required_filled(ctx: _Context) -> CheckResult:
    f = filled_findings(ctx.ids(), "pick_id", lambda row: empty_reason(row, REQUIRED_FILLED), REPEATS[0].reason)
    msg_ids = Counter(r.get("msg_id") for r in ctx.rows if isinstance(r, dict) and isinstance(r.get("msg_id"), str))
    for m, n in msg_ids.items():
        if m and n > 1:
            f.fail(str(m), f"{n} rows for one message")
    return f.result("2.required_filled", "pick_id, msg_id, verdict, evidence, summary are filled (ids unique)")


def c03_ranges(ctx: _Context) -> CheckResult:
    return row_findings(ctx.ids(), _range_problem).result("3.ranges", "rank_in_window ≥ 1 and cooldown_elapsed_sec ≥ 0")


def _range_problem(_id: str, row: dict) -> str | None:
    rank, cool = row.get("rank_in_window"), row.get("cooldown_elapsed_sec")
    if rank is not None and not (is_int(rank) and rank >= 1):
        return f"rank_in_window {rank!r} is not an integer ≥ 1"
    if cool is not None and not (is_int(cool) and cool >= 0):
        return f"cooldown_elapsed_sec {cool!r} is not an integer ≥ 0"
    return None


def c04_cooldown(ctx: _Context) -> CheckResult:
    return row_findings(ctx.known, partial(_cooldown_problem, ctx)).result(
        "4.cooldown", "cooldown_elapsed_sec = sent_at − last_replied_at; inside it on an answered topic → 방금 답한 주제")


def _cooldown_problem(ctx: _Context, id_: str, row: dict) -> str | None:
    exp = ctx.expected[id_]
    if row.get("cooldown_elapsed_sec") != exp.cooldown_elapsed_sec:
        return f"cooldown_elapsed_sec {row.get('cooldown_elapsed_sec')!r}, re-computed {exp.cooldown_elapsed_sec!r}"
    sheet = ctx.cited_row(id_, "character_sheet")
    viewer = ctx.cited_row(id_, "viewer_relation")
    answered = set(viewer["answered_topics"]) if viewer else set()
    inside = exp.cooldown_elapsed_sec is not None and exp.cooldown_elapsed_sec < sheet["reply_cooldown_sec"]
    hit = inside and bool(answered.intersection(ctx.tags(id_) or []))
    if hit and exp.verdict != V.OUT_OF_WORLD and row.get("verdict") != V.JUST_ANSWERED:
        return f"inside the cooldown on an answered topic but verdict is {row.get('verdict')!r}"
    if not hit and row.get("verdict") == V.JUST_ANSWERED:
        return "방금 답한 주제 without an answered topic inside the cooldown"
    return None


def c05_rank(ctx: _Context) -> CheckResult:
    return row_findings(ctx.known, partial(_rank_problem, ctx)).result(
        "5.rank", "rank re-computed per character and 30-second window; ranks 1–3 answered now, 4+ deferred")


def _rank_problem(ctx: _Context, id_: str, row: dict) -> str | None:
    n = ctx.config.picks_per_window
    exp, rank, verdict = ctx.expected[id_], row.get("rank_in_window"), row.get("verdict")
    if exp.verdict in V.RANKED and rank != exp.rank_in_window:
        return f"rank {rank!r}, re-ranked {exp.rank_in_window} in {exp.character_id} window {exp.window_start}"
    if is_int(rank) and verdict == V.PICK and rank > n:
        return f"rank {rank} is past {n} but verdict is 지금 답변할 질문"
    if is_int(rank) and verdict == V.DEFERRED and rank <= n:
        return f"rank {rank} is within {n} but verdict is 다음 차례로 미룸"
    return None


def c06_evidence_fields(ctx: _Context) -> CheckResult:
    known = dataset_columns(DOMAIN, INPUT_DATASETS)
    seen: dict[tuple, str | None] = {}  # a window cites the same few (dataset, field) pairs thousands of times

    def problem(_id: str, _row: dict, e: dict) -> str | None:
        d, f = e.get("dataset"), e.get("field")
        # true, 1 and 1.0 are one key but three JSON values, each worded as it is: kinds apart
        key = (d, f) if type(d) is str and type(f) is str else (type(d), hashable(d), type(f), hashable(f))
        if key not in seen:
            seen[key] = column_problem(known, hashable(d), hashable(f))
        return seen[key]

    return evidence_findings(_unchecked(ctx, ctx.ids()), problem).result(
        "6.evidence_fields", "every evidence field is a real column of live_chat, character_sheet or viewer_relation")


def c07_evidence_values(ctx: _Context) -> CheckResult:
    return evidence_findings(_unchecked(ctx, ctx.known), lambda id_, _row, e: _evidence_problem(ctx, id_, ctx.expected[id_], e)).result(
        "7.evidence_values", "evidence values equal the cited rows; agg values re-compute")


def c08_polite(ctx: _Context) -> CheckResult:
    return polite_findings(ctx.ids()).result("8.polite", "summary (and hedge) are Korean sentences in polite form")

def c09_empty_tags(ctx: _Context) -> CheckResult:
    return row_findings(ctx.known, partial(_empty_tags_problem, ctx)).result(
        "9.empty_tags", "lines without topic_tags are 세계관 밖이라 넘김 with no rank")


def _empty_tags_problem(ctx: _Context, id_: str, row: dict) -> str | None:
    if ctx.tags(id_):
        return None
    if row.get("verdict") != V.OUT_OF_WORLD:
        return f"no topic_tags but verdict is {row.get('verdict')!r}"
    if row.get("rank_in_window") is not None:
        return "no topic_tags but rank_in_window is filled"
    return None


def c10_rule_order(ctx: _Context) -> CheckResult:
    return row_findings(ctx.known, partial(_rule_order_problem, ctx)).result(
        "10.rule_order", "rules apply in order (world → just answered → closeness → rank); the first match decides")


def _rule_order_problem(ctx: _Context, id_: str, row: dict) -> str | None:
    exp = ctx.expected[id_]
    if exp.verdict in V.FILTERS and row.get("verdict") != exp.verdict:
        return f"the first matching rule is {exp.verdict}, row says {row.get('verdict')!r}"
    if exp.verdict in V.RANKED and row.get("verdict") in V.FILTERS:
        return f"no filter matches but verdict is {row.get('verdict')!r}"
    return None


def c11_closeness(ctx: _Context) -> CheckResult:
    return row_findings(ctx.known, partial(_closeness_problem, ctx)).result(
        "11.closeness", "closeness compared with the line's topics' minimum in its own character's sheet")


def _closeness_problem(ctx: _Context, id_: str, row: dict) -> str | None:
    exp, line = ctx.expected[id_], ctx.chat[id_]
    viewer = ctx.cited_row(id_, "viewer_relation")
    level = viewer["closeness_level"] if viewer else ctx.config.first_time_viewer.closeness_level
    if exp.verdict in (V.OUT_OF_WORLD, V.JUST_ANSWERED):
        return None
    if (level < exp.required_closeness) != (row.get("verdict") == V.BELOW_CLOSENESS):
        return f"closeness {level} vs required {exp.required_closeness} for {line['character_id']}, verdict {row.get('verdict')!r}"
    return None


def c12_vocabulary(ctx: _Context) -> CheckResult:
    return row_findings(ctx.known, partial(_vocabulary_problem, ctx)).result(
        "12.vocabulary", "a tag outside the character's vocabulary (world ∪ banned) discards the tagger's answer and sends the line out of world")


def _vocabulary_problem(ctx: _Context, id_: str, row: dict) -> str | None:
    line = ctx.chat[id_]
    vocab = ctx.vocabulary(id_)
    outside = [t for t in ctx.tags(id_) or [] if t not in vocab]
    if outside and row.get("verdict") != V.OUT_OF_WORLD:
        return f"tag {outside[0]!r} is outside {line['character_id']}'s vocabulary but verdict is {row.get('verdict')!r}"
    run = ctx.run.get(id_)
    if run is None:
        return None
    answer, used = run["answer"], run["tags"]
    if used is not None and outside:
        return f"the run used tag {outside[0]!r}, outside the vocabulary, instead of discarding the answer"
    if answer and all(t in vocab for t in answer) and used != answer and run["discard"] is None:
        return f"the tagger's answer {answer!r} is inside the vocabulary but the run used {used!r}"
    if used is not None and used != answer:
        return f"the run used {used!r}, not the tagger's answer {answer!r}"
    if run["tagger"] in DETERMINISTIC:
        again = ctx.retagged(run["tagger"]).get(id_)
        if again != answer:
            return f"{run['tagger']} re-run on the body answers {again!r}, the row says {answer!r}"
    return None


def c13_filled_when(ctx: _Context) -> CheckResult:
    return row_findings(ctx.known, partial(_filled_when_problem, ctx)).result(
        "13.filled_when", "cooldown filled whenever last_replied_at exists; rank only on ranked lines")


def _filled_when_problem(ctx: _Context, id_: str, row: dict) -> str | None:
    viewer = ctx.cited_row(id_, "viewer_relation")
    has_last = bool(viewer and viewer["last_replied_at"] is not None)
    if has_last != (row.get("cooldown_elapsed_sec") is not None):
        return "cooldown_elapsed_sec must be filled exactly when last_replied_at exists"
    if row.get("verdict") in V.FILTERS and row.get("rank_in_window") is not None:
        return "a filtered line has a rank_in_window"
    if row.get("verdict") in V.RANKED and row.get("rank_in_window") is None:
        return "a ranked verdict without rank_in_window"
    return None


def recompute(ctx: _Context) -> CheckResult:
    return recompute_findings(
        ctx.ids(), ctx.expected,
        lambda id_, row: first_difference(row, {k: getattr(ctx.expected[id_], k) for k in COMPARED}),
        unknown="no judged input line has this msg_id (unknown or quarantined)",
        missing="judged input line has no verdict row",
        judged=lambda _id, row: ctx.names(row, ctx.expected),
    ).result("recompute", "every verdict re-computed from the input rows (one row per judged line, fields equal)")


CHECKS = (
    output_schema,
    c01_verdict_enum,
    c02_required_filled,
    c03_ranges,
    c04_cooldown,
    c05_rank,
    c06_evidence_fields,
    c07_evidence_values,
    c08_polite,
    c09_empty_tags,
    c10_rule_order,
    c11_closeness,
    c12_vocabulary,
    c13_filled_when,
    recompute,
)
EVIDENCE_CHECKS = (c06_evidence_fields, c07_evidence_values)
"""The checks that read a row's evidence objects one by one, and nothing else of it."""


# -- helpers -------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def _columns() -> dict[str, frozenset]:
    """The columns of each input dataset evidence may cite."""
    return {d: frozenset(columns(DOMAIN, d)) for d in KEY_OF}


def _version(sheet_row: dict) -> int | None:
    v = sheet_row.get(VERSION)
    return None if v is None or v != v else int(v)  # NaN (v != v) after a round-trip: unversioned


def _evidence_problem(ctx: _Context, msg_id: str, exp: Expected, e: dict) -> str | None:
    d, field, agg, value = e.get("dataset"), e.get("field"), e.get("agg"), e.get("value")
    if type(d) is not str or type(field) is not str:
        d, field = hashable(d), hashable(field)
    if field not in _columns().get(d, ()):
        return None  # reported by check 6
    if agg is not None:
        return _agg_problem(ctx, msg_id, exp, d, field, agg, value)
    row = ctx.chat[msg_id] if d == "live_chat" else ctx.cited_row(msg_id, d)
    if row is None:
        return f"{d}.{field} cited but {d} has no row for this line"
    actual = row.get(field)
    if (d, field) in LIST_COLUMNS:
        if actual is None:
            return None if value is None else f"{d}.{field} is null, evidence says {value!r}"
        return None if any(same_json(value, a) for a in actual) else f"{d}.{field} has no element {value!r}"
    if (d, field) in MAP_COLUMNS:
        entries = [actual[t] for t in ctx.tags(msg_id) or [] if t in actual]
        return None if any(same_json(value, v) for v in entries) else f"{d}.{field} has no entry {value!r} for this line's topics"
    return None if same_json(value, actual) else f"{d}.{field} is {actual!r}, evidence says {value!r}"


def _agg_problem(ctx, msg_id, exp, d, field, agg, value) -> str | None:
    line = ctx.chat[msg_id]
    if agg == "count" and (d, field) == ("live_chat", "msg_id"):
        n = exp.ranked_in_window or 0
        return None if same_json(value, n) else f"count of ranked lines in the window is {n}, evidence says {value!r}"
    if agg == "count" and (d, field) == ("live_chat", "topic_tags"):
        n = len(line["topic_tags"] or [])
        return None if same_json(value, n) else f"the line has {n} tags, evidence says {value!r}"
    if agg == "count" and (d, field) == ("viewer_relation", "viewer_id"):
        n = int(line["viewer_id"] in ctx.relation)
        return None if same_json(value, n) else f"{n} relation rows for {line['viewer_id']}, evidence says {value!r}"
    if agg == "not_in" and (d, field) == ("character_sheet", "world_topic_tags"):
        world = ctx.cited_row(msg_id, "character_sheet")["world_topic_tags"]
        if value in (ctx.tags(msg_id) or []) and value not in world:
            return None
        return f"{value!r} is not a line tag missing from world_topic_tags"
    if isinstance(agg, str) and agg.startswith("tag:") and (d, field) == ("live_chat", "body"):
        tagger, run = agg[4:], ctx.run.get(msg_id)
        if run is None or run["tagger"] != tagger:
            return f"evidence cites the {tagger!r} tagger but the row was judged on {run['tagger'] if run else 'gold'} tags"
        answered = run["answer"] or []
        if (value is None and not answered) or (value is not None and value in answered):
            return None
        return f"{value!r} is not among the tags the tagger answered ({answered!r})"
    return f"agg {agg!r} on {d}.{field} cannot be re-computed"
