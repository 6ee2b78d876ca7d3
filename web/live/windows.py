"""The window buffer: every open (character, 30-second window) in memory.

Per-line work is done as lines arrive (`engine.judge_arrived`): the gates, the tagger, the three
filters of the engine (out of world, just answered, closeness), which depend on nothing else in
the window, and for a line that passes them everything its verdict row says but its place. A
filtered line's verdict row is final when its batch is done, and its share of the seed's checks
is run then; a waiting line's evidence is held to the checks that read only evidence (6 and 7)
then too, and at the finish those walk only the count its place adds (`Known.checked`). When the window finishes, only its place is left for each waiting line: the engine
ranks them (`engine.rank_waiting`: the filtered lines take no part in the ranking) and writes
what the place decides, pick ids are settled over the whole window, and the waiting lines'
checks are added. With a model summary
writer, the finished window's sentences are written as the batch path writes them
(`write_summaries`, one call per window) and the window is checked again whole, on the
sentences kept. No rule is written here: every verdict comes from `rules.live_pick.engine`,
every check from `run_checks`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import pandas as pd

from rules.common import timestamps
from rules.common.checks import CheckResult
from rules.common.normalised import Normalised
from rules.common.reconcile import empty_quarantine
from rules.live_pick.checks import EVIDENCE_CHECKS, Known, run_checks
from rules.live_pick.config import LivePickConfig
from rules.live_pick.engine import OUTPUT_COLUMNS, judge, judge_arrived, pick_ids, rank_waiting, records
from rules.live_pick.normalise import screen_chat, screen_references
from rules.live_pick.reference import Sheets
from rules.live_pick.summaries import write_summaries

Key = tuple[str, int]


@dataclass
class References:
    """The character sheets and viewer state a window is judged against (taken when it opens)."""

    version: tuple
    raw: dict[str, pd.DataFrame]
    sheet: pd.DataFrame
    relation: pd.DataFrame
    file_sheet: pd.DataFrame
    """The sheet file's valid rows: a line of a character with none is quarantined."""

    @classmethod
    def of(cls, version: tuple, raw: dict[str, pd.DataFrame], config: LivePickConfig) -> "References":
        sheet, relation = (s.accepted() for s in screen_references(raw, config))
        return cls(version, raw, sheet, relation, sheet)

    @cached_property
    def characters(self) -> frozenset[str]:
        """The characters with a valid sheet: a line of any other opens no window."""
        return frozenset(self.file_sheet["character_id"])

    @cached_property
    def rows(self) -> Sheets:
        """The sheets and relations as the checks read them, made once per snapshot."""
        return Sheets.of(_normalised(_no_lines(), self))


@dataclass
class Window:
    key: Key
    refs: References
    lines: int = 0
    """Landing lines of this window so far, quarantined ones included."""
    filtered: list[dict] = field(default_factory=list)
    waiting: list[dict] = field(default_factory=list)
    """Lines that passed every filter, judged but for their place (`engine.judge_arrived`): ranked when the window finishes."""
    survivors: list[pd.DataFrame] = field(default_factory=list)
    """The gated chat rows of the waiting lines."""
    known: list[Known] = field(default_factory=list)
    """What the checks read of the waiting lines (`checks.Known`), one part per batch: ranked when the window finishes."""
    filtered_chat: list[pd.DataFrame] = field(default_factory=list)
    checks: list[list[CheckResult]] = field(default_factory=list)
    evidence_checks: list[list[CheckResult]] = field(default_factory=list)
    """Checks 6 and 7 on the waiting lines' rank-free evidence, one part per batch (`EVIDENCE_CHECKS`)."""
    quarantined: list[dict] = field(default_factory=list)
    sent_ns: dict[str, int] = field(default_factory=dict)
    seq_of: dict[str, int] = field(default_factory=dict)
    tags_of: dict[str, list | None] = field(default_factory=dict)
    texts: dict[str, str | None] = field(default_factory=dict)
    """msg_id → what the viewer wrote, for the frame (`texts.body_of`)."""
    form: str | None = None
    """The first accepted line's timestamp form: the window_start is written in it."""


@dataclass
class Prepared:
    """One batch after the gates: accepted chat rows (with their window) and quarantine."""

    chat: pd.DataFrame
    quarantine: pd.DataFrame


def prepare(lines: pd.DataFrame, refs: References, config: LivePickConfig) -> Prepared:
    """Gate raw landing lines (dataset, file, line = landing seq, text)."""
    screened = screen_chat(lines, refs.file_sheet, refs.relation, config)  # the references were gated once
    q, chat = screened.quarantine(), screened.accepted()
    step = config.window_seconds * timestamps.NS_PER_SEC
    sent = chat["sent_at_ns"].astype("int64")
    chat["window_ns"] = sent - sent % step
    return Prepared(chat, q)


