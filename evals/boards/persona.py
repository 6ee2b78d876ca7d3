"""persona on the board: the prompt-version comparison and the review queue after the items."""

from __future__ import annotations

import pandas as pd

from rules.common.cells import trim
from pathlib import Path

from evals.board import Board, BoardSpec, e
from evals.manual_checks import DECISION_WORDS
from evals.trace import Transcript, TraceSpec, rows_where, shown_rows
from rules.persona.spec import SPEC



def gather(domain, input_dir: Path, judged) -> dict:
    """The two newest prompt versions compared (as the comparison asset picks them) and the review queue."""
    extra: dict = {}
    turns = judged.normalised.tables["turns"]
    versions = sorted({v for v in turns["prompt_ver"].dropna() if isinstance(v, str)})  # pandas' unique stops at a NUL
    if len(versions) >= 2:
        try:
            extra["comparison"] = domain.compare(input_dir, versions[-2], versions[-1])
        except ValueError as exc:
            extra["comparison_note"] = str(exc)
    if domain.review is not None:
        queue, candidates, size = domain.review(input_dir)
        extra["review"] = (queue.to_dict("records"), candidates, size)
    return extra


def sections(board: Board) -> str:
    out = []
    c = board.comparison
    if c is not None:
        def pct(x):
            return "—" if x is None else f"{x * 100:+.1f}%p"

        interval = (f", 95% Newcombe 구간 [{pct(c.difference_interval[0])}, {pct(c.difference_interval[1])}]"
                    if c.difference_interval else "")
        moved = "".join(f"<li>{e(k)}: {v}</li>" for k, v in c.moved.items()) or "<li>없음</li>"
        out.append(
            f"<section id='comparison'><h2>프롬프트 버전 비교 <code>{e(c.a)}</code> → <code>{e(c.b)}</code></h2>"
            f"<p class='scope'>범위 {e(c.scope)}</p>"
            "<table><thead><tr><th>버전</th><th>어긋난 턴 / 판정한 턴</th><th>95% Wilson</th><th>판정에서 뺀 턴</th></tr></thead><tbody>"
            + "".join(f"<tr><td><code>{e(v)}</code></td><td>{e(r.format())}</td><td>{e(r.format_interval())}</td><td>{c.excluded.get(v, 0)}</td></tr>"
                      for v, r in ((c.a, c.rate_a), (c.b, c.rate_b)))
            + "</tbody></table>"
            + (f"<p id='paired'><b>짝지은 차이 ({e(c.b)} − {e(c.a)}) {pct(c.paired.difference)}, 95% 구간 "
               f"[{pct(c.paired.interval[0])}, {pct(c.paired.interval[1])}]</b> · 짝 {c.paired.pairs}쌍 · 불일치 짝: {e(c.a)}에서만 어긋남 "
               f"{c.paired.only_a} · {e(c.b)}에서만 어긋남 {c.paired.only_b}</p><p class='note'>{e(c.paired.how())}</p>" if c.paired else "")
            + f"<p>두 비율의 차이 ({e(c.b)} − {e(c.a)}) {pct(c.difference)}{interval}"
            + (" (독립 표본으로 본 구간)" if c.paired else "") + "</p>"
            f"<p>검정 {e(c.test)}, p = {'—' if c.p_value is None else f'{c.p_value:.4g}'}</p>"
            f"<h3>움직인 판정 코드 (짝지은 시나리오)</h3><ul>{moved}</ul>"
            "<p class='note'>두 버전의 대화를 같은 팀이 만들었으므로 차이는 비교 절차가 동작함을 보일 뿐 프롬프트 품질을 증명하지 못합니다.</p></section>"
        )
    elif board.comparison_note:
        out.append(f"<section id='comparison'><h2>프롬프트 버전 비교</h2><p class='empty'>{e(board.comparison_note)}</p></section>")
    if board.review is not None:
        queue, candidates, size = board.review
        rows = "".join(
            f"<tr><td><code>{e(r.get('turn_no'))}</code></td><td>{e(r.get('cue_phrase'))}</td><td>{e(r.get('user_text'))}</td>"
            f"<td>{e(r.get('reply_text'))}</td><td>{e(r.get('persona_code'))}</td>"
            f"<td>{e(DECISION_WORDS.get(r.get('reviewer_decision'), ''))}{(' · ' + e(r['reviewer_note'])) if r.get('reviewer_note') else ''}"
            + "".join(f"<div class='def'>{e(who)} {e(DECISION_WORDS.get(d.get('decision'), ''))}</div>"
                      for who, d in (r.get("decisions") or {}).items()) + "</td></tr>"
            for r in queue
        )
        out.append(f"<section id='review'><h2>검토 대기열 — 사용자가 설정을 바꿔 부른 턴</h2>"
                   f"<p>후보 {candidates}턴 가운데 {len(queue)}턴 (표본 크기 {size}). 규칙 판정을 보고 이 연출을 어긋남으로 볼지 사람이 정합니다.</p>"
                   "<table><thead><tr><th>turn_no</th><th>신호 문구</th><th>사용자 발화</th><th>응답</th><th>규칙 판정</th><th>사람 판단</th></tr></thead>"
                   f"<tbody>{rows}</tbody></table></section>")
    return "".join(out)


# -- the trace: the rows a verdict cites and the conversation around it ----------------------


def related(row, t):
    return {"turns": rows_where(t.get("turns"), "turn_no", [row.get("turn_no")]),
            "profiles": rows_where(t.get("profiles"), "profile_no", [row.get("profile_no")])}


def transcript(row, t) -> Transcript:
    turns = t.get("turns", pd.DataFrame())
    own = rows_where(turns, "turn_no", [row.get("turn_no")])
    if own.empty:
        return Transcript("같은 캐릭터의 턴", [], [])
    me = own.iloc[0]
    same = turns[turns["character_code_raw"].map(trim) == trim(me["character_code_raw"])].sort_values(["created_at_ns", "turn_no"])
    scenario = me.get("scenario_id")
    if isinstance(scenario, str) and scenario:
        shown = same[same["scenario_id"] == scenario]
        title = f"같은 시나리오 {scenario}의 턴 (프롬프트 버전별)"
    else:
        at = list(same["turn_no"]).index(me["turn_no"])
        shown = same.iloc[max(0, at - 3): at + 4]
        title = "같은 캐릭터의 앞뒤 턴"
    cols = ["turn_no", "prompt_ver", "created_at", "user_text", "reply_text", "stated_age", "stated_job", "topic_tag"]
    return Transcript(title, cols, shown_rows(shown, cols, "turn_no", {me["turn_no"]}))


BOARD = BoardSpec(
    SPEC.name, "캐릭터 설정을 벗어난 답변을 기준값과 비교합니다", SPEC.verdict_key, "turn_no",
    sections=sections, gather=gather, order=SPEC.verdict_order,
    trace=TraceSpec(related, transcript, origins={"profile": "profiles", "turn": "turns"}),
)
