"""A character sheet's tuning after a broadcast: suggestions, applied or rejected, and its versions."""

from __future__ import annotations

import sys

from orchestration.commands.usage import EXIT_OK, UsageError, judged_input, live_engine


def cmd_suggest(args) -> int:
    import time

    from live import sheets
    from live.view import suggestions_markdown
    from rules.live_pick.config import load_config

    engine, config = live_engine(), load_config()
    known = sheets.closed_broadcasts(engine, config.timezone)
    if not args.broadcast:
        if not known:
            print("no closed broadcast yet (close one with `verdicts live-close CHARACTER_ID`)", file=sys.stderr)
        for b in known:
            n = len(sheets.list_suggestions(engine, b["broadcast_id"]))
            print(f"{b['broadcast_id']}  {b['answered']} answered  {n} suggestions")
        return EXIT_OK
    broadcast = next((b for b in known if b["broadcast_id"] == args.broadcast), None)
    if broadcast is None:
        listed = ", ".join(b["broadcast_id"] for b in known[:10]) or "none yet"
        raise UsageError(f"no closed broadcast '{args.broadcast}' (closed: {listed})")
    sheets.suggest_broadcast(engine, broadcast, config, time.time_ns())
    print(suggestions_markdown(engine, args.broadcast))
    return EXIT_OK


def _decision(run, *args):
    from live.sheets import SuggestionError

    try:
        return run(*args)
    except SuggestionError as exc:
        raise UsageError(str(exc)) from exc


def cmd_apply(args) -> int:
    import time

    from live import sheets

    done = _decision(sheets.apply_suggestion, live_engine(), args.suggestion_id.strip(), time.time_ns(), args.by)
    print(done.message)
    return EXIT_OK


def cmd_reject(args) -> int:
    import time

    from live import sheets

    s = _decision(sheets.reject_suggestion, live_engine(), args.suggestion_id.strip(), args.reason, time.time_ns(), args.by)
    print(f"{s['suggestion_id']} rejected: {s['reason']}" + ("" if s["changed"] else " (it was rejected already)"))
    return EXIT_OK


def cmd_sheet_history(args) -> int:
    import time

    from rules.common import environment
    from live import sheets
    from live.view import history_markdown
    from rules.live_pick.normalise import load_dir
    from rules.live_pick.config import load_config

    engine = live_engine()
    if not sheets.history(engine, args.character_id):  # nothing judged yet: the sheet file is version 1
        folder = environment.raw_dir() / "live_pick"
        sheet = judged_input(None, load_dir, folder, load_config()).sheet
        sheets.seed_versions(engine, sheet, folder / "character_sheet.jsonl", time.time_ns())
    if not sheets.history(engine, args.character_id):
        raise UsageError(f"no character '{args.character_id}' in the sheet versions or the sheet file")
    print(history_markdown(engine, args.character_id))
    return EXIT_OK