def _normalised(chat: pd.DataFrame, refs: References) -> Normalised:
    return Normalised({"live_chat": chat.drop(columns=["window_ns"], errors="ignore"),
                       "character_sheet": refs.sheet, "viewer_relation": refs.relation}, empty_quarantine())


def check_part(chat: pd.DataFrame, rows: list[dict], refs: References, config: LivePickConfig) -> list[CheckResult]:
    """The seed's checks on part of a window: the rows and the (tagged) lines they judge."""
    return run_checks(_normalised(chat, refs), rows, config, Known.of(_normalised(chat, refs), rows, config, refs.rows))


def summarise(rows: list[dict], chat: pd.DataFrame, refs: References, config: LivePickConfig, writer) -> list[dict]:
    """The rows with the writer's sentences where they pass the checks, as the batch path keeps them."""
    written = write_summaries(pd.DataFrame(rows, columns=OUTPUT_COLUMNS), _normalised(chat, refs), config, writer)
    return [{**r, "summary": s, "provenance": p} for r, s, p in zip(rows, written["summary"], written["provenance"])]


def add_lines(batch: dict[Key, pd.DataFrame], windows: dict[Key, Window], refs: References, config: LivePickConfig,
              tagger) -> None:
    """Judge a batch's new lines, all windows at once (one engine call, one checks call: their
    cost is mostly per call): a filtered line's row is final now; the others wait, judged but for
    their place in the window, which its ranking decides when it finishes."""
    if not batch:
        return
    chat = pd.concat(list(batch.values()), ignore_index=True).drop(columns=["window_ns"])
    key_of = {m: k for k, part in batch.items() for m in part["msg_id"]}
    done, waiting = judge_arrived(chat, refs.sheet, refs.relation, config, tagger)
    filtered = records(done)
    gone = {r["msg_id"] for r in filtered}
    known = Known.of(_normalised(chat, refs), filtered + waiting, config, refs.rows, ranked=False)
    results = run_checks(None, filtered, config, known.only(gone)) if filtered else None
    # A waiting line's evidence but the count its place adds is final now: checks 6 and 7 walk it
    # now, and at the finish only what was added (`Known.checked`).
    evidence = run_checks(None, [{"msg_id": w["msg_id"], "evidence": w["base"][0]} for w in waiting], config,
                          known.only(w["msg_id"] for w in waiting), EVIDENCE_CHECKS) if waiting else None
    known.checked.update((w["msg_id"], w["base"][0]) for w in waiting)
    tags = {r["msg_id"]: r["provenance"]["tags"] for r in filtered}
    tags.update((w["msg_id"], w["provenance"]["tags"]) for w in waiting)  # what the rules used
    waiting_in: dict[Key, list[dict]] = {}
    for w in waiting:
        waiting_in.setdefault(key_of[w["msg_id"]], []).append(w)
    for key, mine in waiting_in.items():
        windows[key].waiting += mine
        windows[key].known.append(known.only(w["msg_id"] for w in mine))
        windows[key].evidence_checks.append(checks_of(evidence, {w["msg_id"] for w in mine}))
    for key, part in batch.items():
        window = windows[key]
        part = part.drop(columns=["window_ns"])
        if window.form is None:
            window.form = part["sent_at_form"].iloc[0]
        window.sent_ns.update(zip(part["msg_id"], part["sent_at_ns"].astype("int64")))
        window.seq_of.update((m, int(s)) for m, s in zip(part["msg_id"], part["line"]))
        window.tags_of.update((m, tags[m]) for m in part["msg_id"])
        mine = [r for r in filtered if key_of[r["msg_id"]] == key]
        if mine:
            window.filtered += mine
            window.filtered_chat.append(part[part["msg_id"].isin(gone)])
            window.checks.append(checks_of(results, {r["msg_id"] for r in mine}))
        survivors = part[~part["msg_id"].isin(gone)]
        if len(survivors):
            window.survivors.append(survivors)


def checks_of(results: list[CheckResult], ids: set[str]) -> list[CheckResult]:
    """A window's share of checks run over several windows: its own failing ids. A check that
    failed without naming any id fails for every window it covered."""
    out = []
    for r in results:
        failing = [i for i in r.failing_ids if i in ids]
        passed = r.passed or (bool(r.failing_ids) and not failing)
        out.append(CheckResult(r.id, r.title, passed, failing, r.detail if not passed else ""))
    return out


@dataclass
class Finished:
    rows: list[dict]
    checks: list[CheckResult]
    window_start: str


