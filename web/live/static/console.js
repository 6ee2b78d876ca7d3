// The operator's live console. Everything shown arrives over /ws/windows (or /live/status) and is
// written as text (textContent), never as HTML: chat bodies are whatever viewers typed.
//
// Delivery: every frame the console must not miss carries `seq`, numbered without gaps within the
// service's `epoch`. After the history (ended by `resumed`, which names the epoch and the number
// reached) each live frame must be the next number: a gap, or a `tick` naming a number beyond the
// last held, makes the console ask for exactly what it misses (`resume` after the last it holds);
// a dropped socket reconnects with `after_seq`; frames too old to resend (`too_old`) are replaced by
// the newest broadcast from the store. Windows are keyed by character and start, so a frame that
// comes twice is shown once.
//
// What the viewer wrote comes in the frames themselves (`texts`, msg_id → body; a pick-up's `body`;
// a quarantined line's `text`), so a reload or a resume shows the same words as the live flow.
(() => {
  "use strict";
  const F = window.VerdictsFormat;
  const PICK = "지금 답변할 질문";
  const REASONS = ["세계관 밖이라 넘김", "방금 답한 주제", "관계 단계에 아직 못 미침", "다음 차례로 미룸"];
  const CHAT_KEEP = 200;
  const WINDOWS_KEEP = 120;
  const CLAMP_CHARS = 80;       // a body longer than this is clamped, with an expand
  const SLOW_MS = 4000;         // an open window this long past its due time says why it has not landed
  const params = new URLSearchParams(location.search);
  // The token came once in the address (?token=); the service answered with a session cookie, which
  // every socket, fetch and link of this page carries. It is taken out of the address bar so that it
  // is not left on screen, in history or in a bookmark.
  if (params.has("token")) {
    params.delete("token");
    history.replaceState(null, "", location.pathname + (params.toString() ? `?${params}` : "") + location.hash);
  }
  const W = Number(document.body.dataset.windowSeconds) * 1000;
  const GRACE = Number(document.body.dataset.graceMs);
  const windows = new Map();   // "character_id/window_start" → article
  const bodies = new Map();    // msg_id → chat body (the flow's own, for lines not in a frame yet)
  const picked = new Map();    // msg_id → pickup frame
  const openWindows = new Map(); // "character_id|window_ms" → {character_id, startMs, lines}
  const characters = new Map();  // character_id → name ("" until known)
  const closedThrough = {};       // character_id → up to this window start (ms): earlier broadcasts (last close or start)
  let onAir = {};                 // character_id → its broadcast started and not closed since (the store's)
  const latencies = [];
  const lateSeen = new Set();
  const panelSeen = new Set();
  const PANEL_KEEP = 200;
  const NUMBERED = new Set(["window", "late", "pickup", "quarantine"]);  // the frames a console must not miss
  const STALL_MS = 15000;      // three ticks without a word: the socket is taken as dead
  let lastKey = params.get("after");
  let epoch = null;            // the service's epoch, once `resumed` named it
  let lastSeq = 0;             // the last number held in that epoch
  let live = false;            // past the history: numbers must follow on
  let heard = Date.now();
  let counts = null;
  let retry = 500;
  let socket = null;
  let serverOpen = null;       // the service's open windows as /live/status last said, "character|ms"
  let offset = 0;              // the service's clock less this browser's (ms)
  let filter = decodeURIComponent(location.hash.slice(1)) || "";
  let showEarlier = false;
  const now = () => Date.now() + offset;

  const $ = (id) => document.getElementById(id);
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function setStatus(text, state) {
    const s = $("status");
    s.textContent = text;
    s.dataset.state = state;
  }
  function who(id) {
    const name = characters.get(id);
    return name ? `${name} (${id})` : id;
  }
  function showTotals() {
    const sorted = [...latencies].sort((a, b) => a - b);
    const p50 = sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)] : null;
    // the store's figures (every tick), the same as /live/status and the replayer's summary
    const c = counts;
    const figures = c ? `받은 줄 ${F.count(c.received)} = 판정 ${F.count(c.judged)} + 격리 ${F.count(c.quarantined)} + 중복 ${F.count(c.duplicates)} + 늦게 온 줄 ${F.count(c.late)}` +
      (c.pending ? ` + 구간 대기 ${F.count(c.pending)}` : "") : "집계 기다리는 중";
    $("totals").textContent = `구간 ${windows.size}개 · ${figures}` + (p50 === null ? "" : ` · 판정 지연 중앙값 ${F.ms(p50)}`);
    const t = $("totals");
    if (c) for (const k of ["received", "judged", "quarantined", "duplicates", "late", "pending"]) t.dataset[k] = String(c[k]);
  }
  function clamped(cls, text) {
    // a viewer's words: long ones clamp to three lines with an expand
    const wrap = el("div", `said ${cls || ""}`);
    const p = el("p", "body", text ?? "(본문 없음)");
    if (text === null || text === undefined) p.classList.add("missing");
    wrap.append(p);
    if (text && text.length > CLAMP_CHARS) {
      p.classList.add("clamp");
      const more = el("button", "more", "펼치기");
      more.type = "button";
      more.addEventListener("click", () => {
        const open = p.classList.toggle("clamp");
        more.textContent = open ? "펼치기" : "접기";
      });
      wrap.append(more);
    }
    return wrap;
  }

  // -- the character tabs -------------------------------------------------------------------------
  function know(id, name) {
    if (!id) return;
    if (!characters.has(id) || (name && !characters.get(id))) {
      characters.set(id, name || characters.get(id) || "");
      showTabs();
      if (name) for (const b of document.querySelectorAll(`article.window[data-character="${CSS.escape(id)}"] > header > .character`)) b.textContent = who(id);
    }
  }
  function showTabs() {
    const nav = $("tabs");
    nav.replaceChildren();
    const all = [["", "전체"], ...[...characters.keys()].sort().map((id) => [id, who(id)])];
    for (const [id, label] of all) {
      const b = el("button", "tab", label);
      if (onAir[id]) { b.classList.add("on-air"); b.title = `방송 중 (${F.time(onAir[id].started_ms)} 시작)`; }
      b.type = "button";
      b.dataset.character = id;
      b.setAttribute("aria-pressed", String(filter === id));
      b.addEventListener("click", () => choose(id));
      nav.append(b);
    }
    $("start-broadcast").hidden = $("close-broadcast").hidden = !filter;
    $("start-broadcast").textContent = filter ? `${who(filter)} 방송 시작` : "";
    $("close-broadcast").textContent = filter ? `${who(filter)} 방송 닫기` : "";
    const air = filter && onAir[filter];
    $("on-air").hidden = !air;
    $("on-air").textContent = air ? `방송 중 · ${F.time(air.started_ms)} 시작 · 시청자 기록 ${F.count(air.viewers)}명` : "";
  }
  function choose(id) {
    filter = id;
    history.replaceState(null, "", id ? `#${encodeURIComponent(id)}` : location.pathname + location.search);
    document.body.dataset.filter = id;
    showTabs();
    applyFilter();
  }
  function shown(e) {
    const c = e.dataset.character;
    return !filter || c === filter;
  }
  function applyFilter() {
    findGaps();
    for (const art of windows.values()) markEarlier(art);
    for (const e of document.querySelectorAll("#chat li.line, #open .open-window")) e.hidden = !shown(e);
    let earlier = 0;
    for (const art of windows.values()) {
      const old = art.classList.contains("earlier");
      if (old && shown(art)) earlier += 1;
      art.hidden = !shown(art) || (old && !showEarlier);
    }
    const link = $("earlier");
    link.hidden = !earlier;
    link.textContent = showEarlier ? `이전 방송 구간 ${earlier}개 숨기기` : `이전 방송 구간 ${earlier}개 보기`;
  }
  const GAP_MS = 10 * 60 * 1000;  // a character's windows this far apart are two broadcasts
  let gapCut = {};                  // character → start (ms) of the last window before its newest gap
  function findGaps() {
    const starts = {};
    for (const art of windows.values()) (starts[art.dataset.character] ||= []).push(Number(art.dataset.startMs));
    gapCut = {};
    for (const [c, list] of Object.entries(starts)) {
      list.sort((a, b) => b - a);
      for (let i = 1; i < list.length; i++) if (list[i - 1] - list[i] > GAP_MS) { gapCut[c] = list[i]; break; }
    }
  }
  function markEarlier(art) {
    // earlier broadcasts: up to the last close (the store's), or before a long gap between windows
    const c = art.dataset.character;
    // a started broadcast is one however long its gaps: only its start (in closedThrough) cuts it
    const cut = Math.max(closedThrough[c] ?? -Infinity, onAir[c] ? -Infinity : gapCut[c] ?? -Infinity);
    art.classList.toggle("earlier", Number(art.dataset.startMs) <= cut);
  }

  // -- the socket ------------------------------------------------------------------------------
  function socketUrl() {
    const u = new URL("/ws/windows", location.href);
    u.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    if (epoch !== null) {
      u.searchParams.set("after_seq", String(lastSeq));
      u.searchParams.set("epoch", String(epoch));
    } else if (lastKey) {
      u.searchParams.set("after", lastKey);
    }
    return u.toString();
  }
  function askAgain(why) {
    // exactly what is missing: everything after the last number held
    if (!socket || socket.readyState !== WebSocket.OPEN) return;
    live = false;
    document.body.dataset.resumes = String(Number(document.body.dataset.resumes || 0) + 1);
    document.body.dataset.lastResume = why;
    socket.send(JSON.stringify({ type: "resume", after_seq: lastSeq, epoch }));
  }
  setInterval(() => {
    if (socket && socket.readyState === WebSocket.OPEN && Date.now() - heard > STALL_MS) socket.close(4000, "stalled");
  }, 1000);
  function connect() {
    setStatus(F.state("connecting"), "connecting");
    socket = new WebSocket(socketUrl());
    socket.onopen = () => { retry = 500; setStatus(F.state("live"), "live"); };
    live = false;
    socket.onmessage = (event) => {
      heard = Date.now();
      const t0 = performance.now();
      let frame;
      try { frame = JSON.parse(event.data); } catch (e) { return; }
      handle(frame);
      if (frame.type === "window") rendered(frame, t0);
    };
    socket.onclose = (event) => {
      setStatus(`${F.state("down")} · ${F.duration(retry / 1000)} 뒤 마지막 구간부터 다시 받습니다`, "down");
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 5000);
    };
  }
  const renders = [];
  window.__consoleRenders = renders;  // what the browser benchmark reads: frame in → drawn, per window
  function rendered(frame, t0) {
    const script = performance.now() - t0;
    requestAnimationFrame(() => setTimeout(() => {
      renders.push({ key: `${frame.character_id}/${frame.window_start}`, lines: frame.lines, at: t0, script_ms: script, drawn_ms: performance.now() - t0 });
      if (renders.length > 200) renders.shift();
    }, 0));
  }
  function handle(frame) {
    if (NUMBERED.has(frame.type)) {
      if (live && frame.epoch === epoch) {
        if (frame.seq <= lastSeq) return;            // held already
        if (frame.seq > lastSeq + 1) { askAgain(`gap ${lastSeq}→${frame.seq}`); return; }
        lastSeq = frame.seq;
      }
      document.body.dataset.seq = String(lastSeq);
    }
    if (frame.type === "window") addWindow(frame);
    else if (frame.type === "chat") addChat(frame);
    else if (frame.type === "late") addLate(frame);
    else if (frame.type === "pickup") markPickup(frame);
    else if (frame.type === "quarantine") addPanel(frame);
    else if (frame.type === "too_old") {
      // what was missed is no longer kept one by one: the newest windows follow, merged by key
      document.body.dataset.tooOld = String(Number(document.body.dataset.tooOld || 0) + 1);
    } else if (frame.type === "resumed") {
      epoch = frame.epoch;
      lastSeq = frame.through;
      live = true;
      document.body.dataset.epoch = String(epoch);
      document.body.dataset.seq = String(lastSeq);
      document.body.dataset.resumed = String(frame.through);
    } else if (frame.type === "tick") {
      if (frame.counts) { counts = frame.counts.total; showTotals(); }
      if (!live) return;
      if (frame.epoch !== epoch) { socket.close(4001, "service restarted"); return; }  // reconnect: too old there, newest sent
      if (frame.seq > lastSeq) askAgain(`tick ${frame.seq} > ${lastSeq}`);
    }
  }

  // -- chat flowing in ---------------------------------------------------------------------------
  function addChat(frame) {
    const list = $("chat");
    for (const line of frame.lines) {
      bodies.set(line.msg_id, line.body);
      know(line.character_id);
      const li = el("li", "line");
      li.dataset.msgId = line.msg_id;
      li.dataset.character = line.character_id;
      li.append(el("span", "who", `${line.character_id} · ${line.viewer_id}`), el("span", "body", line.body));
      if (line.donation_amount > 0) li.append(el("span", "won", F.won(line.donation_amount)));
      li.hidden = !shown(li);
      list.prepend(li);
    }
    while (list.children.length > CHAT_KEEP) list.lastElementChild.remove();
    for (const w of frame.open) {
      const startMs = Math.round(Number(w.window_ns) / 1e6);
      const key = `${w.character_id}|${startMs}`;
      if (!windowShownAt(w.character_id, startMs)) openWindows.set(key, { character_id: w.character_id, startMs, lines: w.lines });
    }
    showOpen();
  }
  function windowShownAt(character, startMs) {
    for (const art of windows.values()) if (art.dataset.character === character && Number(art.dataset.startMs) === startMs) return true;
    return false;
  }
  function showOpen() {
    const box = $("open");
    box.replaceChildren();
    const t = now();
    let next = null;
    for (const [key, w] of openWindows) {
      const closeMs = w.startMs + W;
      const d = el("div", "open-window");
      d.dataset.character = w.character_id;
      d.dataset.key = key;
      let state;
      if (t < closeMs) {
        state = `닫힘까지 ${F.duration(Math.ceil((closeMs - t) / 1000))}`;
        d.dataset.state = "open";
        if (!filter || filter === w.character_id) next = next === null ? closeMs : Math.min(next, closeMs);
      } else if (t < closeMs + GRACE + SLOW_MS) {
        state = "닫힘 · 판정 중…";
        d.dataset.state = "judging";
      } else if (serverOpen && !serverOpen.has(key)) {
        // finished on the service, yet not here: asked for once; a window the service never pushed
        // (judged by the Dagster path first) is said so, then let go
        if (!w.asked) { w.asked = t; askAgain(`missing ${key}`); }
        const gone = t - w.asked > 15000;
        state = `닫힌 지 ${F.duration((t - closeMs) / 1000)} · ` + (gone
          ? "서비스가 이 구간을 내보내지 않았습니다 (다른 경로에서 먼저 판정됐을 수 있습니다)"
          : "서비스는 이 구간을 마쳤는데 이 화면에 오지 않아 다시 받는 중");
        d.dataset.state = "missing";
        if (t - w.asked > 45000) openWindows.delete(key);
      } else {
        state = `닫힌 지 ${F.duration((t - closeMs) / 1000)} · 서비스가 아직 판정하고 있습니다 (줄이 늦게 오거나 서비스가 바쁨)`;
        d.dataset.state = "slow";
      }
      d.append(el("b", null, who(w.character_id)),
               el("span", null, ` ${F.span(w.startMs, closeMs, t)} 구간 · ${F.count(w.lines)}줄 들어오는 중 · `),
               el("span", "countdown", state));
      d.hidden = !shown(d);
      box.append(d);
    }
    const c = $("countdown");
    c.textContent = next === null ? "" : `다음 구간 닫힘까지 ${F.duration(Math.ceil((next - t) / 1000))}`;
    c.dataset.seconds = next === null ? "" : String(Math.ceil((next - t) / 1000));
  }
  setInterval(showOpen, 500);

  // -- finished windows -------------------------------------------------------------------------
  function evidenceTable(row) {
    const table = el("table", "evidence");
    const head = el("tr");
    for (const h of ["데이터", "필드", "집계", "값"]) head.append(el("th", null, h));
    table.append(el("thead"));
    table.tHead.append(head);
    const body = el("tbody");
    for (const e of row.evidence || []) {
      const tr = el("tr");
      tr.append(el("td", null, e.dataset), el("td", null, e.field), el("td", null, e.agg ?? ""), el("td", null, F.value(e.value)));
      body.append(tr);
    }
    table.append(body);
    return table;
  }
  function explained(row) {
    // the evidence table is made when first opened: a 3,000-line window shows at once
    const d = el("details", "evidence-box");
    d.append(el("summary", null, "근거 보기"));
    d.addEventListener("toggle", () => {
      if (!d.open || d.dataset.made) return;
      d.dataset.made = "1";
      d.append(evidenceTable(row));
      if (row.hedge) d.append(el("p", "hedge", row.hedge));
    });
    return d;
  }
  function textOf(frame, msgId) {
    const t = frame.texts ? frame.texts[msgId] : undefined;
    return t !== undefined ? t : bodies.get(msgId);
  }
  function card(row, text) {
    const c = el("div", "card");
    c.dataset.msgId = row.msg_id;
    const top = el("div", "card-top");
    top.append(el("span", "rank", `${row.rank_in_window}위`), el("span", "viewer", row.viewer_id), el("span", "msg", row.msg_id));
    c.append(top, clamped("pick-body", text), el("p", "summary", row.summary), explained(row));
    return c;
  }
  function item(row, text) {
    const li = el("li", "item");
    li.dataset.msgId = row.msg_id;
    li.dataset.verdict = row.verdict;
    const head = el("div", "item-head");
    head.append(el("span", "viewer", row.viewer_id), el("span", "msg", row.msg_id));
    const button = el("button", "pickup", "집어 올리기");
    button.type = "button";
    button.dataset.msgId = row.msg_id;
    button.addEventListener("click", () => pickUp(row.msg_id, button));
    li.append(head, clamped("item-body", text), el("p", "summary", row.summary), explained(row), button, el("span", "picked-note"));
    return li;
  }
  function checksBadge(checks) {
    const failed = checks.filter((c) => !c.passed);
    const d = el("details", failed.length ? "checks-badge fail" : "checks-badge pass");
    d.dataset.failed = String(failed.length);
    d.append(el("summary", null, failed.length ? `검증 ${failed.length}개 실패` : `검증 통과 ${checks.length}/${checks.length}`));
    const ul = el("ul", "checks");
    for (const c of checks) {
      const li = el("li", c.passed ? "pass" : "fail", `${c.passed ? "✓" : "✗"} ${F.checkTitle(c.name)}`);
      li.dataset.check = c.name;
      if (!c.passed && c.failing_ids && c.failing_ids.length) li.append(el("span", "failing", ` · 걸린 줄 ${c.failing_ids.slice(0, 5).join(", ")}`));
      ul.append(li);
    }
    d.append(ul);
    return d;
  }
  function group(cls, title, verdict, lines) {
    // a reason group: its lines are put in the page when it is first opened, so a 3,000-line window
    // shows at once; what they say is in the frame already
    const g = el("details", cls);
    if (verdict) g.dataset.verdict = verdict;
    g.append(el("summary", null, title));
    g.addEventListener("toggle", () => {
      if (!g.open || g.dataset.made) return;
      g.dataset.made = "1";
      const ul = el("ul");
      ul.append(...lines());
      g.append(ul);
      for (const li of ul.querySelectorAll("li.item")) if (picked.has(li.dataset.msgId)) markItem(li, picked.get(li.dataset.msgId));
    });
    return g;
  }
  function quarantinedItem(q) {
    const li = el("li", "q-item");
    li.dataset.reasonCode = q.reason_code;
    li.append(el("span", "reason-label", F.reason(q.reason_code)), el("span", "msg", q.msg_id ?? "(메시지 번호 없음)"),
              clamped("q-body", q.text ?? null));
    return li;
  }
  function cue(frame, picks) {
    const toast = $("cue");
    toast.textContent = `새 구간 도착 · ${who(frame.character_id)} ${F.span(frame.startMs, frame.startMs + W, now())} · 답변할 질문 ${picks}개`;
    toast.dataset.key = `${frame.character_id}/${frame.window_start}`;
    toast.classList.remove("flash");
    void toast.offsetWidth;   // restart the animation
    toast.classList.add("flash");
    document.body.dataset.landed = String(Number(document.body.dataset.landed || 0) + 1);
  }
  function addWindow(frame) {
    const key = `${frame.character_id}/${frame.window_start}`;
    lastKey = key;
    frame.startMs = Math.round(Number(frame.window_end_ns) / 1e6) - W;
    openWindows.delete(`${frame.character_id}|${frame.startMs}`);
    know(frame.character_id);
    if (windows.has(key)) { showOpen(); return; } // keyed by window: a window already shown is never redrawn
    latencies.push(frame.latency_ms);
    const art = el("article", "window");
    art.dataset.key = key;
    art.dataset.seq = frame.seq;
    art.dataset.character = frame.character_id;
    art.dataset.startMs = String(frame.startMs);
    art.dataset.lines = String(frame.lines);
    const head = el("header");
    head.append(el("b", "character", who(frame.character_id)), el("span", "span", F.span(frame.startMs, frame.startMs + W, now())),
                el("span", "lines", `${F.count(frame.lines)}줄`), el("span", "latency", `판정 지연 ${F.ms(frame.latency_ms)}`),
                checksBadge(frame.checks), el("span", "late-count"));
    art.append(head);
    const picks = el("div", "picks");
    const ranked = frame.verdicts.filter((r) => r.verdict === PICK);
    if (!ranked.length) picks.append(el("p", "empty", "이 구간에는 답변할 질문이 없습니다."));
    for (const r of ranked) picks.append(card(r, textOf(frame, r.msg_id)));
    art.append(picks);
    const groups = el("div", "groups");
    const by = new Map(REASONS.map((r) => [r, []]));
    for (const r of frame.verdicts) if (by.has(r.verdict)) by.get(r.verdict).push(r);
    for (const [reason, rows] of by) {
      if (!rows.length) continue;
      groups.append(group("group", `${reason} (${F.count(rows.length)})`, reason,
                          () => rows.map((r) => item(r, textOf(frame, r.msg_id)))));
    }
    if (frame.quarantined.length) {
      groups.append(group("group quarantine", `격리된 줄 (${F.count(frame.quarantined.length)})`, null,
                          () => frame.quarantined.map(quarantinedItem)));
    }
    art.append(groups, el("div", "late-box"));
    const list = $("windows");
    // newest first; a window finishing out of order still goes where its push order puts it
    const after = [...list.children].find((a) => Number(a.dataset.seq) < frame.seq);
    list.insertBefore(art, after || null);
    windows.set(key, art);
    while (list.children.length > WINDOWS_KEEP) {
      const gone = list.lastElementChild;
      windows.delete(gone.dataset.key);
      gone.remove();
    }
    markEarlier(art);
    art.hidden = !shown(art) || (art.classList.contains("earlier") && !showEarlier);
    for (const p of picked.values()) if (`${p.character_id}/${p.window_start}` === key) markPickup(p);
    if (live && !art.classList.contains("earlier")) {
      art.classList.add("landed");
      setTimeout(() => art.classList.remove("landed"), 6000);
      cue(frame, ranked.length);
    }
    applyFilter();
    showOpen();
    showTotals();
  }
  function addLate(frame) {
    if (lateSeen.has(frame.late_seq)) return; // sent again on resume: shown once
    lateSeen.add(frame.late_seq);
    const art = windows.get(`${frame.character_id}/${frame.window_start}`);
    if (!art) return;
    const box = art.querySelector(".late-box");
    const d = el("details", "late");
    d.dataset.lateSeq = String(frame.late_seq);
    d.append(el("summary", null, `늦게 온 줄 ${F.count(frame.lines)}개 — 이 구간의 판정은 그대로 두고 따로 판정했습니다`));
    const ul = el("ul");
    for (const r of frame.verdicts) {
      const li = el("li", "late-item");
      li.dataset.msgId = r.msg_id;
      li.append(el("span", "verdict", r.verdict), el("span", "viewer", r.viewer_id), el("span", "msg", r.msg_id),
                clamped("late-body", textOf(frame, r.msg_id)), el("p", "summary", r.summary));
      ul.append(li);
    }
    d.append(ul);
    box.append(d);
    const n = art.querySelector(".late-count");
    n.dataset.n = String(Number(n.dataset.n || 0) + frame.lines);
    n.textContent = `늦게 온 줄 ${n.dataset.n}`;
  }

  // -- lines quarantined outside any window ------------------------------------------------------
  function addPanel(frame) {
    const first = frame.lines.length ? frame.lines[0].seq : null;
    if (first === null || panelSeen.has(first)) return;
    panelSeen.add(first);
    const list = $("panel");
    for (const q of frame.lines) {
      const li = el("li", "panel-line");
      li.dataset.seq = String(q.seq);
      li.dataset.reasonCode = q.reason_code;
      li.append(el("span", "reason-code", F.reason(q.reason_code)), el("span", "who", q.character_id ?? "(캐릭터 없음)"),
                clamped("text", q.text));
      list.prepend(li);
    }
    if (frame.count > frame.lines.length) list.prepend(el("li", "panel-more", `이 묶음의 ${F.count(frame.count - frame.lines.length)}줄은 생략 (모두 격리 집계에 들어 있습니다)`));
    while (list.children.length > PANEL_KEEP) list.lastElementChild.remove();
    $("panel-box").hidden = false;
  }

  // -- picking up a skipped line ------------------------------------------------------------------
  function headers() {  // the session cookie carries the token
    return { "content-type": "application/json" };
  }
  async function post(path, body) {
    let res;
    try {
      res = await fetch(path, { method: "POST", headers: headers(), body: JSON.stringify(body) });
    } catch (e) {
      throw new Error(F.error("network"));
    }
    const out = await res.json().catch(() => ({}));
    if (!res.ok) throw Object.assign(new Error(out.message || F.error(out.code || "network")), { status: res.status, body: out });
    return out;
  }
  async function pickUp(msgId, button) {
    button.disabled = true;
    try {
      markPickup(await post("/live/pickup", { msg_id: msgId }));
    } catch (e) {
      button.disabled = false;
      button.textContent = `다시 시도 (${e.message})`;
    }
  }
  function markItem(li, frame) {
    li.classList.add("picked");
    const b = li.querySelector("button.pickup");
    b.disabled = true;
    b.textContent = "집어 올림";
    li.querySelector(".picked-note").textContent = `운영자가 ${F.time(frame.picked_at_ns / 1e6)}에 집어 올림 · 답한 것으로 셉니다`;
  }
  function markPickup(frame) {
    picked.set(frame.msg_id, frame);
    const art = windows.get(`${frame.character_id}/${frame.window_start}`);
    if (!art) return;
    for (const li of art.querySelectorAll(`li.item[data-msg-id="${CSS.escape(frame.msg_id)}"]`)) markItem(li, frame);
    const picks = art.querySelector(".picks");
    if (!picks.querySelector(`.card[data-msg-id="${CSS.escape(frame.msg_id)}"]`)) {
      const c = el("div", "card operator");
      c.dataset.msgId = frame.msg_id;
      const top = el("div", "card-top");
      top.append(el("span", "rank", "운영자 선택"), el("span", "viewer", frame.viewer_id ?? ""), el("span", "msg", frame.msg_id));
      const text = frame.body ?? bodies.get(frame.msg_id);
      c.append(top, clamped("pick-body", text),
               el("p", "summary", `${frame.verdict}(으)로 빠졌던 줄을 ${F.time(frame.picked_at_ns / 1e6)}에 운영자가 집어 올렸습니다.`));
      if (frame.summary) c.append(el("p", "hedge", frame.summary));
      picks.append(c);
    }
  }

  // -- starting and closing a broadcast from the page ------------------------------------------------
  async function act(buttonId, failed, fn, waiting) {
    // one action at a time on a button; what it did (or why not) in the notice line
    const note = $("notice");
    const button = $(buttonId);
    button.disabled = true;
    if (waiting) { note.textContent = waiting; note.dataset.state = "waiting"; }
    try {
      const done = await fn();
      if (!done) return;
      note.replaceChildren(el("span", null, done.message + " "));
      if (done.closed === true || (done.closed && done.closed.closed)) {
        const a = el("a", null, "설정표 조정 제안 보기 →");
        a.href = "/suggestions";
        note.append(a);
      }
      note.dataset.state = done.state;
      pollStatus();
    } catch (e) {
      note.textContent = `${failed}: ${e.message}`;
      note.dataset.state = "error";
    } finally {
      button.disabled = false;
    }
  }
  function startBroadcast() {
    const id = filter;
    if (!id) return;
    if (!window.confirm(`${who(id)}의 방송을 지금 시작할까요?\n\n지금 구간부터 이 방송으로 세고, 지금의 시청자 기록으로 판정합니다.`)) return;
    act("start-broadcast", "방송을 시작하지 못했습니다", async () => {
      let done;
      try {
        done = await post("/live/start", { character_id: id });
      } catch (e) {
        if (e.status !== 409 || !e.body.previous) throw e;
        if (!window.confirm(`${e.body.message}\n\n열린 방송을 닫고(답한 질문과 집어 올린 줄을 시청자 기록에 쓰고 설정표 조정 제안을 만듭니다) 새 방송을 시작할까요?`)) {
          return { message: `${who(id)} 방송을 새로 시작하지 않았습니다. 열린 방송이 그대로 있습니다.`, state: "nothing" };
        }
        done = await post("/live/start", { character_id: id, close_previous: true });
      }
      return { ...done, state: "started" };
    });
  }
  function closeBroadcast() {
    const id = filter;
    if (!id) return;
    if (!window.confirm(`${who(id)}의 방송을 닫을까요?\n\n답한 질문과 집어 올린 줄을 시청자 기록에 쓰고, 설정표 조정 제안을 만듭니다. 닫은 뒤 들어오는 줄은 새 방송으로 셉니다.`)) return;
    act("close-broadcast", "방송을 닫지 못했습니다", async () => {
      const done = await post("/live/close", { character_id: id });
      return { ...done, state: done.closed ? "closed" : "nothing" };
    }, `${who(id)} 방송을 닫는 중… 지금 구간이 끝나 판정되면 닫습니다.`);
  }
  $("start-broadcast").addEventListener("click", startBroadcast);
  $("close-broadcast").addEventListener("click", closeBroadcast);
  $("earlier").addEventListener("click", () => { showEarlier = !showEarlier; applyFilter(); });

  // -- settings that would silently change every verdict: said loudly -------------------------------------
  function showBanners(warnings) {
    const box = $("banners");
    box.replaceChildren();
    for (const w of warnings || []) {
      const d = el("div", "banner", w.message);
      d.dataset.code = w.code;
      d.setAttribute("role", "alert");
      box.append(d);
    }
    box.hidden = !box.children.length;
  }

  // -- chat feeds (verdicts listen): their counts from /live/status ------------------------------------
  const PLATFORM = { chzzk: "치지직", youtube: "유튜브", twitch: "트위치" };
  function showFeeds(feeds, broadcasts) {
    const box = $("feeds");
    box.hidden = !feeds.length;
    box.replaceChildren();
    const acked = new Map();  // character → lines its feeds had acknowledged
    for (const f of feeds) {
      acked.set(f.character_id, (acked.get(f.character_id) || 0) + f.acknowledged);
      const state = !f.live ? "gone" : f.connected ? "live" : "down";
      const row = el("div", "feed");
      row.dataset.feed = f.feed;
      row.dataset.state = state;
      row.append(el("b", null, `${PLATFORM[f.platform] || f.platform} ${f.channel} → ${f.character_id}`),
                 el("span", "feed-state", state === "live" ? "연결됨" : state === "down" ? "다시 연결 중" : "소식 없음"),
                 el("span", "feed-counts", `받음 ${F.count(f.received)} · 보냄 ${F.count(f.sent)} · 확인 ${F.count(f.acknowledged)} · 격리 ${F.count(f.quarantined)}` +
                    ` · 중복 ${F.count(f.duplicates)}(따로 셈) · 재연결 ${f.reconnects}` + (f.unpriced ? ` · 환율 없음 ${f.unpriced}` : "")));
      box.append(row);
    }
    // per character: its feeds' acknowledged lines against the store's figures of its current broadcast
    for (const [character, n] of acked) {
      const c = broadcasts[character] || { judged: 0, quarantined: 0, late: 0, duplicates: 0, pending: 0 };
      const accounted = c.judged + c.quarantined + c.late;
      const ok = accounted === n && !c.pending;
      const sum = el("div", ok ? "feed-sum ok" : "feed-sum waiting",
                     `${character} 확인된 줄 ${n} · 판정 ${c.judged} + 격리 ${c.quarantined} + 늦게 온 줄 ${c.late} = ${accounted}` +
                     (ok ? " ✓ 모두 셈" : c.pending ? ` · ${c.pending}줄 구간 닫힘 대기` : ` · ${n - accounted}줄 차이`));
      sum.dataset.character = character;
      sum.dataset.acked = String(n);
      sum.dataset.accounted = String(accounted);
      box.append(sum);
    }
  }
  let polling = null;
  async function pollStatus() {
    clearTimeout(polling);
    try {
      const res = await fetch("/live/status");
      if (res.ok) {
        const st = await res.json();
        if (typeof st.now_ms === "number") offset = st.now_ms - Date.now();
        if (typeof st.received === "number") { counts = st; showTotals(); }
        for (const [id, name] of Object.entries(st.names || {})) know(id, name);
        Object.assign(closedThrough, st.closed_through || {});
        const air = JSON.stringify(st.on_air || {});
        if (air !== JSON.stringify(onAir)) { onAir = st.on_air || {}; showTabs(); }
        for (const art of windows.values()) markEarlier(art);
        serverOpen = new Set((st.open || []).map((w) => `${w.character_id}|${w.window_ms}`));
        showBanners(st.warnings);
        showFeeds(st.feeds || [], st.broadcasts || {});
        applyFilter();
      }
    } catch (e) { /* the service is restarting: the socket's status says so */ }
    polling = setTimeout(pollStatus, 2000);
  }

  document.body.dataset.filter = filter;
  showTabs();
  connect();
  pollStatus();
})();
