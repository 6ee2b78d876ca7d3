"""A run's items page by page, filtered by verdict, by id or summary text, and by the output's text
columns (a live_pick window, a character): what a large day's board leaves off.

A day the nightly chain stored is read from the warehouse's `<domain>_verdicts` table, one page at a
time (the database counts and pages; the service never holds the day's rows). Any other run (the
whole raw folder, an upload, a day not stored yet) is the run the admin pages judged, filtered in memory.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Mapping

from starlette.requests import Request
from starlette.responses import Response

from evals import domains
from evals.board import Rest, e, item_html
from evals.report import label
from schemas import load_schema
from web.admin.page import domain_crumbs, label_chip, page, url
from web.admin.runs import run_title

PAGE_SIZE = 50
"""Items per page."""
_HIDDEN = ("evidence", "provenance", "hedge", "summary")


@dataclass(frozen=True)
class ItemQuery:
    """What the page asks: a verdict, a text in the id or summary, equal values of text columns, a page (from 1)."""

    verdict: str | None = None
    text: str = ""
    equal: Mapping[str, str] = field(default_factory=dict)
    page: int = 1

    @property
    def offset(self) -> int:
        return (self.page - 1) * PAGE_SIZE

    def link(self, **change) -> dict:
        """This query's parameters with `change` applied (None drops one)."""
        out = {"verdict": self.verdict, "q": self.text or None, **self.equal, "page": self.page}
        out.update(change)
        return {k: v for k, v in out.items() if v not in (None, "")}


@dataclass
class ItemPage:
    counts: dict[str, int]
    """Items per verdict under the filters other than the verdict."""
    total: int
    """Items under every filter."""
    rows: list[dict]
    """This page's rows, in id order."""
    source: str


def filter_columns(domain: str) -> tuple[str, ...]:
    """The output's text columns a page may be filtered on by equality (ids, windows, codes)."""
    spec = domains.get(domain).spec
    props = load_schema(domain, spec.output_schema).get("properties", {})
    key = domains.get(domain).board()
    skip = {key.verdict_key, key.id_field, *_HIDDEN, *spec.verdict_json_columns}
    return tuple(c for c in spec.output_columns if c not in skip and _is_text(props.get(c, {})))


def _is_text(prop: dict) -> bool:
    kind = prop.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return "string" in kinds and not ({"integer", "number", "boolean", "array", "object"} & set(kinds))


def query_of(request: Request, domain: str) -> ItemQuery:
    p = request.query_params
    try:
        number = max(1, int(p.get("page", "1")))
    except ValueError:
        number = 1
    equal = {c: p[c] for c in filter_columns(domain) if p.get(c)}
    return ItemQuery(verdict=p.get("verdict") or None, text=(p.get("q") or "").strip(), equal=equal, page=number)


# -- the two sources -------------------------------------------------------------------------------


def verdicts_table(domain: str) -> str:
    return f"{domain}_verdicts"


def stored_day(warehouse, domain: str, day: str) -> bool:
    """Whether the nightly chain stored verdicts of this day."""
    table = verdicts_table(domain)
    return warehouse.has_table(table) and warehouse.count_partition(table, day) > 0


def _like(text: str) -> str:
    return "%" + text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def stored_page(warehouse, domain: str, day: str, query: ItemQuery) -> ItemPage:
    """One page of the day's stored verdicts, with the counts per verdict, asked of the database."""
    d = domains.get(domain)
    board = d.board()
    table, key, rid, summary = verdicts_table(domain), board.verdict_key, board.id_field, board.summary_field
    where, params = [], {}
    if query.text:
        where.append(f'(lower("{rid}") LIKE :_q ESCAPE \'\\\' OR lower("{summary}") LIKE :_q ESCAPE \'\\\')')
        params["_q"] = _like(query.text)
    for i, (column, value) in enumerate(sorted(query.equal.items())):
        where.append(f'"{column}" = :_e{i}')
        params[f"_e{i}"] = value
    base = " AND ".join(where) or "1 = 1"
    counts = {v: 0 for v in board.order}
    grouped = warehouse.query(f'SELECT "{key}", COUNT(*) FROM "{table}" WHERE partition_key = :_p AND {base} GROUP BY "{key}"',
                              {"_p": day, **params})
    for verdict, n in grouped:
        counts[label(verdict)] = counts.get(label(verdict), 0) + int(n)
    if query.verdict is not None:
        where.append(f'"{key}" = :_v')
        params["_v"] = query.verdict
    frame = warehouse.read_rows(table, day, d.spec.verdict_json_columns, " AND ".join(where), params,
                                order_by=f'"{rid}" LIMIT {PAGE_SIZE} OFFSET {int(query.offset)}')
    total = counts.get(label(query.verdict), 0) if query.verdict is not None else sum(counts.values())
    return ItemPage(counts, total, d.spec.records(frame) if len(frame) else [], "stored")


