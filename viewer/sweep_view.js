/*
 * How it works. The sweep panel. sweep.js (2,000 cases, dictionary-encoded by build.py) is
 * loaded the first time the panel opens. The summary counts, per system and tier, failing
 * runs and AMBIGUOUS runs apart (an AMBIGUOUS kernel run is honest, not a pass: it is shown
 * in its own colour and shape). Below it every run can be filtered by fault kind, system,
 * tier and outcome and sorted by dollars or seed; each row links to #seed=..&system=..&tier=..
 * which plays its compact timeline (replays/*.js, loaded lazily by viewer.js). The shrunk
 * stories (smallest failing plans) are listed with their links too.
 */
(function () {
  "use strict";
  const D = window.VIEWER_DATA;
  if (!D) return;
  const $ = (id) => document.getElementById(id);
  const V = () => window.viewer;
  let rows = null;  // one per sweep run: {seed, system, tier, refunded, outcome, reasons, kinds, cls}
  const PAGE = 40;

  function el(tag, attrs, text) { return V().el(tag, attrs, text); }
  function cellOf(W, c) {
    if (!c) return null;
    return { refunded: c[0], outcome: W.codes[c[1]], reasons: W.codes[c[2]] || [],
             resolution_ms: c[3], extra: c[4] ? W.codes[c[4]] : null };
  }
  function clsOf(cell) {
    if (cell.reasons.length) return "fail";
    return /AMBIGUOUS/.test(cell.outcome) ? "amb" : "ok";
  }
  const SYM = { fail: "\u2717", amb: "?", ok: "\u2713" };
  const WORD = { fail: "FAIL", amb: "AMBIGUOUS", ok: "ok" };

  function allRows(W) {
    const out = [];
    for (const cs of W.cases) {
      const kinds = W.codes[cs[2]] || [];
      cs[3].forEach((c, j) => {
        const cell = cellOf(W, c);
        if (!cell) return;
        const [system, tier] = W.columns[j].split("/");
        out.push(Object.assign({ seed: cs[0], plan: cs[1], system, tier, kinds, cls: clsOf(cell) }, cell));
      });
    }
    return out;
  }

  function open() {
    if (document.body.getAttribute("data-sweep") === "ready") return;
    const t0 = performance.now();
    const s = document.createElement("script");
    s.src = D.sweep_file || "sweep.js";
    s.onload = () => {
      window.VIEWER_SWEEP_LOAD_MS = performance.now() - t0;
      const t1 = performance.now();
      render(window.VIEWER_SWEEP);
      window.VIEWER_SWEEP_RENDER_MS = performance.now() - t1;
      document.body.setAttribute("data-sweep", "ready");
    };
    s.onerror = () => { $("sweep-body").textContent = "sweep.js is missing: run python -m viewer.build."; };
    document.head.appendChild(s);
  }

  function render(W) {
    const body = $("sweep-body");
    body.textContent = "";
    if (!W.cases.length) { body.textContent = "No sweep cases in results/."; return; }
    rows = allRows(W);
    body.appendChild(el("p", {}, W.cases.length + " random fault plans (seeds " + W.cases[0][0] +
      "\u2013" + W.cases[W.cases.length - 1][0] + "), each run against every system at every " +
      "tier. Per system and tier: failing runs (\u2717) and AMBIGUOUS runs (?, honest but " +
      "unresolved: a person must reconcile them), apart."));
    body.appendChild(summaryTable());
    body.appendChild(filters());
    body.appendChild(el("div", { id: "sweep-list" }));
    body.appendChild(stories());
    body.appendChild(el("div", { id: "sweep-case" }));
    applyFilters();
  }

  function summaryTable() {
    const tw = el("div", { class: "tablewrap" });
    const tab = el("table", { "data-testid": "sweep-summary" });
    const hr = el("tr");
    hr.appendChild(el("th", {}, "system"));
    for (const t of D.tiers) hr.appendChild(el("th", {}, t));
    tab.appendChild(hr);
    for (const s of D.systems) {
      const tr = el("tr");
      tr.appendChild(el("th", {}, s));
      for (const t of D.tiers) {
        const mine = rows.filter((r) => r.system === s && r.tier === t);
        const f = mine.filter((r) => r.cls === "fail").length;
        const a = mine.filter((r) => r.cls === "amb").length;
        const td = el("td", { class: f ? "fail" : a ? "amb" : "ok", "data-cell": s + "/" + t,
                              "data-fail": String(f), "data-ambiguous": String(a) });
        td.appendChild(el("div", {}, (f ? "\u2717 " : "\u2713 ") + f + " fail"));
        if (a) td.appendChild(el("div", {}, "? " + a + " AMBIGUOUS"));
        tr.appendChild(td);
      }
      tab.appendChild(tr);
    }
    tw.appendChild(tab);
    return tw;
  }

  function select(id, label, options) {
    const lab = el("label", {}, label + " ");
    const s = el("select", { id });
    for (const [v, t] of options) s.appendChild(el("option", { value: v }, t));
    s.addEventListener("change", () => applyFilters());
    lab.appendChild(s);
    return lab;
  }
  function filters() {
    const kinds = [...new Set(rows.flatMap((r) => r.kinds))].sort();
    const f = el("form", { id: "sweep-filters", class: "filters" });
    f.addEventListener("submit", (e) => e.preventDefault());
    f.appendChild(select("f-kind", "fault", [["", "any"]].concat(kinds.map((k) => [k, k]))));
    f.appendChild(select("f-system", "system", [["", "any"]].concat(D.systems.map((s) => [s, s]))));
    f.appendChild(select("f-tier", "tier", [["", "any"]].concat(D.tiers.map((t) => [t, t]))));
    f.appendChild(select("f-outcome", "outcome", [["notok", "FAIL or AMBIGUOUS"], ["fail", "FAIL"],
      ["amb", "AMBIGUOUS"], ["ok", "ok"], ["", "any"]]));
    f.appendChild(select("f-sort", "sort", [["seed", "seed"], ["dollars-desc", "dollars, most first"],
      ["dollars-asc", "dollars, least first"]]));
    const seed = el("label", {}, "seed ");
    const inp = el("input", { id: "sweep-seed", type: "number", min: "0", style: "width:6em" });
    inp.addEventListener("change", () => applyFilters());
    seed.appendChild(inp);
    f.appendChild(seed);
    return f;
  }

  function applyFilters(page) {
    const v = (id) => $(id).value;
    const seed = v("sweep-seed") === "" ? null : Number(v("sweep-seed"));
    let list = rows.filter((r) => (!v("f-kind") || r.kinds.includes(v("f-kind"))) &&
      (!v("f-system") || r.system === v("f-system")) && (!v("f-tier") || r.tier === v("f-tier")) &&
      (v("f-outcome") === "" || (v("f-outcome") === "notok" ? r.cls !== "ok" : r.cls === v("f-outcome"))) &&
      (seed === null || r.seed === seed));
    const sort = v("f-sort");
    if (sort !== "seed") {
      const d = sort === "dollars-desc" ? -1 : 1;
      list = list.slice().sort((a, b) => d * (a.refunded - b.refunded) || a.seed - b.seed);
    }
    const box = $("sweep-list");
    box.textContent = "";
    const n = page || 1;
    box.appendChild(el("p", { "data-testid": "sweep-count", "data-value": String(list.length) },
                       list.length + " runs match" + (list.length > PAGE * n ? "; the first " + PAGE * n + " below." : ".")));
    const tw = el("div", { class: "tablewrap" });
    const tab = el("table", { class: "runs-table" });
    const hr = el("tr");
    for (const h of ["seed", "system", "tier", "outcome", "$", "fault kinds", ""]) hr.appendChild(el("th", {}, h));
    tab.appendChild(hr);
    for (const r of list.slice(0, PAGE * n)) {
      const tr = el("tr", { class: r.cls, "data-seed": String(r.seed), "data-system": r.system, "data-tier": r.tier });
      tr.appendChild(el("td", {}, String(r.seed)));
      tr.appendChild(el("td", {}, r.system));
      tr.appendChild(el("td", {}, r.tier));
      const oc = el("td", {});
      oc.appendChild(el("span", { class: "mark " + r.cls }, SYM[r.cls] + " " + WORD[r.cls]));
      oc.appendChild(document.createTextNode(" " + r.outcome + (r.reasons.length ? " \u00b7 " + r.reasons.join(", ") : "")));
      tr.appendChild(oc);
      tr.appendChild(el("td", {}, "$" + r.refunded));
      tr.appendChild(el("td", { class: "kinds" }, r.kinds.join(", ")));
      const go = el("td", {});
      const a = el("a", { href: "#seed=" + r.seed + "&tier=" + r.tier + "&systems=" +
                          (r.system === "kernel" ? "kernel" : r.system + ",kernel"), class: "play-link" },
                   "\u25b6 play");
      a.addEventListener("click", (e) => {
        e.preventDefault();
        showCase(r.seed, r.system, r.tier);
        V().playSeed(r.seed, r.system, r.tier);
      });
      go.appendChild(a);
      tr.appendChild(go);
      tab.appendChild(tr);
    }
    tw.appendChild(tab);
    box.appendChild(tw);
    if (list.length > PAGE * n) {
      const more = el("button", { type: "button" }, "show " + PAGE + " more");
      more.addEventListener("click", () => applyFilters(n + 1));
      box.appendChild(more);
    }
  }

  function stories() {
    const box = el("div", { class: "stories" });
    box.appendChild(el("h3", {}, "Shrunk stories: the smallest failing plan per system"));
    const ul = el("ul");
    for (const s of D.shrunk || []) {
      const li = el("li");
      if (!s.found) { li.textContent = s.system + ": no failing plan found"; ul.appendChild(li); continue; }
      li.appendChild(el("b", {}, s.system + ": "));
      li.appendChild(document.createTextNode((s.summary || "") + " \u2192 $" + s.refunded + " (" +
        (s.reasons || []).join(", ") + ") at "));
      for (const t of s.failing_tiers || []) {
        const a = el("a", { href: "#story=shrunk-" + s.system + "&tier=" + t, class: "story-link" }, t);
        li.appendChild(a);
        li.appendChild(document.createTextNode(" "));
      }
      ul.appendChild(li);
    }
    box.appendChild(ul);
    return box;
  }

  function showCase(seed, system, tier) {
    const W = window.VIEWER_SWEEP, view = $("sweep-case");
    if (!W || !view) return;
    const cs = W.cases.find((c) => c[0] === seed);
    view.textContent = "";
    if (!cs) return;
    view.setAttribute("data-seed", String(seed));
    view.appendChild(el("h3", {}, "Sweep case, seed " + seed));
    view.appendChild(el("p", {}, "Plan: " + (cs[1] || "(defaults)") + ". Fault kinds: " +
                                 (W.codes[cs[2]] || []).join(", ") + "."));
    const cmd = el("code", { class: "cmd", "data-testid": "replay-command" },
                   "python run_all.py --replay " + seed + " --system " + system + " --tier " + tier + " --json");
    view.appendChild(el("p", {}, "Its full timeline (every hash), from the repository root; the " +
                                 "output opens here with \u201copen a file\u201d:"));
    view.appendChild(cmd);
  }

  window.VIEWER_SWEEP_PANEL = { open, showCase };
})();
