"""A row-by-row re-computation of the §4 rules, written independently of the engine.

Plain loops over plain dicts, as the rules read in the spec. It serves `verdicts validate`
(re-computing every verdict from the input rows) and the tests that hold the vectorised
engine to it. Quadratic nowhere, but not vectorised either: meant for checking, not speed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from rules.common.evidence import frame_records
from rules.common.timestamps import NS_PER_SEC, format_ns
from rules.live_pick import verdicts as V
from rules.live_pick.config import LivePickConfig
from rules.live_pick.sheets import VERSION, in_force_at
from rules.common.normalised import Normalised


@dataclass
class Expected:
    msg_id: str
    character_id: str
    viewer_id: str
    window_start: str
    window_key: tuple
    verdict: str
    rank_in_window: int | None
    cooldown_elapsed_sec: int | None
    tags: list | None
    required_closeness: float
    ranked_in_window: int | None = None
    sheet_version: int | None = None


def expected_verdicts(norm: Normalised, config: LivePickConfig, run_tags: dict[str, list | None] | None = None) -> dict[str, Expected]:
    """Every judged line's verdict; `run_tags` (msg_id → tags) replaces the gold tags of the
    lines a tagger run judged, so a run is re-computed on the tags it actually used."""
    lines = {line["msg_id"]: line for line in frame_records(norm.tables["live_chat"])}
    out = expected_filters(lines.values(), Sheets.of(norm), config, run_tags)
    rank_expected(out, lines, config)
    return out


@dataclass
class Sheets:
    """The reference rows as dicts: every version of each character's sheet (one when
    unversioned), and each viewer's relation."""

    sheets: dict[str, list[dict]]
    viewers: dict[str, dict]

    @classmethod
    def of(cls, norm: Normalised) -> "Sheets":
        sheets = defaultdict(list)
        for r in frame_records(norm.tables["character_sheet"]):
            sheets[r["character_id"]].append(r)
        return cls(dict(sheets), {r["viewer_id"]: r for r in frame_records(norm.tables["viewer_relation"])})


def expected_filters(lines, refs: Sheets, config: LivePickConfig,
                     run_tags: dict[str, list | None] | None = None) -> dict[str, Expected]:
    """Each line's verdict as far as the filters go (verdict None: it is ranked with its window's
    other such lines, `rank_expected`). `lines`: chat rows as dicts."""
    run_tags = run_tags or {}
    sheets, viewers = refs.sheets, refs.viewers
    out: dict[str, Expected] = {}
    starts: dict[tuple[int, str], str] = {}  # a window's start in a line's form, printed once
    step = config.window_seconds * NS_PER_SEC
    for line in lines:
        sent_ns = int(line["sent_at_ns"])
        window = sent_ns - sent_ns % step
        start = starts.get((window, line["sent_at_form"]))
        if start is None:
            start = starts[window, line["sent_at_form"]] = format_ns(window, line["sent_at_form"], config.timezone)
        versions = sheets[line["character_id"]]
        sheet = in_force_at(versions, window) if VERSION in versions[0] else versions[0]
        viewer = viewers.get(line["viewer_id"])
        closeness = viewer["closeness_level"] if viewer else config.first_time_viewer.closeness_level
        answered = set(viewer["answered_topics"]) if viewer else set()
        last_ns = viewer["last_replied_ns"] if viewer and viewer["last_replied_at"] is not None else None
        elapsed = None if last_ns is None else int((sent_ns - int(last_ns)) // NS_PER_SEC)
        tags = run_tags[line["msg_id"]] if line["msg_id"] in run_tags else line["topic_tags"]
        required = max(
            (sheet["min_closeness_by_topic"].get(t, config.missing_topic_min_closeness) for t in tags or []),
            default=config.missing_topic_min_closeness,
        )
        if not tags or any(t in sheet["banned_tags"] for t in tags) or any(t not in sheet["world_topic_tags"] for t in tags):
            verdict = V.OUT_OF_WORLD
        elif elapsed is not None and elapsed < sheet["reply_cooldown_sec"] and answered.intersection(tags):
            verdict = V.JUST_ANSWERED
        elif closeness < required:
            verdict = V.BELOW_CLOSENESS
        else:
            verdict = None
        e = Expected(
            msg_id=line["msg_id"],
            character_id=line["character_id"],
            viewer_id=line["viewer_id"],
            window_start=start,
            window_key=(line["character_id"], window),
            verdict=verdict,
            rank_in_window=None,
            cooldown_elapsed_sec=elapsed,
            tags=tags,
            required_closeness=required,
            sheet_version=int(sheet[VERSION]) if VERSION in sheet else None,
        )
        out[e.msg_id] = e
    return out


def rank_expected(expected: dict[str, Expected], lines: dict[str, dict], config: LivePickConfig) -> None:
    """Rank the lines no filter took, per character window, among the ones in `expected`
    (ranked again from scratch if they were ranked before); `lines`: their chat rows by msg_id."""
    survivors = defaultdict(list)
    for e in expected.values():
        if e.verdict is None or e.verdict in V.RANKED:
            survivors[e.window_key].append((lines[e.msg_id], e))
    for ranked in survivors.values():
        ranked.sort(key=lambda le: (-le[0]["donation_amount"], not le[0]["is_question"], int(le[0]["sent_at_ns"]), le[0]["msg_id"]))
        for rank, (_, e) in enumerate(ranked, start=1):
            e.rank_in_window = rank
            e.ranked_in_window = len(ranked)
            e.verdict = V.PICK if rank <= config.picks_per_window else V.DEFERRED
