"""Verdicts handed out in parts (for writing as they come) are the whole verdict frame, row for row."""

from __future__ import annotations

import numpy as np
import orjson
import pandas as pd
import pytest

from evals import domains
from rules.common.environment import SAMPLE_DIR
from rules.common.json_columns import Encoded
from rules.live_pick import engine as live_pick_engine
from rules.persona import engine as persona_engine
from rules.retry import engine as retry_engine
from tests.rules.test_columnar_gates import DOMAINS, _strict


def _joined(parts: list[pd.DataFrame], whole: pd.DataFrame) -> pd.DataFrame:
    """The parts as one frame, a column of JSON texts (`Encoded`) read back into values once each
    text is found to be orjson's of the whole frame's value, byte for byte."""
    frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0].copy()
    for name in frame.columns:
        encoded = Encoded.of(frame[name])
        if encoded is not None:
            assert encoded.texts.to_pylist() == [orjson.dumps(v) for v in whole[name]]
            values = np.empty(len(frame), dtype=object)
            values[:] = list(encoded)
            frame[name] = values
    return frame


@pytest.mark.parametrize("domain", DOMAINS)
def test_parts_join_to_the_whole_frame_on_the_sample(domain):
    spec = domains.get(domain).spec
    _, judged, config = spec.load(SAMPLE_DIR / domain)
    whole = spec.judge(judged.tables, config, "gold")
    parts = list(spec.judged_parts(judged.tables, config, "gold"))
    assert _strict(_joined(parts, whole)) == _strict(whole)
    assert [r for p in parts for r in spec.records(p)] == spec.records(whole)


ENGINES = {
    "retry": (retry_engine, ("interaction_events", "surface_catalog"), ()),
    "live_pick": (live_pick_engine, ("live_chat", "character_sheet", "viewer_relation"), ("gold",)),
    "persona": (persona_engine, ("turns", "profiles"), ()),
}
"""Each domain judged in parts: its engine, the tables it takes and the arguments after config."""


@pytest.mark.parametrize("rows", (1, 7, 1000))
@pytest.mark.parametrize("source", ("sample", "generated"))
@pytest.mark.parametrize("domain", ENGINES)
def test_parts_of_any_size_join_to_the_whole_frame(domain, source, rows, tmp_path):
    """Rows that depend on each other fall in different parts: a retry reason reads its session's
    other events (their surfaces, a matched event's text), a live line's rank and pick id are settled
    among its window's lines. Each is decided over every row before any part is explained."""
    engine, names, extra = ENGINES[domain]
    spec = domains.get(domain).spec
    folder = SAMPLE_DIR / domain if source == "sample" else tmp_path
    if source == "generated":
        domains.get(domain).generate(2_000, 4, tmp_path)
    _, judged, config = spec.load(folder)
    tables = [judged.tables[n] for n in names]
    whole = engine.judge(*tables, config, *extra)
    parts = list(engine.judge_parts(*tables, config, *extra, rows=rows))
    assert len(parts) == -(-len(whole) // rows)
    assert _strict(_joined(parts, whole)) == _strict(whole)


def test_live_pick_with_a_model_summary_writer_is_one_part(monkeypatch):
    spec = domains.get("live_pick").spec
    _, judged, config = spec.load(SAMPLE_DIR / "live_pick")
    calls = []
    monkeypatch.setattr("rules.live_pick.spec.judge", lambda *args: calls.append(args[2:]) or "whole")
    assert list(spec.judged_parts(judged.tables, config, "gold", summaries="openai")) == ["whole"]
    assert calls == [("gold", "openai")]


def test_retry_parts_of_no_events_are_one_empty_frame():
    spec = domains.get("retry").spec
    _, judged, config = spec.load(SAMPLE_DIR / "retry")
    events = judged.tables["interaction_events"].iloc[:0]
    (part,) = retry_engine.judge_parts(events, judged.tables["surface_catalog"], config)
    assert part.empty and list(part.columns) == retry_engine.OUTPUT_COLUMNS


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_command_writes_every_part_as_the_whole_would_be_written(domain, tmp_path, monkeypatch, capsys):
    from orchestration.cli import main
    from rules.common.jsonl import write_jsonl

    from rules.handoff import engine as handoff_engine

    for engine in (*(e for e, _, _ in ENGINES.values()), handoff_engine):
        monkeypatch.setattr(engine, "PART_ROWS", 3)
    expected = tmp_path / "whole.jsonl"
    write_jsonl(expected, domains.get(domain).judge_dir(SAMPLE_DIR / domain).rows)
    out = tmp_path / "parts.jsonl"
    assert main(["judge", domain, "--input", str(SAMPLE_DIR / domain), "--out", str(out)]) == 0
    assert out.read_bytes() == expected.read_bytes()
    n = len(expected.read_text(encoding="utf-8").splitlines())
    assert f"judged {n} rows" in capsys.readouterr().err


@pytest.mark.parametrize("rows", (1, 7, 1000))
@pytest.mark.parametrize("source, day", [("sample", None), ("sample", "2026-10-01"), ("sample", "2026-10-04"),
                                         ("held", None), ("held", "2026-10-01"), ("generated", None), ("generated", "2026-10-04")])
def test_handoff_parts_of_any_size_join_to_the_whole_frame(source, day, rows, tmp_path, monkeypatch):
    """Rooms are decided together (a customer's next room, the day's scope, held rooms added
    without messages), then each part's rooms explained on their own."""
    import shutil

    from rules.handoff import engine

    spec = domains.get("handoff").spec
    folder = SAMPLE_DIR / "handoff" if source == "sample" else tmp_path / "h"
    if source == "generated":
        domains.get("handoff").generate(2_000, 4, folder)
    if source == "held":  # a room whose one message has no time: held, added to the day without messages
        shutil.copytree(SAMPLE_DIR / "handoff", folder)
        with (folder / "chat_messages.jsonl").open("a", encoding="utf-8") as fh:
            fh.write('{"message_id": "M-999001", "room_id": "R-99001", "sender": "customer", "text": "상담사요"}\n')
        with (folder / "rooms.jsonl").open("a", encoding="utf-8") as fh:
            fh.write('{"room_id": "R-99001", "customer_id": "C-1001", "shop_name": "모아리빙", "closed_by": "ai"}\n')
        added = []
        held = engine._held_without_messages
        monkeypatch.setattr(engine, "_held_without_messages", lambda *a: added.append(len(held(*a))) or held(*a))
    _, judged, config = spec.load(folder, day)
    whole = engine.judge(judged.tables, config)
    if source == "held":  # a held room without messages has no day: the whole input's judge adds it
        assert added == [1 if day is None else 0]
    parts = [make() for make in engine.part_makers(judged.tables, config, rows=rows)]
    assert len(parts) == max(1, -(-len(whole) // rows))
    assert _strict(_joined(parts, whole)) == _strict(whole)
    assert [r for p in parts for r in spec.records(p)] == spec.records(whole)


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_gated_tables_are_not_kept_while_the_parts_are_written(domain, monkeypatch):
    import gc
    import weakref

    spec = domains.get(domain).spec
    loaded = []
    load = type(spec).load

    def load_and_watch(self, *args, **kwargs):
        norm, judged, config = load(self, *args, **kwargs)
        loaded.append(weakref.ref(judged))
        return norm, judged, config

    monkeypatch.setattr(type(spec), "load", load_and_watch)
    parts, judged = domains.get(domain).judge_dir_parts(SAMPLE_DIR / domain)
    gc.collect()
    assert judged.normalised is None and loaded[0]() is None
    assert judged.reconciliation and all(part() for part in parts)
