"""The operator's verdict board: one self-contained HTML page per domain and run.

Items are grouped by the verdict key, shown verbatim; one row per item (label · id and the
one-line summary with its numbers) opens on the evidence table. The row is a native
<details>, so it opens without script. Always on the page: the automatic checks with pass/fail,
the verification notes (automatic, manual, honesty boundary) and the self-score, which stays
blank unless golden labels were given. Quarantined rows and held items have their own section.

Every string that came from logs goes through `html.escape`; the page fetches nothing (CSS and
script are inline) and its script only opens, closes and filters what is already there.
"""

from __future__ import annotations

import contextvars
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Mapping

from evals import csp
from rules.common import reason_words
from evals.manual_checks import checks_of, reviewer_lines
from evals.pins import pins_text
from evals.render import EMPTY_NOTICE, NO_MANUAL, script_json
from evals.report import PERSON, Report, by_step, label, values_text
from evals.board_markdown import inline_md, markdown_html, md_table_rows  # noqa: F401 - the boards' Markdown, imported from here
from evals.board_limits import (  # noqa: F401 - the boards import the limits from here
    MAX_ITEMS_PER_GROUP, MAX_PER_WINDOW_REASON, MAX_WINDOWS, QUARANTINE_TABLE, REPORT_FILE, REST, Rest, cut_notice, e, overflow_note,
)

_ITEM_HREF: contextvars.ContextVar[Callable[[str], str] | None] = contextvars.ContextVar("item_href", default=None)
"""Set while a served page renders: every row links to its item page."""
_SHOWN: contextvars.ContextVar[list | None] = contextvars.ContextVar("shown", default=None)
"""Set while the layout is only traced: the rows the page would show, in place of their markup."""

GROUP_OPEN_LIMIT = 50
"""A verdict group with more rows than this starts closed (its count stays in view)."""
RAW_PREVIEW = 160
"""Characters of a quarantined line's raw text shown on the page."""


@dataclass
class Board:
    """What one page shows: the verdict rows and their report, plus the domain's extras."""

    domain: str
    rows: list[dict]
    report: Report
    spec: "BoardSpec"
    """The domain's layout (`Domain.board()`)."""
    sample: bool = False
    """Built from the sample data in seeds/<domain>/ because nothing was given."""
    comparison: Any = None
    """persona: an `evals.compare.Comparison` of two prompt versions."""
    comparison_note: str = ""
    """Why no comparison is shown, when one was attempted."""
    review: tuple[list[dict], int, int] | None = None
    """persona: (review queue rows, candidate count, sample size) for the manual check."""
    latency: Mapping[tuple[str, str], float] = field(default_factory=dict)
    """live_pick: seconds from a window's close to its verdicts stored, by (character_id, window_start)."""
    rest: Rest | None = None
    """Where the rows the page leaves off are listed (the admin pages' item list of this run)."""
    evidence: Callable[[list[dict]], None] | None = None
    """Set when the rows came with some columns alone (a large day read from the warehouse): fills in
    place the other columns of the rows given, which are those the page shows."""
    stored: Any = None
    """Set in place of `rows` for a day kept in the warehouse (`assets.common.day_board.StoredRows`):
    the database counts the rows and hands over only those the page shows."""


@dataclass(frozen=True)
class Served:
    """How a page served by the web front differs from the self-contained file: the response's
    CSP nonce on the inline style and script, a navigation bar, and a link from each row to its item page."""

    nonce: str
    nav: str = ""
    """Trusted markup placed above the header."""
    item_href: Callable[[str], str] | None = None
    """Item id → URL of its detail page."""
    rest: Rest | None = None
    """The run's item list on the admin pages (replaces the board's own)."""


