"""Shared pieces of the board tests: pages built from the sample data, a reader for their
markup, and log bodies that must show as text and never run."""

from __future__ import annotations

import copy
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path

from evals import domains

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "seeds"

KNOWN = {
    # One item per domain from the seed's own examples, and what its expanded row must show:
    # (evidence rows as (origin, field, value), row fields as name → value).
    "live_pick": ("MSG-20260908-1401", [("character_sheet", "reply_cooldown_sec", "180"),
                                        ("viewer_relation", "last_replied_at", "2026-09-08T21:09:40")],
                  {"cooldown_elapsed_sec": "263", "rank_in_window": "1", "pick_id": "PICK-1401"}),
    "persona": ("TN-9002", [("turn", "stated_job", "바리스타"), ("profile", "job", "플로리스트")], {"profile_no": "CP-001"}),
    "retry": ("EV-0102", [("interaction_events", "input_text", "이거 요약해줘!")], {"matched_event_id": "EV-0101"}),
    "handoff": ("R-55102", [("handoff_phrases", "trigger_phrase", "직원 연결")], {"ai_after_trigger": "3"}),
}

PAYLOADS = (
    '<script>window.__pwned=1;console.log("pwned")</script>',
    '"><img src=x onerror="window.__pwned=2;alert(2)">',
)


def available(name: str) -> bool:
    return name in domains.names()


@lru_cache(maxsize=None)
def sample_parts(name: str, golden: bool = False):
    """(Domain, judged rows, report, extras) for the domain's sample folder, as `board_from_dir` builds them."""
    domain = domains.get(name)
    folder = SEEDS / name
    judged = domain.judge_dir(folder)
    checks, gated = domain.check_dir(folder, judged.rows)
    labels = domain.load_golden(folder / "golden.jsonl") if golden else None
    report = domain.report(judged.rows, labels, checks, gated.quarantine, gated.reconciliation, scope=f"{name} · sample data",
                           judged=gated.normalised)
    extra = domain.board().gather(domain, folder, judged)
    return domain, judged.rows, report, extra


def board_spec(name: str):
    """The domain's board layout."""
    return domains.get(name).board()


def sample_board(name: str, golden: bool = False, **changes):
    from evals.board import Board

    _, rows, report, extra = sample_parts(name, golden)
    return Board(name, copy.deepcopy(rows), report, board_spec(name), sample=True, **{**extra, **changes})


def with_payloads(rows: list[dict], spec) -> list[dict]:
    """Every row's summary and every evidence value replaced by a log body that tries to run."""
    out = copy.deepcopy(rows)
    for i, row in enumerate(out):
        body = PAYLOADS[i % len(PAYLOADS)]
        row[spec.summary_field] = f"요약 {body}"
        for ev in row.get("evidence") or []:
            ev["value"] = body
    return out


class Page(HTMLParser):
    """The board as data: items with their container, summary, fields and evidence, and the
    text of every element carrying an id."""

    TRACKED = {"details", "section", "summary", "table", "tr", "td", "th", "dt", "dd", "div", "h2", "h3", "p", "li", "ol", "ul"}

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.items: list[dict] = []
        self.texts: dict[str, str] = {}
        self.ids_in_order: list[str] = []
        self.stack: list[tuple[str, dict]] = []
        self.scripts = 0
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._field: list | None = None
        self.feed(page)
        self.close()

    def _item(self) -> dict | None:
        for tag, a in reversed(self.stack):
            if tag == "details" and "item" in a.get("class", "").split():
                return a["_item"]
        return None

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if tag == "script":
            self.scripts += 1
        if tag not in self.TRACKED:
            return
        if "id" in a:
            self.texts.setdefault(a["id"], "")
            self.ids_in_order.append(a["id"])
        if tag == "details" and "item" in a.get("class", "").split():
            container = next((x.get("id") for _, x in reversed(self.stack) if x.get("id")), None)
            a["_item"] = {"id": a.get("data-id"), "verdict": a.get("data-verdict"), "anchor": a.get("id"), "container": container,
                          "summary": "", "fields": {}, "evidence": [], "open": "open" in a}
            self.items.append(a["_item"])
        item = self._item()
        in_evidence = any(t == "table" and "evidence" in x.get("class", "").split() for t, x in self.stack)
        if tag == "tr" and in_evidence:
            self._row = []
        if tag == "td" and self._row is not None:
            self._cell = []
        if tag in ("dt", "dd") and item is not None:
            self._field = []
        self.stack.append((tag, a))

    def handle_endtag(self, tag):
        if tag not in self.TRACKED or not self.stack:
            return
        while self.stack:
            open_tag, a = self.stack.pop()
            if open_tag == tag:
                break
        item = self._item() or (a.get("_item") if tag == "details" else None)
        if tag == "td" and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._row and item is not None:
                item["evidence"].append(tuple(self._row))
            self._row = None
        elif tag == "dt" and self._field is not None and item is not None:
            item["_name"] = "".join(self._field).strip()
            self._field = None
        elif tag == "dd" and self._field is not None and item is not None:
            item["fields"][item.pop("_name", "")] = "".join(self._field).strip()
            self._field = None

    def handle_data(self, data):
        for tag, a in self.stack:
            if "id" in a:
                self.texts[a["id"]] += data
        if self._cell is not None:
            self._cell.append(data)
        if self._field is not None:
            self._field.append(data)
        if any(t == "summary" for t, _ in self.stack):
            item = self._item()
            if item is not None and not any(t == "table" for t, _ in self.stack):
                item["summary"] += data

    def item(self, id_: str) -> dict:
        found = [i for i in self.items if i["id"] == id_]
        assert len(found) == 1, f"{id_}: {len(found)} items"
        return found[0]
