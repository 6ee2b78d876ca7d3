// The operator's live console. Everything shown arrives over /ws/windows and is written as
// text (textContent), never as HTML: chat bodies are whatever viewers typed.
//
// Delivery: every frame the console must not miss carries `seq`, numbered without gaps within the
// service's `epoch`. After the history (ended by `resumed`, which names the epoch and the number
// reached) each live frame must be the next number: a gap, or a `tick` naming a number beyond the
// last held, makes the console ask for exactly what it misses (`resume` after the last it holds);
// a dropped socket reconnects with `after_seq`; frames too old to resend (`too_old`) are replaced by
// the newest broadcast from the store. Windows are keyed by character and start, so a frame that
// comes twice is shown once.
(() => {
  "use strict";
  const PICK = "지금 답변할 질문";
  const REASONS = ["세계관 밖이라 넘김", "방금 답한 주제", "관계 단계에 아직 못 미침", "다음 차례로 미룸"];
  const CHAT_KEEP = 200;
  const WINDOWS_KEEP = 120;
  const params = new URLSearchParams(location.search);
  // The token came once in the address (?token=); the service answered with a session cookie, which
  // every socket, fetch and link of this page carries. It is taken out of the address bar so that it
  // is not left on screen, in history or in a bookmark.
  if (params.has("token")) {
    params.delete("token");
    history.replaceState(null, "", location.pathname + (params.toString() ? `?${params}` : "") + location.hash);
  }
  const windows = new Map();   // "character_id/window_start" → article
  const bodies = new Map();    // msg_id → chat body (for cards)
  const picked = new Map();    // msg_id → pickup frame
  const openWindows = new Map(); // "character_id|window_ns" → line count
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
  function hhmmss(ns) {
    return new Date(Number(ns) / 1e6).toLocaleTimeString("ko-KR", { hour12: false });
  }
  function showTotals() {
    const sorted = [...latencies].sort((a, b) => a - b);
    const p50 = sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)] : null;
    // the store's figures (every tick), the same as /live/status and the replayer's summary
    const c = counts;
    const figures = c ? `받은 줄 ${c.received} = 판정 ${c.judged} + 격리 ${c.quarantined} + 중복 ${c.duplicates} + 늦게 온 줄 ${c.late}` +
      (c.pending ? ` + 구간 대기 ${c.pending}` : "") : "집계 기다리는 중";
    $("totals").textContent = `구간 ${windows.size}개 · ${figures}` + (p50 === null ? "" : ` · 판정 지연 중앙값 ${Math.round(p50)} ms`);
    const t = $("totals");
    if (c) for (const k of ["received", "judged", "quarantined", "duplicates", "late", "pending"]) t.dataset[k] = String(c[k]);
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
    setStatus("연결 중…", "connecting");
    socket = new WebSocket(socketUrl());
    socket.onopen = () => { retry = 500; setStatus("연결됨 · 실시간", "live"); };
    live = false;
    socket.onmessage = (event) => {
      heard = Date.now();
      let frame;
      try { frame = JSON.parse(event.data); } catch (e) { return; }
      handle(frame);
    };
    socket.onclose = (event) => {
      const why = event.reason ? ` · ${event.reason}` : "";
      setStatus(`끊김 (${event.code}${why}) · ${(retry / 1000).toFixed(1)}초 뒤 마지막 구간부터 다시 받습니다`, "down");
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 5000);
    };
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
      const li = el("li", "line");
      li.dataset.msgId = line.msg_id;
      li.append(el("span", "who", `${line.character_id} · ${line.viewer_id}`), el("span", "body", line.body));
      if (line.donation_amount > 0) li.append(el("span", "won", `${line.donation_amount.toLocaleString("ko-KR")}원`));
      list.prepend(li);
    }
    while (list.children.length > CHAT_KEEP) list.lastElementChild.remove();
    for (const w of frame.open) openWindows.set(`${w.character_id}|${w.window_ns}`, w);
    showOpen();
  }
  function showOpen() {
    const box = $("open");
    box.replaceChildren();
    for (const w of openWindows.values()) {
      const d = el("div", "open-window");
      d.append(el("b", null, w.character_id), el("span", null, ` ${hhmmss(w.window_ns)} 구간 · ${w.lines}줄 들어오는 중`));
      box.append(d);
    }
  }

  // -- finished windows -------------------------------------------------------------------------
  function evidenceTable(row) {
    const table = el("table", "evidence");
    const head = el("tr");
    for (const h of ["dataset", "field", "agg", "value"]) head.append(el("th", null, h));
    table.append(el("thead"));
    table.tHead.append(head);
    const body = el("tbody");
    for (const e of row.evidence || []) {
      const tr = el("tr");
      tr.append(el("td", null, e.dataset), el("td", null, e.field), el("td", null, e.agg ?? ""),
                el("td", null, e.value === null ? "null" : typeof e.value === "object" ? JSON.stringify(e.value) : e.value));
      body.append(tr);
    }
    table.append(body);
    return table;
  }
  function explained(row) {
    const d = el("details", "evidence-box");
    const s = el("summary", null, "근거 보기");
    d.append(s, evidenceTable(row));
    if (row.hedge) d.append(el("p", "hedge", row.hedge));
    return d;
  }
  function card(row) {
    const c = el("div", "card");
    c.dataset.msgId = row.msg_id;
    const top = el("div", "card-top");
    top.append(el("span", "rank", `${row.rank_in_window}위`), el("span", "msg", row.msg_id), el("span", "viewer", row.viewer_id));
    c.append(top);
    if (bodies.has(row.msg_id)) c.append(el("p", "body", bodies.get(row.msg_id)));
    c.append(el("p", "summary", row.summary), explained(row));
    return c;
  }
  function item(row, key) {
    const li = el("li", "item");
    li.dataset.msgId = row.msg_id;
    li.dataset.verdict = row.verdict;
    const head = el("div", "item-head");
    head.append(el("span", "msg", row.msg_id), el("span", "summary", row.summary));
    const button = el("button", "pickup", "집어 올리기");
    button.type = "button";
    button.dataset.msgId = row.msg_id;
    button.addEventListener("click", () => pickUp(row.msg_id, button));
    li.append(head, explained(row), button, el("span", "picked-note"));
    return li;
  }
  function checksList(checks) {
    const ul = el("ul", "checks");
    for (const c of checks) {
      const li = el("li", c.passed ? "pass" : "fail", `${c.passed ? "✓" : "✗"} ${c.name}`);
      li.title = c.title + (c.passed ? "" : ` — ${c.detail}`);
      ul.append(li);
    }
    return ul;
  }
  function addWindow(frame) {
    const key = `${frame.character_id}/${frame.window_start}`;
    lastKey = key;
    openWindows.delete(`${frame.character_id}|${frame.window_end_ns - Number(document.body.dataset.windowSeconds) * 1e9}`);
    showOpen();
    if (windows.has(key)) return; // keyed by window: a window already shown is never redrawn
    latencies.push(frame.latency_ms);
    const art = el("article", "window");
    art.dataset.key = key;
    art.dataset.seq = frame.seq;
    const head = el("header");
    const failed = frame.checks.filter((c) => !c.passed).length;
    head.append(el("b", "character", frame.character_id), el("span", "span", `${frame.window_start} – ${frame.window_end.slice(11)}`),
                el("span", "lines", `${frame.lines}줄`), el("span", "latency", `판정 지연 ${Math.round(frame.latency_ms)} ms`),
                el("span", failed ? "checks-state fail" : "checks-state pass", failed ? `검증 ${failed}개 실패` : "자동 검증 통과"),
                el("span", "late-count"));
    art.append(head, checksList(frame.checks));
    const picks = el("div", "picks");
    const ranked = frame.verdicts.filter((r) => r.verdict === PICK);
    if (!ranked.length) picks.append(el("p", "empty", "이 구간에는 답변할 질문이 없습니다."));
    for (const r of ranked) picks.append(card(r));
    art.append(picks);
    const groups = el("div", "groups");
    for (const reason of REASONS) {
      const rows = frame.verdicts.filter((r) => r.verdict === reason);
      if (!rows.length) continue;
      const g = el("details", "group");
      g.dataset.verdict = reason;
      g.append(el("summary", null, `${reason} (${rows.length})`));
      const ul = el("ul");
      for (const r of rows) ul.append(item(r, key));
      g.append(ul);
      groups.append(g);
    }
    if (frame.quarantined.length) {
      const g = el("details", "group quarantine");
      g.append(el("summary", null, `격리된 줄 (${frame.quarantined.length})`));
      const ul = el("ul");
      for (const q of frame.quarantined) ul.append(el("li", null, `${q.msg_id ?? "(id 없음)"} · ${q.reason_code} · ${q.reason}`));
      g.append(ul);
      groups.append(g);
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
    for (const r of frame.verdicts) if (picked.has(r.msg_id)) markPickup(picked.get(r.msg_id));
    showTotals();
  }
  function addLate(frame) {
    if (lateSeen.has(frame.late_seq)) return; // sent again on resume: shown once
    lateSeen.add(frame.late_seq);
    const art = windows.get(`${frame.character_id}/${frame.window_start}`);
    if (!art) return;
    const box = art.querySelector(".late-box");
    const lines = frame.verdicts.map((r) => `${r.msg_id} (${r.verdict})`).join(", ");
    box.append(el("p", "late", `늦게 온 줄 ${frame.lines}개 — 이 구간의 판정은 그대로 두고 따로 판정: ${lines}`));
    const n = art.querySelector(".late-count");
    n.textContent = `늦게 온 줄 ${Number(n.dataset.n || 0) + frame.lines}`;
    n.dataset.n = String(Number(n.dataset.n || 0) + frame.lines);
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
      li.append(el("span", "reason-code", q.reason_code), el("span", "who", q.character_id ?? "(캐릭터 없음)"),
                el("code", "text", q.text), el("span", "reason", q.reason));
      list.prepend(li);
    }
    if (frame.count > frame.lines.length) list.prepend(el("li", "panel-more", `이 묶음의 ${frame.count - frame.lines.length}줄은 생략 (모두 격리 집계에 들어 있습니다)`));
    while (list.children.length > PANEL_KEEP) list.lastElementChild.remove();
    $("panel-box").hidden = false;
  }

  // -- picking up a skipped line ------------------------------------------------------------------
  async function pickUp(msgId, button) {
    button.disabled = true;
    const headers = { "content-type": "application/json" };
    try {
      const res = await fetch("/live/pickup", { method: "POST", headers, body: JSON.stringify({ msg_id: msgId }) });
      const out = await res.json();
      if (!res.ok) throw new Error(out.error || res.status);
      markPickup(out);
    } catch (e) {
      button.disabled = false;
      button.textContent = `다시 시도 (${e.message})`;
    }
  }
  function markPickup(frame) {
    picked.set(frame.msg_id, frame);
    for (const li of document.querySelectorAll(`li.item[data-msg-id="${CSS.escape(frame.msg_id)}"]`)) {
      li.classList.add("picked");
      const b = li.querySelector("button.pickup");
      b.disabled = true;
      b.textContent = "집어 올림";
      li.querySelector(".picked-note").textContent = `운영자가 ${hhmmss(frame.picked_at_ns)}에 집어 올림 · 답한 것으로 셉니다`;
      const art = li.closest("article.window");
      const picks = art.querySelector(".picks");
      if (!picks.querySelector(`.card[data-msg-id="${CSS.escape(frame.msg_id)}"]`)) {
        const c = el("div", "card operator");
        c.dataset.msgId = frame.msg_id;
        const top = el("div", "card-top");
        top.append(el("span", "rank", "운영자 선택"), el("span", "msg", frame.msg_id));
        c.append(top, el("p", "summary", `${frame.verdict}(으)로 빠졌던 줄을 ${hhmmss(frame.picked_at_ns)}에 운영자가 집어 올렸습니다.`));
        picks.append(c);
      }
    }
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
                 el("span", "feed-counts", `받음 ${f.received} · 보냄 ${f.sent} · 확인 ${f.acknowledged} · 격리 ${f.quarantined}` +
                    ` · 중복 ${f.duplicates}(따로 셈) · 재연결 ${f.reconnects}` + (f.unpriced ? ` · 환율 없음 ${f.unpriced}` : "")));
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
  async function pollFeeds() {
    try {
      const res = await fetch("/live/status");
      if (res.ok) {
        const st = await res.json();
        showFeeds(st.feeds || [], st.broadcasts || {});
      }
    } catch (e) { /* the service is restarting: the socket's status says so */ }
    setTimeout(pollFeeds, 2000);
  }

  connect();
  pollFeeds();
})();