@dataclass(frozen=True)
class BoardSpec:
    """How a domain's rows are laid out (each domain's `BOARD` in `evals/boards/<domain>.py`)."""

    domain: str
    title: str
    """What the page is for, in the seed's words."""
    verdict_key: str
    id_field: str
    summary_field: str = "summary"
    second_id: str | None = None
    excluded_heading: str = "판정에서 뺀 항목 (분모 밖)"
    excluded_chip: str = "판정에서 뺀 항목"
    items: Callable[[BoardSpec, Board], str] | None = None
    """Replaces the default layout (one section per verdict)."""
    header: Callable[[Board], str] = lambda board: ""
    lead: Callable[[Board], str] = lambda board: ""
    """Domain sections before the items."""
    sections: Callable[[Board], str] = lambda board: ""
    """Domain sections after the items."""
    own_sections: tuple[str, ...] = ()
    """Report sections (by heading, or a heading's start) the domain shows in its own place rather than the appendix."""
    gather: Callable[..., dict] = lambda domain, input_dir, judged: {}
    """(Domain, input dir, Judged) → extra `Board` fields, when the page is built from files."""
    evidence_reason: Callable[[dict, list[dict]], list[str]] | None = None
    """(row, its evidence) → why each evidence row is cited: a `reason` column in the evidence table."""
    order: tuple[str, ...] = field(kw_only=True)
    """The verdicts in display order (the domain spec's `verdict_order`)."""
    trace: Any = None
    """The domain's `evals.trace.TraceSpec`: which rows a verdict's evidence may cite, and its conversation."""
    wide: bool = False
    """The items take the page's whole width (a column board) and the side panel follows below them."""


def value_html(v) -> str:
    """A JSON value as a cell: null and empty strings are marked so they are not mistaken for blanks."""
    if v is None:
        return "<span class='null'>null</span>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return e(v) if v else "<span class='null'>\"\"</span>"
    if isinstance(v, (int, float)):
        return e(v)
    return e(json.dumps(v, ensure_ascii=False, default=str))


# -- items ---------------------------------------------------------------------------------------


def item_html(spec: BoardSpec, row: dict, n: int, order: tuple[str, ...], href: Callable[[str], str] | None = None) -> str:
    shown = _SHOWN.get()
    if shown is not None:
        shown.append(row)
        return ""
    verdict = label(row.get(spec.verdict_key))
    rid = row.get(spec.id_field)
    second = row.get(spec.second_id) if spec.second_id else None
    head = (f"<summary>{verdict_label(verdict, order)} <code class='id'>{e(rid)}</code>"
            + (f" <span class='id2'>{e(second)}</span>" if second is not None else "")
            + f" <span class='sum'>{e(row.get(spec.summary_field))}</span></summary>")
    body = []
    if row.get("hedge"):
        body.append(f"<p class='hedge'><b>데이터가 정하지 못하는 점</b> {e(row['hedge'])}</p>")
    skip = {spec.verdict_key, spec.id_field, spec.summary_field, "hedge", "evidence"}
    fields = [(k, v) for k, v in row.items() if k not in skip]
    if fields:
        body.append("<dl class='fields'>" + "".join(f"<div><dt>{e(k)}</dt><dd>{value_html(v)}</dd></div>" for k, v in fields) + "</dl>")
    body.append(_evidence_table(row.get("evidence"), spec.evidence_reason and (lambda items: spec.evidence_reason(row, items))))
    href = href or _ITEM_HREF.get()
    if href is not None and isinstance(rid, str):
        body.append(f"<p class='detail'><a href='{e(href(rid))}'>자세히 보기 — 근거 행의 파일·줄과 대화 흐름</a></p>")
    return (f"<details class='item' id='i-{n}' data-id='{e(rid)}' data-verdict='{e(verdict)}'>{head}"
            f"<div class='body'>{''.join(body)}</div></details>")


def _evidence_table(evidence, reasons: Callable[[list[dict]], list[str]] | None = None) -> str:
    items = [x for x in evidence if isinstance(x, dict)] if isinstance(evidence, list) else []
    if not items:
        return "<p class='empty'>근거가 없습니다.</p>"
    origin = "source" if any("source" in x for x in items) else "dataset"
    why = reasons(items) if reasons else None
    rows = "".join(
        f"<tr><td>{value_html(x.get(origin)) if origin in x else ''}</td><td><code>{e(x.get('field'))}</code></td>"
        f"<td class='val'>{value_html(x.get('value'))}</td><td>{e(x.get('agg') or '')}</td>"
        + (f"<td class='why'>{e(why[i])}</td>" if why else "") + "</tr>"
        for i, x in enumerate(items)
    )
    return (f"<table class='evidence'><thead><tr><th>{origin}</th><th>field</th><th>value</th><th>agg</th>"
            + ("<th>reason</th>" if why else "") + f"</tr></thead><tbody>{rows}</tbody></table>")


