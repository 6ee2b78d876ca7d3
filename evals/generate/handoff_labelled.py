"""The handoff evaluation rooms: 165 conversations with the manager's labels, appended to the sample.

Together with the sample's 35 hand-labelled rooms they make the 200 labelled conversations the
seed's evaluation runner names. Rooms open on 2026-10-04, every five minutes from 08:00 (no day
of the hand-written part reads that day; the persona sample uses it too, so the demo runs no
extra nightly day); re-entries and one room across midnight reach 10-05.

Every room is built from a scenario that says what it is meant to show: which message asks for
a human and which phrase it should match, which AI answers lack a valid citation, when the
counsellor answers, when the customer comes back. From that the scenario states the room's
status, verdict and derived fields (`Room.expected`) without running the rules, so the tests
hold both the engine and the row-by-row reference to an oracle written another way. The label
is the scenario's verdict (`목록에 올리지 않음` for rooms no rule lists) except in the four rooms
where the (synthetic) manager judges otherwise; `note` says why.

Hard cases are mixed in at random places: phrases typed without or with extra spaces, with
ideographic spaces or as decomposed jamo, two phrases in one message, a phrase said in
negation; citations null, empty, unknown, of a malformed article, in another case, padded;
waits one second over the limit and exactly on it; re-entries at 24 h, 24 h 17 s (rounds to
24.00) and 24 h 18 s (rounds to 24.01); request times written in UTC; `closed_by` padded.

The conversations' building blocks are in `handoff_talk`, the scenarios in `handoff_scenarios`;
here the rooms are put together and written.

    python -m evals.generate.handoff_labelled          # rewrite the generated part of the sample
    python -m evals.generate.handoff_labelled --check  # exit 1 when the sample differs from it
"""

from __future__ import annotations

import argparse
import random
import sys
from datetime import datetime, timedelta
from pathlib import Path

from evals.generate import dumps
from evals.generate.handoff_talk import CUSTOMER_PREFIX, DAY, MESSAGE_PREFIX, ROOMS, ROOM_PREFIX, Room, SAMPLE, SEED, SEOUL, Scenario, Talk
from evals.generate.handoff_scenarios import REENTRY_GAPS, RETURN_GAPS, SCENARIOS, ai_ended, coupon_question, different_topic_return, reentry_first, second_room



# ---- the whole set ------------------------------------------------------------------------------

def build(seed: str = SEED) -> list[Room]:
    """Every generated room, in room-id order, with message ids assigned."""
    rng = random.Random(seed)
    # (scenario, its arguments, seconds until the customer's next room or None, what that room holds)
    plan: list[tuple[Scenario, dict, float | None, Scenario]] = []
    for count, scenario, kwargs in SCENARIOS:
        plan += [(scenario, kwargs, None, second_room)] * count
    plan += [(reentry_first, {}, g, second_room) for g in REENTRY_GAPS * 2]
    plan += [(reentry_first, {"uncited_too": True}, g, second_room) for g in REENTRY_GAPS[:3]]
    plan += [(ai_ended, {}, g, second_room) for g in RETURN_GAPS]
    plan.append((different_topic_return, {}, 3 * 3600, coupon_question))
    rng.shuffle(plan)
    midnight = next(i for i, p in enumerate(plan) if p[0] is ai_ended and p[2] is None)

    rooms: list[Room] = []
    seq = iter(range(1, 10_000))
    first = datetime.fromisoformat(f"{DAY}T08:00:00").replace(tzinfo=SEOUL)
    for i, (scenario, kwargs, gap, second) in enumerate(plan):
        start = first + timedelta(minutes=5 * i)
        if i == midnight:   # a room that opens before midnight and closes after it
            start = datetime.fromisoformat(f"{DAY}T23:58:00").replace(tzinfo=SEOUL)
        room = _room(next(seq), f"{CUSTOMER_PREFIX}{i + 1:03d}", Talk(rng, start), scenario, kwargs)
        rooms.append(room)
        if gap is not None:
            nxt = _room(next(seq), room.customer_id, Talk(rng, room.closed_at + timedelta(seconds=gap)), second, {})
            room.next_room = nxt
            rooms.append(nxt)
    if len(rooms) != ROOMS:
        raise AssertionError(f"the plan makes {len(rooms)} rooms, not {ROOMS}")
    return rooms


def _room(n: int, customer: str, talk: Talk, scenario: Scenario, kwargs: dict) -> Room:
    closed_by, verdict, extra = scenario(talk, **kwargs)
    room = Room(f"{ROOM_PREFIX}{n:03d}", customer, closed_by, talk.msgs, verdict, **extra)
    for k, m in enumerate(room.msgs):
        m.message_id = f"{MESSAGE_PREFIX}{n:03d}{k}"
    return room


# ---- writing into the sample --------------------------------------------------------------------

def generated(row: dict | None, dataset: str) -> bool:
    key, prefix = ("message_id", MESSAGE_PREFIX) if dataset == "chat_messages" else ("room_id", ROOM_PREFIX)
    return isinstance(row, dict) and str(row.get(key, "")).startswith(prefix)


def contents(rooms: list[Room], folder: Path = SAMPLE) -> dict[str, str]:
    """Each file's text: its hand-written lines, then the generated ones."""
    from rules.common.bounded_json import parse_object

    msgs = sorted(((m, r) for r in rooms for m in r.msgs), key=lambda p: (p[0].at, p[0].message_id))
    new = {
        "chat_messages": [dumps({"message_id": m.message_id, "room_id": r.room_id, "sender": m.sender, "text": m.text,
                                 "sent_at": m.written, "cited_article_id": m.cited}) for m, r in msgs],
        "rooms": [dumps(r.row()) for r in rooms],
        "golden": [dumps(r.golden()) for r in rooms],
    }
    out = {}
    for name, lines in new.items():
        path = folder / f"{name}.jsonl"
        old = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        hand = [t for t in old if not generated(parse_object(t), name)]
        out[name] = "\n".join(hand + lines) + "\n"
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evals.generate.handoff_labelled", description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true", help="compare with the sample instead of writing; exit 1 on a difference")
    p.add_argument("--folder", type=Path, default=SAMPLE, help="the handoff sample folder (default seeds/handoff)")
    args = p.parse_args(argv)
    files = contents(build(), args.folder)
    stale = [n for n, text in files.items() if not (args.folder / f"{n}.jsonl").exists()
             or (args.folder / f"{n}.jsonl").read_text(encoding="utf-8") != text]
    if args.check:
        for n in stale:
            print(f"{args.folder / n}.jsonl differs from what the generator writes", file=sys.stderr)
        return 1 if stale else 0
    for n in stale:
        (args.folder / f"{n}.jsonl").write_text(files[n], encoding="utf-8")
    print(f"{ROOMS} rooms; rewrote {', '.join(stale) or 'nothing'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
