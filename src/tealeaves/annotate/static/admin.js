// The admin page: the token is sent once (POST, JSON) and kept in an HttpOnly cookie; the page
// then polls /api/admin/summary. Every value is inserted as text, never as HTML.
"use strict";
(function () {
  const el = (id) => document.getElementById(id);
  const fmt = (x) => (x === null || x === undefined) ? "–" : Number(x).toFixed(3);
  const ci = (c) => c ? `${fmt(c[0])} – ${fmt(c[1])}` : "–";
  let timer = null;

  async function refresh() {
    const r = await fetch("api/admin/summary");
    const s = await r.json();
    if (r.status === 403) {
      el("login").classList.remove("hidden");
      el("progress").textContent = "Log in with the admin token.";
      if (timer) { clearInterval(timer); timer = null; }
      return;
    }
    if (!r.ok) { el("progress").textContent = s.error; return; }
    el("login").classList.add("hidden");
    el("progress").textContent =
      `${s.responses} responses from ${s.answering} answering participants (${s.participants} started, ` +
      `${s.finished} finished); ${s.tasks} tasks`;
    const px = s.family === "proxann";
    el("scores").classList.toggle("hidden", px);
    el("px-block").classList.toggle("hidden", !px);
    const pxBody = document.querySelector("#px-scores tbody");
    pxBody.replaceChildren();
    for (const [m, v] of Object.entries((s.proxann || {}).summary || {})) {
      const tr = document.createElement("tr");
      for (const cell of [m, v.topics, fmt(v.tau_fit), ci(v.tau_fit_ci), fmt(v.tau_rank), ci(v.tau_rank_ci),
                          fmt(v.human_tau_fit), fmt(v.agreement.krippendorff_alpha_interval),
                          fmt(v.distractor_rating)]) {
        const td = document.createElement("td"); td.textContent = String(cell); tr.append(td);
      }
      pxBody.append(tr);
    }
    const body = document.querySelector("#scores tbody");
    body.replaceChildren();
    const sc = (s.scores || {}).summary || {};
    for (const [m, v] of Object.entries(sc)) {
      const tr = document.createElement("tr");
      for (const cell of [m, fmt(v.model_precision), ci(v.model_precision_ci), v.topics ?? "–",
                          fmt(v.topic_log_odds), ci(v.topic_log_odds_ci), v.documents ?? "–"]) {
        const td = document.createElement("td"); td.textContent = String(cell); tr.append(td);
      }
      body.append(tr);
    }
    const notes = [];
    const scored = s.scores || s.proxann;
    if (scored && scored.excluded_annotators.length) {
      notes.push(`excluded by attention checks: ${scored.excluded_annotators.join(", ")}`);
    }
    if (s.proxann && s.proxann.incomplete) {
      notes.push(`${s.proxann.incomplete} answers not finished yet (no ranking): not scored`);
    }
    if (s.scores_error) notes.push(s.scores_error);
    if (!scored && !s.scores_error) {
      notes.push("no key loaded or no responses yet: scores appear when the server has a key (--key) and responses");
    }
    el("notes").textContent = notes.join("; ");
    if (!timer) timer = setInterval(refresh, 5000);
  }

  el("login").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const r = await fetch("api/admin/login", {method: "POST", headers: {"Content-Type": "application/json"},
                                              body: JSON.stringify({token: el("token").value})});
    el("token").value = "";
    if (!r.ok) { el("progress").textContent = "Wrong admin token."; return; }
    refresh();
  });
  refresh().catch((e) => { el("progress").textContent = e.message; });
})();
