"""Generated input: deterministic, schema-valid, sized as asked, with the seed's hard cases,
and with exactly the listed malformed rows caught by the gates."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from evals.domains import get, names
from evals.generate import MALFORMED_FILE
from schemas import validator

ROWS = 1500
MAIN = {"persona": "turns", "live_pick": "live_chat", "retry": "interaction_events", "handoff": "chat_messages"}
VERDICT_KEY = {"persona": "persona_code", "live_pick": "verdict", "retry": "verdict", "handoff": "verdict"}

DOMAINS = names()


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("generated")
    for d in DOMAINS:
        get(d).generate(ROWS, 7, base / d)
    return {d: base / d for d in DOMAINS}


@pytest.fixture(scope="module")
def judged(folders):
    return {d: get(d).judge_dir(folders[d]) for d in DOMAINS}


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def malformed(folder: Path) -> dict[str, list[dict]]:
    return json.loads((folder / MALFORMED_FILE).read_text(encoding="utf-8"))


def valid_rows(folder: Path, dataset: str) -> list[dict]:
    bad = {m["line"] for m in malformed(folder)[dataset]}
    return [json.loads(t) for i, t in enumerate(lines(folder / f"{dataset}.jsonl"), start=1) if i not in bad]


def as_schema_sees(domain: str, dataset: str, row: dict) -> dict:
    """handoff trims its code columns before the schema (' ai ' meets the enum as 'ai')."""
    if domain != "handoff":
        return row
    from rules.common.cells import trim
    from rules.handoff.normalise import CODE_COLUMNS

    return {**row, **{f: trim(row[f]) for f in CODE_COLUMNS.get(dataset, ()) if isinstance(row.get(f), str)}}


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("domain", DOMAINS)
def test_same_seed_gives_same_bytes_and_another_seed_differs(domain, tmp_path, folders):
    get(domain).generate(ROWS, 7, tmp_path / "again")
    get(domain).generate(ROWS, 8, tmp_path / "other")
    assert folder_bytes(tmp_path / "again") == folder_bytes(folders[domain])
    other = folder_bytes(tmp_path / "other")
    assert other.keys() == folder_bytes(folders[domain]).keys()
    assert other[f"{MAIN[domain]}.jsonl"] != folder_bytes(folders[domain])[f"{MAIN[domain]}.jsonl"]


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("rows", [4, 100, 2345])
def test_main_dataset_has_the_rows_asked(domain, rows, tmp_path):
    info = get(domain).generate(rows, 1, tmp_path)
    assert len(lines(tmp_path / f"{MAIN[domain]}.jsonl")) == rows == info["rows"][MAIN[domain]]


@pytest.mark.parametrize("domain", DOMAINS)
def test_too_few_rows_for_the_malformed_ones_is_refused(domain, tmp_path):
    with pytest.raises(ValueError):
        get(domain).generate(3, 1, tmp_path)


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_dataset_has_three_malformed_rows_and_the_rest_validate(domain, folders):
    folder = folders[domain]
    listed = malformed(folder)
    assert sorted(listed) == sorted(p.stem for p in folder.glob("*.jsonl"))
    for dataset, rows in listed.items():
        assert len(rows) == 3, dataset
        check = validator(domain, dataset)
        for row in valid_rows(folder, dataset):
            assert check.is_valid(as_schema_sees(domain, dataset, row)), (dataset, row)


@pytest.mark.parametrize("domain", DOMAINS)
def test_gates_quarantine_exactly_the_listed_rows(domain, folders, judged):
    q = judged[domain].quarantine
    got = sorted(zip(q["dataset"], q["line"].astype(int), q["reason_code"]))
    want = sorted((ds, m["line"], m["reason_code"]) for ds, ms in malformed(folders[domain]).items() for m in ms)
    assert got == want
    assert all(r["reconciles"] for r in judged[domain].reconciliation.values())


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_verdict_occurs(domain, judged):
    from schemas import load_schema

    name = "pick" if domain == "live_pick" else "verdict"
    key = VERDICT_KEY[domain]
    enum = load_schema(domain, name)["properties"][key]["enum"]
    assert set(Counter(r[key] for r in judged[domain].rows)) == set(enum)


def test_live_pick_hard_cases(folders):
    chat = valid_rows(folders["live_pick"], "live_chat")
    assert any(r.get("topic_tags") is None for r in chat)
    assert {0, 100_000} <= {r["donation_amount"] for r in chat}


def test_persona_hard_cases(folders, judged):
    turns = valid_rows(folders["persona"], "turns")
    assert {0, 120} <= {t.get("stated_age") for t in turns}
    assert {None, "", "   ", "\n", "\u3000"} <= {t["reply_text"] for t in turns if not (t["reply_text"] or "").strip()}
    assert any(t["character_code_raw"] != t["character_code_raw"].strip() for t in turns)


def test_retry_hard_cases(judged):
    rows = judged["retry"].rows
    by_id = {r["event_id"]: r["verdict"] for r in rows}
    # The sample's exact, reworded and hop retries stay so in every copy.
    for event, verdict in {"EV-0102": "exact_retry", "EV-0202": "reworded_retry", "EV-0302": "surface_hop"}.items():
        copies = [v for k, v in by_id.items() if k.startswith(event + "~")]
        assert copies and set(copies) == {verdict}, event


def test_handoff_hard_cases(folders, judged):
    rooms = {r["room_id"]: r for r in judged["handoff"].rows}
    reentries = [r for r in rooms.values() if r["verdict"] == "같은 문의가 다시 들어옴"]
    assert any(r["reentry_hours"] == 24.0 for r in reentries)
    # a re-entry stays inside its copy: the next room carries the same suffix
    assert all(r["next_room_id"].split("~")[1] == r["room_id"].split("~")[1] for r in reentries)
    held = set(judged["handoff"].normalised.tables["held"]["room_id"].dropna())
    assert held and not held & rooms.keys()
    messages = lines(folders["handoff"] / "chat_messages.jsonl")
    missing = next(m for m in malformed(folders["handoff"])["chat_messages"] if m["reason_code"] == "missing_sent_at")
    assert json.loads(messages[missing["line"] - 1])["room_id"] in held