def verdict_label(verdict: str, order: tuple[str, ...]) -> str:
    cls = f"v{order.index(verdict)}" if verdict in order else "vx"
    return f"<span class='label {cls}'>{e(verdict)}</span>"


def _grouped(spec: BoardSpec, rows: list[dict]) -> dict[str, list[tuple[int, dict]]]:
    """Rows (with their page number) by verdict: every key of the order, then any other value met."""
    groups: dict[str, list[tuple[int, dict]]] = {v: [] for v in spec.order}
    for n, row in enumerate(rows):
        groups.setdefault(label(row.get(spec.verdict_key)), []).append((n, row))
    return groups


def groups(spec: BoardSpec, board: Board) -> dict[str, tuple[int, list[tuple[int, dict]]]]:
    """(rows, the first `MAX_ITEMS_PER_GROUP` with their page number) by verdict, as `_grouped` orders them."""
    if board.stored is None:
        return {v: (len(members), members[:MAX_ITEMS_PER_GROUP]) for v, members in _grouped(spec, board.rows).items()}
    out: dict[str, tuple[int, list[tuple[int, dict]]]] = {v: (0, []) for v in spec.order}
    for value, (n, heads) in board.stored.groups(spec.verdict_key, MAX_ITEMS_PER_GROUP).items():  # in order of first row
        had, shown = out.get(label(value), (0, []))
        out[label(value)] = (had + n, sorted(shown + heads, key=lambda m: m[0])[:MAX_ITEMS_PER_GROUP])
    return out


def total(board: Board) -> int:
    return len(board.rows) if board.stored is None else board.stored.total


def default_items(spec: BoardSpec, board: Board) -> str:
    order = spec.order
    out = []
    for i, (verdict, (many, members)) in enumerate(groups(spec, board).items()):
        is_open = " open" if many <= GROUP_OPEN_LIMIT else ""
        out.append(f"<details class='group' id='g-{i}' data-group-verdict='{e(verdict)}'{is_open}>"
                   f"<summary><h2>{verdict_label(verdict, order)} <span class='n'>{many}건</span></h2></summary>")
        out += [item_html(spec, row, n, order) for n, row in members]
        out.append(overflow_note(many - MAX_ITEMS_PER_GROUP, verdict=verdict) if many else "<p class='empty'>없음</p>")
        out.append("</details>")
    return "".join(out)


def column_items(spec: BoardSpec, board: Board, extra: str = "") -> str:
    """The verdict groups side by side, one column per verdict key (seed 003's board), then `extra`
    (more columns, e.g. the held items). Each column is the same `<details class='group'>` as the
    stacked layout, so filters and links open it alike."""
    order = spec.order
    out = ["<div class='columns'>"]
    for i, (verdict, (many, members)) in enumerate(groups(spec, board).items()):
        out.append(f"<details class='group column' id='g-{i}' data-group-verdict='{e(verdict)}' open>"
                   f"<summary><h2>{verdict_label(verdict, order)} <span class='n'>{many}건</span></h2></summary>")
        out += [item_html(spec, row, n, order) for n, row in members]
        out.append(overflow_note(many - MAX_ITEMS_PER_GROUP, verdict=verdict) if many else "<p class='empty'>없음</p>")
        out.append("</details>")
    out.append(extra + "</div>")
    return "".join(out)


def counts(spec: BoardSpec, board: Board) -> dict[str, int]:
    """Items per verdict, every key of the order included (zeros too), in `_grouped`'s order."""
    if board.stored is None:
        return {v: len(members) for v, members in _grouped(spec, board.rows).items()}
    counted = board.stored.counts(spec.verdict_key)
    if any(label(v) not in spec.order for v in counted):  # placed by their first row
        return {v: many for v, (many, _) in groups(spec, board).items()}
    out = {v: 0 for v in spec.order}
    for v, n in counted.items():
        out[label(v)] += n
    return out