def finish(windows: list[Window], config: LivePickConfig, writer=None) -> list[Finished]:
    """Rank the waiting lines of windows finishing together (one ranking and one checks call per
    set of references), settle pick ids within each window, complete each window's checks.

    `writer`: a model summary writer (`rules.live_pick.summaries.writer`), None for the template."""
    ranked: dict[Key, list[dict]] = {w.key: [] for w in windows}
    extra: dict[Key, list[CheckResult]] = {}
    groups: dict[int, list[Window]] = {}
    for w in windows:
        groups.setdefault(id(w.refs), []).append(w)
    for group in groups.values():  # knowledge of one snapshot of the references is merged
        with_survivors = [w for w in group if w.waiting]
        if not with_survivors:
            continue
        key_of = {m["msg_id"]: w.key for w in with_survivors for m in w.waiting}
        rows = rank_waiting([m for w in with_survivors for m in w.waiting], config)
        known = Known.merged([k for w in with_survivors for k in w.known])
        known.rank(config)
        results = run_checks(None, rows, config, known)
        for r in rows:
            ranked[key_of[r["msg_id"]]].append(r)
        for w in with_survivors:
            extra[w.key] = checks_of(results, {r["msg_id"] for r in ranked[w.key]})
    out = []
    for w in windows:
        rows = w.filtered + ranked[w.key]
        checks = list(w.checks)
        evidence = w.evidence_checks  # dropped where the whole window is checked again
        if rows:  # pick ids depend on every msg_id judged together: here, the window's
            settled = pick_ids(pd.Series([r["msg_id"] for r in rows], dtype=object))
            for r, p in zip(rows, settled):
                r["pick_id"] = p
            # The parts were checked on the ids of the lines judged with them (several windows at
            # once); the only check an id takes part in is that ids are filled and unique, which
            # `pick_ids` keeps over a window's distinct msg_ids. Should that ever not hold, the
            # whole window is checked again on its settled ids.
            if len(set(settled)) != len(settled):
                checks = [check_part(pd.concat(w.filtered_chat + w.survivors, ignore_index=True), rows, w.refs, config)]
                extra.pop(w.key, None)
                evidence = []
        if w.key in extra:
            checks.append(extra[w.key])
        # the batch order within a window: the writer's budget is spent in this order
        rows.sort(key=lambda r: (r["rank_in_window"] is None, r["rank_in_window"] or 0, w.sent_ns[r["msg_id"]], r["msg_id"]))
        if writer is not None and rows:
            chat = pd.concat(w.filtered_chat + w.survivors, ignore_index=True)
            rows = summarise(rows, chat, w.refs, config, writer)
            checks = [check_part(chat, rows, w.refs, config)]  # the sentences kept are checked too
            evidence = []
        if not checks:
            checks.append(check_part(_no_lines(), [], w.refs, config))
        start = rows[0]["window_start"] if rows else timestamps.format_ns(w.key[1], w.form or "", config.timezone)
        out.append(Finished(rows, fold_checks(merge_checks(checks), evidence), start))
    return out


def _no_lines() -> pd.DataFrame:
    cols = ["msg_id", "character_id", "viewer_id", "sent_at", "body", "topic_tags", "donation_amount", "is_question",
            "note", "sent_at_ns", "sent_at_form", "file", "line", "dataset"]
    return pd.DataFrame({c: pd.Series(dtype="int64" if c in ("sent_at_ns", "line", "donation_amount") else object) for c in cols})


def merge_checks(parts: list[list[CheckResult]]) -> list[CheckResult]:
    """One result per check over the parts of a window: it passes when every part passed."""
    out = []
    for results in zip(*parts):
        failing = list(dict.fromkeys(i for r in results for i in r.failing_ids))
        detail = "; ".join(r.detail for r in results if not r.passed and r.detail)
        out.append(CheckResult(results[0].id, results[0].title, all(r.passed for r in results), failing,
                               detail or results[0].detail))
    return out


def fold_checks(results: list[CheckResult], parts: list[list[CheckResult]]) -> list[CheckResult]:
    """`results` with the parts' results of some of the same checks merged into them (`merge_checks`)."""
    more: dict[str, list[CheckResult]] = {}
    for part in parts:
        for r in part:
            more.setdefault(r.id, []).append(r)
    return [merge_checks([[r], *([m] for m in more.get(r.id, ()))])[0] for r in results]


def judge_late(chat: pd.DataFrame, refs: References, config: LivePickConfig, tagger, writer=None) -> list[dict]:
    """Late lines of one finished window, judged among themselves in a follow-up (with the window's summary writer)."""
    verdicts = judge(chat.drop(columns=["window_ns"], errors="ignore"), refs.sheet, refs.relation, config, tagger)
    if writer is not None:
        verdicts = write_summaries(verdicts, _normalised(chat, refs), config, writer)
    return records(verdicts)
