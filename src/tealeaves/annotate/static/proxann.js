// A ProxAnn task in three steps (Hoyle et al. 2025): name the category the keywords and example
// documents share, rate how well each document fits it, rank the documents. Each step is sent to
// POST /api/step as soon as it is answered, so a participant who leaves goes on where they stopped.
// Every text is inserted as text, never as HTML.
"use strict";
window.tlProxAnn = (function () {
  const el = (id) => document.getElementById(id);
  const CLARITY = ["Not at all: hardly any of them fit", "Not clearly: a few of them fit",
                   "Partly: some fit, some do not", "Clearly: most of them fit",
                   "Very clearly: all or nearly all fit"];
  const FIT = ["No, it does not fit", "It mostly does not fit", "It partly fits", "It mostly fits",
               "Yes, it fits"];
  let ctx = null, task = null, state = null, shownAt = 0, busy = false, order = [];

  function scale(box, name, labels, legend) {
    // a fieldset of radio buttons 1..5, each with its words
    box.replaceChildren();
    const lg = document.createElement("legend");
    lg.textContent = legend;
    box.append(lg);
    labels.forEach((words, i) => {
      const label = document.createElement("label");
      const input = document.createElement("input");
      input.type = "radio"; input.name = name; input.value = String(i + 1); input.required = true;
      const num = document.createElement("span");
      num.className = "num"; num.textContent = String(i + 1);
      label.append(input, num, document.createTextNode(words));
      box.append(label);
    });
  }

  function chosen(name) {
    const c = document.querySelector(`input[name="${name}"]:checked`);
    return c ? parseInt(c.value, 10) : null;
  }

  function only(id) {
    for (const s of ["px-label-step", "px-rate-step", "px-rank-step"]) el(s).hidden = s !== id;
    shownAt = performance.now();
    busy = false;
  }

  async function send(body) {
    if (busy) return false;
    busy = true;
    const full = Object.assign({participant: ctx.participant, item: task.item,
                                response_ms: Math.round(performance.now() - shownAt)}, body);
    try {
      const r = await ctx.post(full, "api/step");
      if (r.ok) { ctx.status(""); return true; }
      const err = (await r.json()).error || "error";
      if (r.status === 409) { ctx.status(err); await ctx.load(); return false; }  // state moved on
      ctx.status(err); busy = false; return false;
    } catch (e) { ctx.status(e.message + "; please try again"); busy = false; return false; }
  }

  function context(open) {
    el("px-words").textContent = task.words.join(", ");
    const ol = el("px-exemplars");
    ol.replaceChildren();
    for (const text of task.exemplars) {
      const li = document.createElement("li");
      li.textContent = text;
      ol.append(li);
    }
    el("px-context").open = open;
  }

  function showLabel() {
    context(true);
    scale(el("px-clarity"), "clarity", CLARITY, "How clearly do the keywords and documents fit your category?");
    el("px-label").value = "";
    only("px-label-step");
    el("px-label").focus();
  }

  function nextUnrated() {
    return task.documents.findIndex((d) => !(d.id in state.ratings));
  }

  function showRate(i) {
    context(false);
    const doc = task.documents[i];
    const done = Object.keys(state.ratings).length;
    el("px-rate-progress").textContent = `Document ${done + 1} of ${task.documents.length}`;
    el("px-doc").textContent = doc.text;
    el("px-doc").dataset.id = doc.id;
    scale(el("px-rating"), "rating", FIT, `Does this document fit your category \u201c${state.label}\u201d?`);
    only("px-rate-step");
    el("px-doc").focus();
  }

  function drawRank(focusId, dir) {
    const ol = el("px-rank");
    ol.replaceChildren();
    order.forEach((doc, i) => {
      const li = document.createElement("li");
      li.dataset.id = doc.id;
      const place = document.createElement("span");
      place.className = "place"; place.textContent = String(i + 1);
      const text = document.createElement("div");
      text.className = "doc-text"; text.textContent = doc.text;
      const moves = document.createElement("div");
      moves.className = "moves";
      for (const [d, words] of [[-1, "Up"], [1, "Down"]]) {
        const b = document.createElement("button");
        b.type = "button"; b.textContent = (d < 0 ? "\u2191 " : "\u2193 ") + words;
        b.setAttribute("aria-label", `Move document ${i + 1} ${words.toLowerCase()}`);
        b.disabled = (d < 0 && i === 0) || (d > 0 && i === order.length - 1);
        b.dataset.dir = String(d);
        b.addEventListener("click", () => move(i, d));
        moves.append(b);
      }
      li.append(place, text, moves);
      ol.append(li);
    });
    if (focusId) {
      const li = ol.querySelector(`li[data-id="${focusId}"]`);
      const b = li && (li.querySelector(`button[data-dir="${dir}"]:not([disabled])`) ||
                       li.querySelector("button:not([disabled])"));
      if (b) b.focus();
    }
  }

  function move(i, d) {
    const j = i + d;
    if (j < 0 || j >= order.length) return;
    [order[i], order[j]] = [order[j], order[i]];
    drawRank(order[j].id, d);
  }

  function showRank() {
    context(false);
    order = task.documents.filter((d) => d.rank);
    el("px-rank-help").textContent =
      `Put the documents in order of how well they fit your category \u201c${state.label}\u201d: the one that ` +
      "fits best at the top, the one that fits least at the bottom. Move a document with its Up and Down buttons.";
    drawRank(null, 0);
    only("px-rank-step");
  }

  function step() {
    if (!state.label) { showLabel(); return; }
    const i = nextUnrated();
    if (i >= 0) showRate(i); else showRank();
  }

  el("px-label-step").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const label = el("px-label").value.trim(), clarity = chosen("clarity");
    if (!label) { ctx.status("Write a category first."); return; }
    if (clarity === null) { ctx.status("Choose how clearly they fit (1 to 5)."); return; }
    if (await send({step: "label", label, clarity})) {
      state.label = label; state.clarity = clarity;
      step();
    }
  });

  el("px-rate-step").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const rating = chosen("rating"), id = el("px-doc").dataset.id;
    if (rating === null) { ctx.status("Choose how well the document fits (1 to 5)."); return; }
    if (await send({step: "rate", document: id, rating})) {
      state.ratings[id] = rating;
      step();
    }
  });

  el("px-rank-submit").addEventListener("click", async () => {
    if (await send({step: "rank", ranking: order.map((d) => d.id)})) await ctx.load();
  });

  document.addEventListener("keydown", (ev) => {
    if (el("px-rate-step").hidden || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const k = parseInt(ev.key, 10);
    if (k >= 1 && k <= 5) {
      const input = document.querySelector(`input[name="rating"][value="${k}"]`);
      if (input) { ev.preventDefault(); input.checked = true; input.focus(); }
    }
  });

  return {
    show(data, helpers) {
      ctx = helpers; task = data.task; state = data.state;
      el("proxann").hidden = false;
      step();
    },
  };
})();