# -- the page ------------------------------------------------------------------------------------


def render_board(board: Board, served: Served | None = None) -> str:
    """The page; `served` set: for the web front (nonce, navigation, item links) instead of a file."""
    if board.evidence is not None:
        board.evidence(shown_rows(board))
    token = _ITEM_HREF.set(served.item_href if served else None)
    rest = REST.set(served.rest if served and served.rest else board.rest)
    try:
        return _render_board(board, served)
    finally:
        REST.reset(rest)
        _ITEM_HREF.reset(token)


def shown_rows(board: Board) -> list[dict]:
    """The rows the page shows (its layout traced without markup)."""
    shown: list[dict] = []
    token = _SHOWN.set(shown)
    try:
        (board.spec.items or default_items)(board.spec, board)
    finally:
        _SHOWN.reset(token)
    return shown


def _render_board(board: Board, served: Served | None) -> str:
    spec = board.spec
    report = board.report
    group_counts = counts(spec, board)
    order = spec.order
    quarantined = 0 if report.quarantine is None else len(report.quarantine)
    chips = "".join(
        f"<button type='button' class='chip' data-verdict-filter='{e(v)}' aria-pressed='false'>{verdict_label(v, order)}<b>{n}</b></button>"
        for v, n in group_counts.items()
    )
    chips += (f"<a class='chip plain' href='#quarantine'>격리 <b>{quarantined}</b></a>"
              f"<a class='chip plain' href='#quarantine'>{e(spec.excluded_chip)} <b>{len(report.excluded)}</b></a>")
    sample = (f"<p class='sample' role='note'><b>샘플 데이터 (sample data)</b> 아직 올린 파일이 없어 "
              f"<code>seeds/{e(board.domain)}/</code>의 합성 데이터로 만든 화면입니다.</p>") if board.sample else ""
    judged = total(board)
    if not judged:  # a day with nothing judged must not read as a day of passes
        sample += f"<p class='sample empty-run' role='note'><b>{e(EMPTY_NOTICE)}</b></p>"
    pins = pins_text(report.pins)
    if pins:
        sample += "<p class='scope pins'>고정 입력 " + " · ".join(f"{e(what)} <code>{e(value)}</code>" for what, value in pins) + "</p>"
    title = f"{board.domain} 판정 보드 · {report.scope}"
    data = {
        "domain": board.domain, "scope": report.scope, "sample": board.sample, "counts": group_counts,
        "checks": [{"id": c.id, "passed": c.passed} for c in report.checks], "quarantined": quarantined,
        "excluded": len(report.excluded), "self_score": report.has_golden,
    }
    items = (spec.items or default_items)(spec, board)
    sample += cut_notice(judged, items.count("<details class='item' "))
    nonce = f" nonce='{e(served.nonce)}'" if served else ""
    anchors = _anchors(board)
    css, script = _asset("board.css"), _asset("board.js")
    return "".join([
        # A written file carries its policy (by hash); a served page gets the header with this nonce.
        "<!doctype html><html lang='ko'><head><meta charset='utf-8'>", "" if served else csp.meta(scripts=(script,), styles=(css,)),
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{e(title)}</title><style{nonce}>{css}</style></head><body>", served.nav if served else "",
        f"<header class='top'><p class='eyebrow'><code>{e(board.domain)}</code> 판정 보드</p><h1>{e(spec.title)}</h1>",
        f"<p class='scope'>범위 <code>{e(report.scope)}</code> · 판정 {judged}건 · 묶음 기준 <code>{e(spec.verdict_key)}</code></p>",
        sample, *[f"<p class='sample' role='alert'><b>데이터 품질 실패</b> {e(w)}</p>" for w in report.warnings],
        spec.header(board), f"<nav class='chips' aria-label='판정별 건수'>{chips}</nav></header>",
        f"<div class='layout{' wide-items' if spec.wide else ''}'><main>",
        "<div class='tools'><input type='search' id='filter' placeholder='id·요약·근거 값으로 찾기' aria-label='찾기'>"
        "<button type='button' data-toggle='open'>모두 펼치기</button><button type='button' data-toggle='close'>모두 접기</button></div>",
        spec.lead(board),
        f"<div id='items'>{items}</div>",
        spec.sections(board),
        _appendix(spec, report),
        _quarantine_section(spec, report),
        "</main><aside class='side'>",
        _checks_panel(report), _self_score(report, anchors), _notes(board),
        "</aside></div>",
        f"<script type='application/json' id='board-data'>{script_json(data)}</script>",
        f"<script{nonce}>{script}</script></body></html>",
    ])


