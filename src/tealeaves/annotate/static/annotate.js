// One task at a time: GET /api/next, POST /api/answer (intrusion) or POST /api/step (ProxAnn, drawn by
// proxann.js). The server sends only what is shown (no answers); this page shows it and reports the
// choice, its position and the time taken.
"use strict";
(function () {
  const params = new URLSearchParams(window.location.search);
  const names = ["participant", "PROLIFIC_PID", "workerId", "participant_id"];
  let participant = null;
  for (const n of names) { if (params.get(n)) { participant = params.get(n); break; } }
  const el = (id) => document.getElementById(id);
  let current = null, shownAt = 0, busy = false;

  function status(msg) { el("status").textContent = msg || ""; }

  async function post(body, url) {
    for (let attempt = 0; attempt < 4; attempt++) {
      try {
        const r = await fetch(url || "api/answer", {method: "POST", credentials: "same-origin",
                                              headers: {"Content-Type": "application/json"},
                                              body: JSON.stringify(body)});
        if (r.ok || (r.status >= 400 && r.status < 500)) return r;
      } catch (e) { /* network error: retry (the server stores a repeat once) */ }
      await new Promise((res) => setTimeout(res, 300 * (attempt + 1)));
    }
    throw new Error("the server cannot be reached");
  }

  function render(data) {
    const p = data.progress;
    el("progress-text").textContent = `Task ${Math.min(p.answered + 1, p.total)} of ${p.total}`;
    el("bar").max = p.total; el("bar").value = p.answered;
    if (data.done) {
      el("task").style.display = "none";
      el("proxann").hidden = true;
      el("progress-text").textContent = `All ${p.total} tasks done`;
      el("code").textContent = data.code;
      el("done").style.display = "block";
      if (data.redirect) { window.location.href = data.redirect; }
      return;
    }
    if (data.task.kind === "proxann") {
      el("task").style.display = "none";
      current = null;
      window.tlProxAnn.show(data, {participant, post, load, status});
      return;
    }
    current = data.task;
    el("prompt").textContent = current.prompt;
    el("text").hidden = !current.text;
    el("text").textContent = current.text || "";
    const box = el("options");
    box.replaceChildren();
    current.options.forEach((opt, i) => {
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.position = String(i);
      const num = document.createElement("span");
      num.className = "num"; num.textContent = String(i + 1);
      b.append(num, document.createTextNode(opt));
      b.addEventListener("click", () => choose(i));
      box.append(b);
    });
    shownAt = performance.now();
    busy = false;
  }

  async function load() {
    const r = await fetch("api/next?participant=" + encodeURIComponent(participant),
                          {credentials: "same-origin"});
    const data = await r.json();
    if (!r.ok) { status(data.error || "error"); return; }
    render(data);
  }

  async function choose(i) {
    if (busy || !current) return;
    busy = true;
    el("options").querySelectorAll("button").forEach((b) => { b.disabled = true; });
    const body = {participant, item: current.item, options: current.options, choice: i,
                  response_ms: Math.round(performance.now() - shownAt)};
    try {
      const r = await post(body);
      if (!r.ok && r.status !== 409) { status((await r.json()).error || "error"); }
      else { status(""); }
      await load();
    } catch (e) { status(e.message + "; please try again"); busy = false;
      el("options").querySelectorAll("button").forEach((b) => { b.disabled = false; }); }
  }

  document.addEventListener("keydown", (ev) => {
    if (!current || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const k = parseInt(ev.key, 10);
    if (k >= 1 && k <= current.options.length) { ev.preventDefault(); choose(k - 1); }
  });

  if (!participant) {
    status("This link has no participant id (?participant=...).");
    el("task").style.display = "none";
  }
  else { load().catch((e) => status(e.message)); }
})();
