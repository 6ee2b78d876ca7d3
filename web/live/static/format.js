// How the console writes figures and codes for people: durations as people read them ("4분 23초",
// "88일"), amounts in won, instants in the rules' time zone (KST), and the Korean wording of every
// reason code, check, error and state (the catalogue `web.messages` hands the page as
// JSON in `data-messages`). The same rules as `rules.common.korean.duration` on the Python side.
(() => {
  "use strict";
  const body = document.body;
  const tz = body.dataset.timezone || "Asia/Seoul";
  let catalogue = { reasons: {}, checks: {}, errors: {}, states: {}, unknown: { prefix: "기타 사유" } };
  try { catalogue = JSON.parse(body.dataset.messages || "{}"); } catch (e) { /* keep the empty one */ }

  function duration(seconds) {
    if (seconds === null || seconds === undefined || Number.isNaN(Number(seconds))) return "—";
    seconds = Number(seconds);
    if (seconds < 0) return "-" + duration(-seconds);
    if (seconds < 10 && seconds !== Math.trunc(seconds)) return `${seconds.toFixed(1)}초`;
    const s = Math.round(seconds);
    const days = Math.floor(s / 86400), hours = Math.floor((s % 86400) / 3600);
    const minutes = Math.floor((s % 3600) / 60), secs = s % 60;
    if (days >= 10) return `${days.toLocaleString("ko-KR")}일`;
    for (const [big, bu, small, su] of [[days, "일", hours, "시간"], [hours, "시간", minutes, "분"], [minutes, "분", secs, "초"]]) {
      if (big) return `${big}${bu}` + (small ? ` ${small}${su}` : "");
    }
    return `${secs}초`;
  }
  function ms(milliseconds) {
    // a latency: under a second in ms, else as a duration
    if (milliseconds === null || milliseconds === undefined) return "—";
    return milliseconds < 1000 ? `${Math.round(milliseconds)}ms` : duration(milliseconds / 1000);
  }
  const won = (n) => `${Number(n || 0).toLocaleString("ko-KR")}원`;
  const count = (n) => Number(n || 0).toLocaleString("ko-KR");
  const timeFmt = new Intl.DateTimeFormat("ko-KR", { timeZone: tz, hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
  const dayFmt = new Intl.DateTimeFormat("ko-KR", { timeZone: tz, month: "long", day: "numeric" });
  function time(msSinceEpoch) { return timeFmt.format(new Date(msSinceEpoch)); }
  function instant(msSinceEpoch, now) {
    // the time of day, with the day when it is not today (in the rules' time zone)
    const d = new Date(msSinceEpoch);
    const today = dayFmt.format(new Date(now ?? Date.now()));
    const day = dayFmt.format(d);
    return (day === today ? "" : `${day} `) + timeFmt.format(d);
  }
  function span(startMs, endMs, now) { return `${instant(startMs, now)}–${time(endMs)}`; }
  const reason = (code) => (code && catalogue.reasons[code]) || `${catalogue.unknown.prefix}${code ? ` (${code})` : ""}`;
  const checkTitle = (id) => catalogue.checks[id] || id;
  const error = (key) => catalogue.errors[key] || key;
  const state = (key) => catalogue.states[key] || key;
  function value(v) {
    // an evidence value as people read it: no `null`, no brackets
    if (v === null || v === undefined) return "(비어 있음)";
    if (typeof v === "boolean") return v ? "예" : "아니오";
    if (Array.isArray(v)) return v.length ? v.map(value).join(", ") : "(없음)";
    if (typeof v === "number") return v.toLocaleString("ko-KR");
    if (typeof v === "object") return Object.entries(v).map(([k, x]) => `${k} ${value(x)}`).join(", ");
    return String(v);
  }
  window.VerdictsFormat = { duration, ms, won, count, time, instant, span, reason, checkTitle, error, state, value, tz };
})();