def _anchors(board: Board) -> dict[str, int]:
    """Id → page number of the rows the self-score may link (on a stored day: of its wrong cases shown)."""
    spec = board.spec
    if board.stored is None:
        return {row.get(spec.id_field): n for n, row in enumerate(board.rows) if isinstance(row.get(spec.id_field), str)}
    if not board.report.has_golden:
        return {}
    ids = [w.id for cases in by_step(board.report.wrong_cases).values() for w in cases[:MAX_ITEMS_PER_GROUP] if isinstance(w.id, str)]
    return board.stored.positions(spec.id_field, ids)


def _asset(name: str) -> str:
    return (resources.files("evals") / "board_assets" / name).read_text(encoding="utf-8")


def _checks_panel(report: Report) -> str:
    passed = sum(c.passed for c in report.checks)
    if not report.checks:
        body = "<p class='empty'>입력 없이 만든 화면이라 자동 검증을 돌리지 않았습니다.</p>"
    else:
        body = "<ol class='checks'>" + "".join(
            f"<li class='{'pass' if c.passed else 'fail'}'><span class='mark'>{'통과' if c.passed else '실패'}</span> "
            f"<code>{e(c.id)}</code> {e(c.title)}"
            + ("" if c.passed else f"<div class='failing'>{e(c.detail or ', '.join(c.failing_ids[:10]))}</div>")
            + "</li>"
            for c in report.checks
        ) + "</ol>"
    vacuous = " (검사할 판정 없음)" if report.checks and not report.verdict_counts_total else ""
    return (f"<section id='checks'><h2>출력 스키마 · 자동 검증 <span class='n'>{passed} / {len(report.checks)} 통과{vacuous}</span></h2>"
            f"{body}</section>")


def _self_score(report: Report, anchors: Mapping[str, int]) -> str:
    head = "<section id='self-score'><h2>자가채점 — 골든 일치</h2>"
    if not report.has_golden:
        return head + ("<p class='blank'>비워 둡니다. 골든 라벨 파일이 주어지지 않았거나 이 범위의 항목과 겹치는 라벨이 없습니다. "
                       "출처를 댈 수 없는 숫자는 화면에 두지 않습니다.</p></section>")
    rows = "".join(
        f"<tr><td><b>{e(m.name)}</b><div class='def'>{e(m.definition)}</div></td>"
        f"<td class='num'>{e(m.value_text())}<div class='def'>{'' if m.census else '95% Wilson '}{e(m.interval_text())}</div></td>"
        f"<td>{e(m.status)}<div class='def'>{e(m.criterion)}</div></td></tr>"
        for m in report.metrics if m.ratio is not None
    )
    kappa = report.kappa

    def case_id(i: str) -> str:
        return f"<a href='#i-{anchors[i]}'><code>{e(i)}</code></a>" if i in anchors else f"<code>{e(i)}</code>"

    wrong = "".join(
        f"<h4>{e(step)} <span class='n'>{len(cases)}건</span></h4><ul class='wrong'>"
        + "".join(f"<li>{case_id(w.id)} 정답 {e(w.gold)} → 판정 {e(w.predicted)}"
                  + (f"<div class='def'>{e(values_text(w.values))}</div>" if w.values else "") + "</li>" for w in cases[:MAX_ITEMS_PER_GROUP])
        + "</ul>" + overflow_note(len(cases) - MAX_ITEMS_PER_GROUP, elsewhere=REPORT_FILE) for step, cases in by_step(report.wrong_cases).items())
    return (head + "<table class='metrics'><thead><tr><th>지표</th><th>값</th><th>상태 · 기준</th></tr></thead>"
            f"<tbody>{rows}</tbody></table><p>Cohen's kappa {'—' if kappa is None else f'{kappa:.3f}'}</p>"
            f"<h3>틀린 사례 {len(report.wrong_cases)}건</h3>" + (wrong or "<p>없습니다.</p>")
            + "</section>")


