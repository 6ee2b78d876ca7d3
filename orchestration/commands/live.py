"""The live commands beside `serve`: play a recorded chat in, listen to a platform, close a broadcast."""

from __future__ import annotations

import os
from pathlib import Path

from orchestration.commands.usage import EXIT_OK, EXIT_CHECKS_FAILED, UsageError, live_engine


def cmd_replay(args) -> int:
    from live.replay import replay
    from rules.live_pick.config import load_config

    if not args.file.is_file():
        raise UsageError(f"{args.file}: file not found")
    if (args.rate is not None and args.rate <= 0) or (args.speed is not None and args.speed <= 0):
        raise UsageError("--rate and --speed must be positive")
    original = args.pace == "original"
    if original and (args.rate is not None or args.shift_to_now or not args.to):
        raise UsageError("--pace original keeps the recorded spacing and sent_at: give --to ws://…/ws/ingest of a service "
                         "started with `--clock event`, and neither --rate nor --shift-to-now")
    if not original and (args.rate is None) == (args.speed is None):
        raise UsageError("give one of --rate LINES_PER_SEC, --speed X or --pace original")
    speed = args.speed or 1.0 if original else args.speed
    if args.to:
        from live.ingest_client import IngestClient, figures_line, service_status
        from web.config import TOKEN_ENV

        if not args.to.startswith(("ws://", "wss://")):
            raise UsageError(f"--to {args.to}: expected ws://HOST:PORT/ws/ingest")
        token = os.environ.get(TOKEN_ENV) or None
        if original:
            status = service_status(args.to, token)
            if status is not None and status.get("clock") != "event":
                raise UsageError(f"--pace original: the service at {args.to} closes windows on the wall clock; start it with "
                                 "`verdicts serve --clock event` (or VERDICTS_LIVE_CLOCK=event) to judge the recording in its own time")
        try:
            client = IngestClient(args.to, token)
        except Exception as exc:  # noqa: BLE001 - refused or unreachable: say which and why
            raise UsageError(f"--to {args.to}: cannot connect ({exc})") from exc
        try:
            replay(None, args.file, load_config(), rate=args.rate, speed=speed, shift_to_now=args.shift_to_now,
                   send=client.send)
            durable = client.wait_acked()
        finally:
            client.close()
        c = client.summary()
        print(f"replay: {c['sent']} lines sent, {c['acknowledged']} acknowledged stored "
              f"({'all' if durable and c['acknowledged'] == c['sent'] else 'NOT all'}), {c['quarantined']} quarantined, "
              f"{c['resent']} sent again ({c['errors']} frames not stored, {c['reconnects']} reconnects)")
        status = service_status(args.to, os.environ.get(TOKEN_ENV) or None)
        if status is not None:  # the store's own figures, as the console and /live/status show them
            for character in sorted(_characters_in(args.file) & set(status.get("broadcasts", {}))):
                print("replay: the store, " + figures_line(f"{character}'s broadcast", status["broadcasts"][character]))
            print("replay: the store, " + figures_line("in total", status))
        return EXIT_OK if durable and c["acknowledged"] == c["sent"] else EXIT_CHECKS_FAILED
    replay(live_engine(), args.file, load_config(), rate=args.rate, speed=args.speed, shift_to_now=args.shift_to_now)
    return EXIT_OK


def _characters_in(path: Path) -> set[str]:
    """The character ids a recorded chat file's readable lines name."""
    from rules.common.bounded_json import parse_object

    out = set()
    for text in path.read_text(encoding="utf-8", errors="replace").split("\n"):
        obj = parse_object(text) if text.strip() else None
        if obj is not None and isinstance(obj.get("character_id"), str):
            out.add(obj["character_id"].strip())
    return out


def cmd_listen(args) -> int:
    from live.feeds.listen import listen, read_credentials
    from web.config import TOKEN_ENV
    from rules.common.config import ConfigError
    from rules.live_pick.config import load_config

    if not args.to.startswith(("ws://", "wss://")):
        raise UsageError(f"--to {args.to}: expected ws://HOST:PORT/ws/ingest")
    try:
        credentials = read_credentials(args.credentials)
        return listen(args.platform, args.channel, args.character.strip(), args.to, os.environ.get(TOKEN_ENV) or None,
                      endpoint=args.endpoint, credentials=credentials, rates_path=str(args.rates) if args.rates else None,
                      tz=load_config().timezone)
    except (ValueError, ConfigError) as exc:
        raise UsageError(str(exc)) from None
    except RuntimeError as exc:  # a platform's refusal before anything was sent (missing credentials, unknown channel)
        raise UsageError(f"listen {args.platform}: {exc}") from None
    except OSError as exc:
        raise UsageError(f"--to {args.to}: cannot connect ({exc})") from None


def sheet_character(engine, character_id: str, folder: Path | None) -> str:
    """The character id as given (spaces around it dropped), once a character sheet of the live
    service's input names it; a UsageError otherwise."""
    import time

    from live.judge import references
    from rules.common.jsonl import DatasetError
    from rules.live_pick.config import load_config
    from web.config import WebConfig
    from web.live.windows import References

    config = load_config()
    folder = Path(folder or WebConfig().input_dir)
    character = character_id.strip()
    try:
        known = References.of((), references(folder, engine, config, time.time_ns()), config).characters
    except DatasetError as exc:
        raise UsageError(f"--input {folder}: {exc}") from None
    if character not in known:
        raise UsageError(f"{character}: no character sheet in {folder} names it")
    return character


def cmd_live_start(args) -> int:
    import time

    from live import store
    from live.on_air import start_broadcast
    from web.live.broadcasts import start_lines
    from rules.live_pick.config import load_config

    config = load_config()
    engine = live_engine()
    store.ensure_tables(engine)
    character = sheet_character(engine, args.character_id, args.input)
    done = start_broadcast(engine, character, config, time.time_ns, args.close_previous, by="command line")
    if not done["started"]:
        raise UsageError(start_lines(done, config.timezone)[0])
    for line in start_lines(done, config.timezone):
        print(line)
    return EXIT_OK


def cmd_live_close(args) -> int:
    import time

    from live import store
    from live.judge import close_broadcast
    from web.live.broadcasts import close_lines
    from rules.live_pick.config import load_config

    engine = live_engine()
    store.ensure_tables(engine)
    character = sheet_character(engine, args.character_id, args.input)
    done = close_broadcast(engine, character, load_config(), time.time_ns)
    for line in close_lines(done):
        print(line)
    return EXIT_OK


def cmd_live_reseed(args) -> int:
    """The viewer relations the live service judges with, replaced by those of `--input` (through the
    same gates as the first seeding). What closed broadcasts wrote back is dropped with them."""
    import time

    from live import store
    from live.judge import seed_relations
    from web.config import WebConfig
    from rules.common.jsonl import dataset_path, read_raw
    from rules.live_pick.config import load_config

    folder = args.input or WebConfig().input_dir
    if not dataset_path(folder, "viewer_relation").is_file():
        raise UsageError(f"--input {folder}: no viewer_relation.jsonl there")
    engine = live_engine()
    store.ensure_tables(engine)
    sheet = read_raw(dataset_path(folder, "character_sheet"), "character_sheet")
    n = store.seed_viewer_state(engine, seed_relations(Path(folder), sheet, load_config()), time.time_ns(), replace=True)
    print(f"viewer relations reseeded from {dataset_path(folder, 'viewer_relation')}: {n} viewers")
    return EXIT_OK