def memory_page(domain: str, rows: list[dict], query: ItemQuery) -> ItemPage:
    """The same page over a run judged in memory."""
    board = domains.get(domain).board()
    key, rid, summary = board.verdict_key, board.id_field, board.summary_field
    text = query.text.lower()

    def kept(r: dict) -> bool:
        return (not text or text in str(r.get(rid) or "").lower() or text in str(r.get(summary) or "").lower()) \
            and all(r.get(c) == v for c, v in query.equal.items())

    chosen = [r for r in rows if kept(r)]
    counts = {v: 0 for v in board.order}
    for r in chosen:
        counts[label(r.get(key))] = counts.get(label(r.get(key)), 0) + 1
    if query.verdict is not None:
        chosen = [r for r in chosen if label(r.get(key)) == query.verdict]
    chosen.sort(key=lambda r: str(r.get(rid)))
    return ItemPage(counts, len(chosen), chosen[query.offset:query.offset + PAGE_SIZE], "memory")


def load_page(state, domain: str, run: str, query: ItemQuery) -> ItemPage:
    from assets.resources.warehouse import WarehouseResource

    if run.startswith("day-"):
        warehouse = WarehouseResource(url=state.config.warehouse_url)
        if stored_day(warehouse, domain, run[4:]):
            return stored_page(warehouse, domain, run[4:], query)
    return memory_page(domain, state.runs.load(domain, run).rows, query)


# -- the page --------------------------------------------------------------------------------------


async def items_page(request: Request) -> Response:
    domain, run = request.path_params["domain"], request.path_params["run"]
    query = query_of(request, domain)
    found = await asyncio.to_thread(load_page, request.app.state.admin, domain, run, query)
    board = domains.get(domain).board()
    here = Rest(url(domain, "runs", run, "items"))
    chips = [f"<a class='chip{' on' if query.verdict is None else ''}' href='{e(here.href(**query.link(verdict=None, page=1)))}'>"
             f"전체 <b>{sum(found.counts.values())}</b></a>"]
    chips += [f"<a class='chip{' on' if query.verdict == v else ''}' href='{e(here.href(**query.link(verdict=v, page=1)))}'>"
              f"{label_chip(v, board.order)} <b>{n}</b></a>" for v, n in found.counts.items()]
    pages = max(1, -(-found.total // PAGE_SIZE))
    first = query.offset + 1 if found.rows else 0
    keep = "".join(f"<input type='hidden' name='{e(k)}' value='{e(v)}'>" for k, v in query.link(q=None, page=None).items())
    equal = " · ".join(f"<code>{e(c)}</code> = <code>{e(v)}</code> <a href='{e(here.href(**query.link(**{c: None}, page=1)))}'>풀기</a>"
                       for c, v in query.equal.items())
    source = ("야간 작업이 창고에 저장한 판정을 쪽마다 읽습니다." if found.source == "stored"
              else "이 화면이 원본 폴더에서 판정한 결과입니다.")
    item = lambda i: url(domain, "runs", run, "items", i)  # noqa: E731
    body = [
        f"<p class='lead'>판정 {found.total}건 가운데 {first}–{query.offset + len(found.rows)}번째 · {query.page} / {pages}쪽. {source}</p>",
        f"<nav class='chips' aria-label='판정별 건수'>{''.join(chips)}</nav>",
        f"<form class='find' method='get' action='{e(here.base)}'>{keep}<input type='search' name='q' value='{e(query.text)}' "
        "placeholder='id·요약으로 찾기' aria-label='찾기'> <button type='submit'>찾기</button></form>",
        f"<p class='filters'>조건 {equal}</p>" if equal else "",
        "<section id='items' class='item-list'>"
        + ("".join(item_html(board, r, query.offset + n, board.order, item) for n, r in enumerate(found.rows))
           or "<p class='empty'>조건에 맞는 판정이 없습니다.</p>") + "</section>",
        _pager(here, query, pages),
    ]
    title = f"{domain} 판정 목록"
    crumbs = domain_crumbs(domain, (run_title(run), url(domain, "runs", run, "board")), ("판정 목록", None))
    return page(request, title, "".join(body), crumbs)


def _pager(here: Rest, query: ItemQuery, pages: int) -> str:
    links = []
    if query.page > 1:
        links.append(f"<a rel='prev' href='{e(here.href(**query.link(page=query.page - 1)))}'>← 이전 쪽</a>")
    links.append(f"<span>{query.page} / {pages}</span>")
    if query.page < pages:
        links.append(f"<a rel='next' href='{e(here.href(**query.link(page=query.page + 1)))}'>다음 쪽 →</a>")
    return f"<nav class='pager' aria-label='쪽'>{' '.join(links)}</nav>"