def _notes(board: Board) -> str:
    report = board.report
    passed = sum(c.passed for c in report.checks)
    rec = report.reconciliation
    auto = [f"자동 검증 {passed} / {len(report.checks)}개 통과 (위 목록)."
            + (" 판정 재계산과 출력 스키마 검증이 들어 있습니다." if any(c.id == "schema" for c in report.checks) else "")]
    if rec:
        ok = all(r["reconciles"] for r in rec.values())
        auto.append(("원본 = 정규화 + 격리가 데이터셋마다 맞습니다." if ok else "원본 = 정규화 + 격리가 맞지 않는 데이터셋이 있습니다.")
                    + " " + ", ".join(f"{e(k)} {r['raw']} = {r['normalised']} + {r['quarantined']}" for k, r in rec.items()))
    team = dict(reviewer_lines(report))
    manual = [f"<b>{e(m.name)}</b> — {e(m.definition)}" + (f" · {e(m.note)}" if m.note else "")
              + (f" · <b>{e(m.ratio.format())}</b> (95% Wilson {e(m.interval_text())})" if m.ratio is not None else "")
              + "".join(f"<div class='def'>{e(x)}</div>" for x in team.get(m.key, []))
              for m in report.metrics if m.status.startswith(PERSON)]
    if not checks_of(report.domain):
        manual.append(e(NO_MANUAL))
    if board.review is not None:
        manual.append(f"검토 대기열: 후보 {board.review[1]}건 가운데 {len(board.review[0])}건 (<a href='#review'>아래 표</a>).")
    honesty = [e(h) for h in report.honesty]
    if board.sample:
        honesty.insert(0, "이 화면은 샘플 데이터로 만들었습니다. 규칙과 데이터를 같은 손으로 썼으므로 동작을 보여 줄 뿐 품질을 증명하지 않습니다.")

    def part(title: str, lines: list[str]) -> str:
        return f"<h3>{title}</h3>" + ("<ul>" + "".join(f"<li>{x}</li>" for x in lines) + "</ul>" if lines else "<p class='empty'>없음</p>")

    return ("<section id='notes'><h2>검증 노트</h2>" + part("자동 · 코드가 판정합니다", auto)
            + part("수동 · 사람이 봅니다", manual) + part("정직 경계선", honesty) + "</section>")


def reason_label(code) -> str:
    """A quarantine reason code's Korean (`rules.common.reason_words`) before the code, when it has one."""
    words = reason_words.REASONS.get(code) if isinstance(code, str) else None
    return f"<b>{e(words)}</b> " if words else ""


