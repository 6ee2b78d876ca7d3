"""retry on the board: the baseline per surface and the baseline sweep before the items; why each cited value matters."""

from __future__ import annotations

import pandas as pd

from evals.board import Board, BoardSpec, e, value_html
from evals.report import label
from evals.trace import Transcript, TraceSpec, rows_where, shown_rows
from rules.retry.display import as_fraction, show
from rules.retry.spec import SPEC


SWEEP_HEADING = "기준선 스윕"


def _surfaces(board: Board) -> dict[str, dict]:
    """Per surface: its baselines in order of first row, its events, and its verdicts counted (a
    stored day's counted by the warehouse)."""
    if board.stored is not None:
        split = board.stored.split(["surface_key", "surface_baseline", "verdict"])
        found = [(s, b, v, n) for (s, b, v), n in split]
    else:
        found = [(r.get("surface_key"), r.get("surface_baseline"), r.get("verdict"), 1) for r in board.rows]
    surfaces: dict[str, dict] = {}
    for s, b, v, n in found:
        if not isinstance(s, str):
            continue
        d = surfaces.setdefault(s, {"baselines": [], "events": 0, "verdicts": {}})
        if b not in d["baselines"]:
            d["baselines"].append(b)
        d["events"] += n
        d["verdicts"][label(v)] = d["verdicts"].get(label(v), 0) + n
    return surfaces


def sections(board: Board) -> str:
    surfaces = _surfaces(board)

    def baseline(v) -> str:
        exact = as_fraction(v)
        return value_html(v) if exact is None else f"<span title='{e(v)}'>{e(show(exact))}</span>"

    order = SPEC.verdict_order
    rows = "".join(
        f"<tr><td><code>{e(s)}</code></td><td>{', '.join(baseline(b) for b in d['baselines'])}</td><td>{d['events']}</td>"
        + "".join(f"<td>{d['verdicts'].get(v, 0)}</td>" for v in order) + "</tr>"
        for s, d in sorted(surfaces.items())
    )
    out = ["<section id='baseline'><h2>접점별 기준선 (surface_baseline)</h2>"
           "<p>서로 다른 세션끼리 낱말이 겹치는 정도의 가운데값입니다. 같은 세션의 앞선 말과 이보다 더 겹쳐야 말을 바꾼 다시 시도로 봅니다. "
           "소수 둘째 자리로 보여 주며 판정은 정확한 분수로 비교했습니다.</p><div class='wide'>"
           "<table><thead><tr><th>surface_key</th><th>기준선</th><th>이벤트</th>"
           + "".join(f"<th><code>{e(v)}</code></th>" for v in order)
           + f"</tr></thead><tbody>{rows}</tbody></table></div></section>"]
    steps = getattr(board.report, "sweep", None)
    if steps:
        names = list(steps[0].by_surface)
        table = ("<div class='wide'><table><thead><tr><th>배율</th><th><code>exact_retry</code></th><th><code>reworded_retry</code></th>"
                 "<th>합계</th>" + "".join(f"<th><code>{e(x)}</code></th>" for x in names) + "</tr></thead><tbody>"
                 + "".join(f"<tr><td>×{float(s.factor):g}</td><td>{s.exact}</td><td>{s.reworded}</td><td>{s.exact + s.reworded}</td>"
                           + "".join(f"<td>{s.by_surface.get(x, 0)}</td>" for x in names) + "</tr>" for s in steps)
                 + "</tbody></table></div>")
        out.append(f"<section id='sweep'><h2>{SWEEP_HEADING}</h2><p>접점마다 기준선에 배율을 곱해 다시 판정했을 때 다시 시도로 잡히는 건수입니다 "
                   f"(같으면 다시 시도가 아닙니다).</p>{sweep_svg(steps)}{table}</section>")
    return "".join(out)


