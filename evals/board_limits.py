"""How much of a large run a board shows, and what it says about the rest.

A board shows the first rows of each group and counts them all; a page that leaves rows off says so
at the top and under each cut list, naming where the rest is listed (`Rest`: the admin pages' item
list of the run, page by page)."""

from __future__ import annotations

import contextvars
import html
from dataclasses import dataclass
from urllib.parse import urlencode

MAX_ITEMS_PER_GROUP = 400
"""Rows shown per verdict group or quarantine table; the rest are counted, and listed page by page
on the admin pages (`Rest`). With a bounded number of groups the page stays bounded whatever the rows."""
MAX_WINDOWS = 40
"""live_pick: broadcast windows shown; the rest are counted."""
MAX_PER_WINDOW_REASON = 10
"""live_pick: lines shown per reason within a window (the picks are at most the window's picks)."""
QUARANTINE_TABLE = "격리 표(격리 파일, 창고의 quarantine 테이블)"
REPORT_FILE = "리포트 파일(report.json)"

REST: contextvars.ContextVar["Rest | None"] = contextvars.ContextVar("rest", default=None)
"""Set while a page renders: where the rows left off the page are listed."""


def e(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


@dataclass(frozen=True)
class Rest:
    """Where every item of a run is listed page by page, filterable (the admin pages' item list)."""

    base: str
    """URL or path of the list (`/admin/<domain>/runs/<run>/items`), without a query."""
    link: bool = True
    """A link the page can follow; False: a path to open on `verdicts serve` (a file has no server)."""

    def href(self, **query) -> str:
        q = urlencode({k: v for k, v in query.items() if v is not None})
        return self.base + (f"?{q}" if q else "")

    def html(self, text: str, **query) -> str:
        if self.link:
            return f"<a href='{e(self.href(**query))}'>{e(text)}</a>"
        return f"{e(text)} (<code>verdicts serve</code> 의 <code>{e(self.href(**query))}</code>)"


def overflow_note(hidden: int, elsewhere: str = "", **query) -> str:
    """The sentence under a cut list: how many rows are left off and where they are (`query`: the
    item list's filter that holds them, e.g. `verdict=…`; `elsewhere`: where rows the item list does
    not hold are, such as quarantined lines)."""
    if hidden <= 0:
        return ""
    rest = REST.get()
    if elsewhere:
        where = f" 전체는 {e(elsewhere)}에 있습니다."
    elif rest:
        where = " 전체는 " + rest.html("관리 화면의 항목 목록", **query) + "에서 쪽으로 나눠 볼 수 있습니다."
    else:
        where = " 전체는 판정 표에 있습니다."
    return f"<p class='more'>표시 한도를 넘은 {hidden}건은 이 화면에 싣지 않았습니다.{where}</p>"


def cut_notice(total: int, shown: int) -> str:
    """Said at the top of a page that holds only part of its items (a large day's summary)."""
    if shown >= total:
        return ""
    rest = REST.get()
    where = ("나머지는 " + rest.html("관리 화면의 항목 목록", page=1) + "에서 판정·id·요약으로 걸러 쪽마다 볼 수 있습니다.") if rest \
        else "나머지는 판정 표(판정 파일, 창고의 verdicts 테이블)에 있습니다."
    return (f"<p class='sample cut' role='note'><b>요약 화면</b> 판정 {total}건 가운데 {shown}건만 실었습니다 "
            f"(묶음마다 앞의 몇 건). 묶음의 건수는 모두 셌습니다. {where}</p>")