def _quarantine_section(spec: BoardSpec, report: Report) -> str:
    q = report.quarantine
    n = 0 if q is None else len(q)
    out = [f"<section id='quarantine'><h2>격리된 행 · {e(spec.excluded_chip)} <span class='n'>{n + len(report.excluded)}건</span></h2>",
           "<p>아래 행은 판정에서 빠졌고 사유를 함께 적었습니다. 나머지 판정은 위에 그대로 있습니다.</p>"]
    if report.reconciliation:
        out.append("<table class='rec'><thead><tr><th>데이터셋</th><th>원본</th><th>정규화</th><th>격리</th><th>맞음</th></tr></thead><tbody>")
        out += [f"<tr><td>{e(k)}</td><td>{r['raw']}</td><td>{r['normalised']}</td><td>{r['quarantined']}</td>"
                f"<td class='{'pass' if r['reconciles'] else 'fail'}'>{'맞음' if r['reconciles'] else '안 맞음'}</td></tr>"
                for k, r in report.reconciliation.items()]
        out.append("</tbody></table>")
    if n:
        out.append("<table class='qrows'><thead><tr><th>데이터셋</th><th>줄</th><th>id</th><th>사유</th><th>원문</th></tr></thead><tbody>")
        for r in q.head(MAX_ITEMS_PER_GROUP).to_dict("records"):
            raw = r.get("raw")
            raw = "" if not isinstance(raw, str) else raw if len(raw) <= RAW_PREVIEW else raw[:RAW_PREVIEW] + "…"
            line = r.get("line")
            out.append(f"<tr><td>{e(r.get('dataset'))}</td><td>{e(_int_or_blank(line))}</td><td><code>{e(_text_or_dash(r.get('id')))}</code></td>"
                       f"<td>{reason_label(r.get('reason_code'))}<code>{e(r.get('reason_code'))}</code> {e(r.get('reason'))}</td><td><code class='raw'>{e(raw)}</code></td></tr>")
        out.append("</tbody></table>" + overflow_note(n - MAX_ITEMS_PER_GROUP, elsewhere=QUARANTINE_TABLE))
    elif report.quarantine is not None:
        out.append("<p class='empty'>격리된 행이 없습니다.</p>")
    out.append(f"<h3>{e(spec.excluded_heading)} <span class='n'>{len(report.excluded)}건</span></h3>")
    own = dict(report.extra_sections)
    if spec.excluded_heading in own:
        out.append(markdown_html(own[spec.excluded_heading]))
    if report.excluded:
        out.append("<table class='excluded'><thead><tr><th>id</th><th>코드</th><th>사유</th></tr></thead><tbody>")
        out += [f"<tr><td><code>{e(x.get('id'))}</code></td><td>{reason_label(x.get('code'))}<code>{e(x.get('code'))}</code></td><td>{e(x.get('reason'))}</td></tr>"
                for x in report.excluded[:MAX_ITEMS_PER_GROUP]]
        out.append("</tbody></table>" + overflow_note(len(report.excluded) - MAX_ITEMS_PER_GROUP, elsewhere=REPORT_FILE))
    else:
        out.append("<p class='empty'>없음</p>")
    out.append("</section>")
    return "".join(out)


def _int_or_blank(v) -> str:
    try:
        return str(int(v))
    except (TypeError, ValueError):
        return ""


def _text_or_dash(v) -> str:
    return v if isinstance(v, str) and v else "—"


def _appendix(spec: BoardSpec, report: Report) -> str:
    shown = [(h, b) for h, b in report.extra_sections if not any(h.startswith(own) for own in spec.own_sections)
             and h != spec.excluded_heading]
    if not shown:
        return ""
    return "".join(f"<section class='appendix'><h2>{e(h)}</h2>{markdown_html(b)}</section>" for h, b in shown)


def board_from_dir(domain, input_dir: Path, golden: list[dict] | None = None, *, sample: bool = False,
                   golden_path: Path | None = None, decisions: dict | None = None) -> str:
    """The page for a folder of <dataset>.jsonl files, judged and checked as `verdicts judge`/`validate` do.

    `domain` is an `evals.domains.Domain`; `golden` the loaded labels (the self-score
    stays blank without them; `golden_path` pins their file); `sample` says the folder is the
    sample data; `decisions` the stored manual-check decisions.
    """
    judged = domain.judge_dir(input_dir)
    checks, gated = domain.check_dir(input_dir, judged.rows)
    scope = f"{domain.name} · {'sample data ' if sample else ''}{input_dir}"
    report = domain.report(judged.rows, golden, checks, gated.quarantine, gated.reconciliation, scope=scope, judged=gated.normalised,
                           golden_path=golden_path, input_dir=input_dir, sample=sample or None, decisions=decisions)
    extra = domain.board().gather(domain, Path(input_dir), judged)
    return render_board(Board(domain.name, judged.rows, report, domain.board(), sample=sample, **extra))