def sweep_svg(steps) -> str:
    """Retries at each baseline factor as stacked bars (exact below, reworded on top), ×1 in bold."""
    width, height, pad, top = 560, 240, 36, 40
    most = max((s.exact + s.reworded for s in steps), default=0) or 1
    slot = (width - 2 * pad) / len(steps)
    scale = (height - pad - top) / most
    base_y = height - pad
    bars = []
    for i, s in enumerate(steps):
        x, w = pad + i * slot + slot * 0.15, slot * 0.7
        h_exact, h_reworded = s.exact * scale, s.reworded * scale
        factor = f"{float(s.factor):g}"
        bars.append(
            f"<g class='step{' one' if s.factor == 1 else ''}'><title>×{e(factor)}: exact_retry {s.exact}, reworded_retry {s.reworded}</title>"
            f"<rect class='exact' x='{x:.1f}' y='{base_y - h_exact:.1f}' width='{w:.1f}' height='{h_exact:.1f}'/>"
            f"<rect class='reworded' x='{x:.1f}' y='{base_y - h_exact - h_reworded:.1f}' width='{w:.1f}' height='{h_reworded:.1f}'/>"
            f"<text x='{x + w / 2:.1f}' y='{base_y - h_exact - h_reworded - 4:.1f}' text-anchor='middle'>{s.exact + s.reworded}</text>"
            f"<text x='{x + w / 2:.1f}' y='{base_y + 16:.1f}' text-anchor='middle'>×{e(factor)}</text></g>"
        )
    legend = (f"<g class='legend'><rect class='exact' x='{pad}' y='4' width='10' height='10'/><text x='{pad + 14}' y='13'>exact_retry</text>"
              f"<rect class='reworded' x='{pad + 100}' y='4' width='10' height='10'/><text x='{pad + 114}' y='13'>reworded_retry</text></g>")
    return (f"<svg class='sweep' viewBox='0 0 {width} {height}' role='img' aria-label='기준선 배율별 다시 시도 건수'>"
            f"<line x1='{pad}' y1='{base_y}' x2='{width - pad}' y2='{base_y}' class='axis'/>{legend}{''.join(bars)}</svg>")


def evidence_reason(row: dict, items: list[dict]) -> list[str]:
    """Seed 002's `reason` column: what each cited value is to this event's verdict."""
    out, texts = [], 0
    matched = row.get("matched_event_id")
    for x in items:
        f = x.get("field")
        if f == "input_text":
            out.append("이 이벤트가 보낸 말입니다" if texts == 0 else f"견준 앞선 말입니다 ({matched or '앞선 이벤트'})")
            texts += 1
        elif f == "surface_key_raw":
            out.append("접점 표기입니다. 앞뒤 공백을 지우고 소문자로 바꿔 surface_key 로 씁니다")
        elif f in ("surface_key", "surface_name"):
            out.append("접점 목록에서 찾은 접점입니다")
        elif f == "default_baseline":
            out.append("겹침을 셀 다른 세션 쌍이 없어 접점 목록의 기본 기준선을 씁니다")
        elif x.get("agg"):
            out.append(f"여러 줄에서 센 값({x['agg']})입니다")
        else:
            out.append("판정이 기대는 입력 값입니다")
    return out


# -- the trace: the rows a verdict cites and the conversation around it ----------------------


def related(row, t):
    return {"interaction_events": rows_where(t.get("interaction_events"), "event_id", [row.get("event_id"), row.get("matched_event_id")]),
            "surface_catalog": rows_where(t.get("surface_catalog"), "surface_key", [row.get("surface_key")])}


def transcript(row, t) -> Transcript:
    events = t.get("interaction_events", pd.DataFrame())
    shown = rows_where(events, "session_id", [row.get("session_id")]).sort_values(["sent_at_ns", "event_id"])
    cols = ["event_id", "sent_at", "surface_key_raw", "input_text", "result_shown"]
    return Transcript(f"세션 {row.get('session_id')}의 이벤트", cols,
                      shown_rows(shown, cols, "event_id", {row.get("event_id"), row.get("matched_event_id")} - {None}))


BOARD = BoardSpec(
    SPEC.name, "사용자가 한 번에 못 끝내고 다시 시도한 지점을 접점별로 보여 줍니다", SPEC.verdict_key, "event_id",
    summary_field="reason", lead=sections, own_sections=(SWEEP_HEADING,), evidence_reason=evidence_reason, order=SPEC.verdict_order,
    trace=TraceSpec(related, transcript),
)
