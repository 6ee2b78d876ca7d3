"""The reviewers' commands: a manual check's sample and decisions, and a domain's board page."""

from __future__ import annotations

import sys

from orchestration.commands.usage import EXIT_OK, UsageError, domain_named, judged_input, load_golden, live_engine
from rules.common.atomic import write_text


def cmd_review(args) -> int:
    """The same samples and decision store as the admin pages' manual checks, for a team of reviewers."""
    from evals.manual_checks import DECISIONS, check_by_key, checks_of, item_review, queue_markdown, sample
    from evals.review_team import load_config, pair_text, summarise
    from assets.resources import decisions
    from rules.common.jsonl import write_jsonl

    domain = domain_named(args.domain)
    keys = [c.key for c in checks_of(args.domain)]
    key = args.check or ("persona.1" if args.domain == "persona" else None)
    if key is None or key not in keys:
        raise UsageError(f"--check: choose one of {', '.join(keys) or '(none: the seed of this domain lists no manual check)'}")
    check = check_by_key(key)
    engine = live_engine()
    judged = judged_input(domain, domain.judge_dir, args.input)
    tables = dict(judged.normalised.tables)
    ids = sample(check, judged.rows, tables)
    if args.decide:
        try:
            reviewer = decisions.reviewer_name(args.reviewer)
        except ValueError:
            raise UsageError("--decide needs --reviewer NAME (or $USER)") from None
        for item in args.decide:
            item_id, _, decision = item.partition("=")
            if decision not in DECISIONS:
                raise UsageError(f"--decide {item}: write ID=agree, ID=disagree or ID=note")
            if item_id not in ids:
                raise UsageError(f"--decide {item}: {item_id} is not in the sample of {key}")
            decisions.record(engine, domain=args.domain, check_key=key, item_id=item_id, decision=decision, note=args.note,
                             scope=f"{args.domain} · {args.input}", reviewer=reviewer)
    stored = decisions.read(engine, args.domain).get(key, {})
    from evals.domains import get

    spec = get(args.domain).board()
    by_id = {r[spec.id_field]: r for r in judged.rows if isinstance(r.get(spec.id_field), str)}
    if args.domain == "persona" and key == "persona.1":
        queue, candidates, size = judged_input(domain, domain.review, args.input)
        reviews = [item_review(stored.get(t, {})) for t in queue["turn_no"]]
        for column in ("reviewer_decision", "reviewer_note", "decisions"):
            queue[column] = [r[column] for r in reviews]
        rows = queue.to_dict("records")
    else:
        candidates, size = len(set(check.candidates(judged.rows, tables))), check.size
        rows = [{"check": key, spec.id_field: i, spec.verdict_key: by_id[i].get(spec.verdict_key),
                 "summary": by_id[i].get(spec.summary_field), **item_review(stored.get(i, {}))} for i in ids]
    if args.out:
        if args.out.suffix.lower() == ".md":
            if args.domain == "persona" and key == "persona.1":
                from evals.persona import render_review_queue

                text = render_review_queue(queue, candidates, size)
            else:
                text = queue_markdown(check, rows, spec.id_field, spec.verdict_key, candidates)
            write_text(args.out, text)
        else:
            write_jsonl(args.out, rows)
    if args.export:
        exported = decisions.export_rows(args.domain, key, ids, stored, by_id, spec.verdict_key, spec.summary_field)
        suffix = args.export.suffix.lower()
        if suffix not in (".csv", ".json"):
            raise UsageError(f"--export {args.export}: choose a .csv or .json file name")
        write_text(args.export, decisions.export_csv(exported) if suffix == ".csv" else decisions.export_json(exported))
    team = summarise(ids, stored, load_config().per_item(key))
    print(f"{key}: {len(ids)} of {candidates} candidate items" + (f" → {args.out}" if args.out else "")
          + f"; decided {team.decided}, agreed {team.agreed}, notes only {team.notes_only}, split {len(team.split)}; "
          + f"{team.complete} of {len(ids)} reviewed by {team.per_item} or more", file=sys.stderr)
    for reviewer, n in sorted(team.reviewers.items()):
        print(f"  {reviewer}: {n['votes']} decided, {n['notes']} notes", file=sys.stderr)
    for p in team.pairs:
        print(f"  {pair_text(p)}", file=sys.stderr)
    return EXIT_OK


def cmd_board(args) -> int:
    from evals.board import board_from_dir
    from rules.common.environment import SAMPLE_DIR

    domain = domain_named(args.domain)
    if args.out.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"{args.out}: the board is an HTML page; choose a .html file name")
    if args.live:
        if args.domain != "live_pick":
            raise UsageError("--live is for live_pick")
        from live import store
        from live.view import live_board_html

        engine = live_engine()
        store.ensure_tables(engine)
        write_text(args.out, live_board_html(engine))
        print(f"live board → {args.out}", file=sys.stderr)
        return EXIT_OK
    sample = args.input is None
    input_dir = SAMPLE_DIR / args.domain if sample else args.input
    golden = None if args.golden is None else load_golden(domain, args.golden)
    page = judged_input(domain, board_from_dir, domain, input_dir, golden, sample=sample)
    write_text(args.out, page)
    print(f"board → {args.out}" + (f" (sample data: {input_dir})" if sample else ""), file=sys.stderr)
    return EXIT_OK
