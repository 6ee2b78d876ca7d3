// Apply (after a confirmation) or reject (with a reason) a sheet tuning suggestion.
// JSON POSTs carrying the session cookie the service set when the page was opened with ?token=;
// the page reloads to show the new state.
"use strict";

(function () {
  const query = new URLSearchParams(window.location.search);
  if (query.has("token")) {  // the cookie carries it from here on: not left in the address bar
    query.delete("token");
    history.replaceState(null, "", window.location.pathname + (query.toString() ? "?" + query : "") + window.location.hash);
  }
  const flash = document.getElementById("flash");
  const operator = document.getElementById("operator");
  // Who applies or rejects is recorded with the decision; the name is kept in this browser.
  try { operator.value = window.localStorage.getItem("verdicts.operator") || ""; } catch (e) { /* storage off */ }
  operator.addEventListener("change", function () {
    try { window.localStorage.setItem("verdicts.operator", operator.value.trim()); } catch (e) { /* storage off */ }
  });

  function who() {
    const name = operator.value.trim();
    if (!name) { show("반영하거나 거절하는 운영자 이름을 적어 주세요.", true); operator.focus(); }
    return name;
  }

  function show(text, bad) {
    flash.textContent = text;
    flash.className = bad ? "flash bad" : "flash";
    flash.hidden = false;
  }

  async function post(path, body) {
    const headers = { "Content-Type": "application/json" };
    const response = await fetch(path, { method: "POST", headers: headers, body: JSON.stringify(body), credentials: "same-origin" });
    let data = {};
    try { data = await response.json(); } catch (e) { data = { error: "no answer from the service" }; }
    return { ok: response.ok, data: data };
  }

  async function act(button, path, body) {
    const card = button.closest("article.card");
    card.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    const result = await post(path, body);
    if (result.ok) {
      show(result.data.message, false);
      window.setTimeout(function () { window.location.reload(); }, 900);
    } else {
      show(result.data.error || "failed", true);
      card.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
    }
  }

  document.addEventListener("click", function (event) {
    const button = event.target.closest("button");
    if (!button) return;
    const id = button.dataset.id;
    if (button.classList.contains("apply")) {
      const by = who();
      if (!by) return;
      if (!window.confirm(id + "\n" + button.dataset.change + "\n\n이 제안을 설정표에 반영할까요? 다음에 열리는 구간부터 새 값으로 판정합니다.")) return;
      act(button, "/suggestions/apply", { suggestion_id: id, by: by });
    } else if (button.classList.contains("reject")) {
      const input = button.closest(".actions").querySelector("input.reason");
      const reason = input.value.trim();
      if (!reason) { show("거절 사유를 적어 주세요.", true); input.focus(); return; }
      const by = who();
      if (!by) return;
      act(button, "/suggestions/reject", { suggestion_id: id, reason: reason, by: by });
    }
  });
})();
