/*
 * How it works. window.VIEWER_DATA (traces.js, written by viewer/build.py) holds one recorded
 * run per fault x system x tier. The page shows the runs of the chosen fault and tier for the
 * chosen systems. Their events are merged into one sequence ordered by simulated time; the
 * playback cursor is a position in that sequence (0 = nothing shown, N = everything), so play,
 * pause, the arrow keys and the scrub bar all just move the cursor and call render().
 * render() reveals, per run, the events before the cursor: glyphs on the timeline lanes, the
 * journal lines on disk, the receipt the kernel computed after the latest journal entry
 * (precomputed by build.py with kernel.receipts()), the money moved and, at the end, the
 * verdict. The state diagram is drawn from the kernel's transition table (build.py exports
 * kernel.edges()) and highlights the state of the kernel run at the cursor.
 * Sweep cases live in sweep.js, loaded by a <script> tag the first time the sweep panel opens;
 * the few sweep cells the simulator traced in full live in sweep_traces.js, loaded the first
 * time one is played (the player then shows that seed instead of a fixed-table fault).
 * The URL hash (#fault=...&tier=...&systems=...&seed=...&play=0) selects runs, for links and
 * tests.
 */
(function () {
  "use strict";
  const D = window.VIEWER_DATA;
  const $ = (id) => document.getElementById(id);
  const SVGNS = "http://www.w3.org/2000/svg";
  const C = { orange: "#E69F00", sky: "#56B4E9", green: "#009E73", yellow: "#F0E442",
              blue: "#0072B2", vermillion: "#D55E00", purple: "#CC79A7", ink: "#1b1b1b",
              grey: "#6b6b6b", light: "#d0d0d0" };
  const LANES = [
    ["agent", "agent"], ["kernel", "kernel / system"], ["journal", "journal (disk)"],
    ["network", "network"], ["target", "target (payments)"], ["world", "the world"]];
  const LANE_OF = Object.fromEntries(LANES.map((l, i) => [l[0], i]));
  const STATE_STYLE = {
    PROPOSED: [C.grey, "P"], AUTHORIZED: [C.grey, "A"], DISPATCHED: [C.purple, "D"],
    COMMITTED: [C.green, "\u2713"], REFUSED: [C.blue, "\u2298"], AMBIGUOUS: [C.orange, "?"],
  };
  const SHORT = { naive: "N", idempotency: "I", durable: "D", kernel: "K" };
  const GEOM = { col: 34, laneH: 30, top: 40, pad: 18, gutter: 118 };

  if (!D) {
    document.body.insertAdjacentHTML("afterbegin",
      "<p class='warn'>traces.js is missing: run <code>python run_all.py</code> or " +
      "<code>python -m viewer.build</code>, then reload.</p>");
    return;
  }

  const RUNS = {};
  for (const r of Object.values(D.runs)) RUNS[r.fault + "|" + r.system + "|" + r.tier] = r;
  const ROWS = {};
  for (const r of D.rows) ROWS[r.fault + "|" + r.system + "|" + r.tier] = r;

  let SWEEP_RUNS = {};  // "seed|system|tier" -> run, once sweep_traces.js is loaded
  const S = { fault: "crash before ack", tier: "t1", systems: ["naive", "kernel"], seed: null,
              cursor: 0, playing: false, timer: null, speed: 1 };
  let shown = [];   // runs on screen, in D.systems order
  let merged = [];  // [{r: run index, e: event index}] in playback order
  let panels = [];  // per shown run: its DOM handles

  // ------------------------------------------------------------------ small helpers

  function el(tag, attrs, text) {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, v);
    if (text !== undefined) n.textContent = text;
    return n;
  }
  function sv(tag, attrs, text) {
    const n = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, v);
    if (text !== undefined) n.textContent = text;
    return n;
  }
  function ms(t) {
    if (t === null || t === undefined) return "\u2014";
    if (t < 1000) return t + " ms";
    return (t / 1000).toFixed(t < 10000 ? 2 : 1) + " s";
  }
  function dollars(n) { return "$" + n; }
  function verdictMark(v) { return v === "ok" ? "\u2713 ok" : "\u2717 " + v; }

  // ------------------------------------------------------------------ glyphs per actor

  function glyph(ev) {
    const g = sv("g", { class: "glyph" });
    const a = ev.actor, k = ev.kind;
    let fill = C.grey, txt = "", shape = "circle";
    if (a === "agent") {
      fill = C.sky; txt = { submit: "S", decide: "$", answer: "\u21a9" }[k] || "\u2022";
    } else if (a === "kernel") {
      shape = "square"; fill = C.yellow;
      txt = { wait: "W", recover: "R", reply: "\u21a9", surface: "!", replay: "\u27f2" }[k] || "K";
    } else if (a === "journal") {
      shape = "doc";
      if (STATE_STYLE[k]) [fill, txt] = STATE_STYLE[k];
      else txt = { REJECTED: "\u2260", LATE: "L", verify: "v", decided: "d", started: "s",
                   result: "r" }[k] || "\u2022";
      if (k === "REJECTED") fill = C.blue;
      if (k === "verify") fill = "#8c8c8c";
    } else if (a === "network") {
      shape = (k === "answer" || k === "lost" || k === "undelivered") ? "tri-left" : "tri";
      fill = (k === "lost" || k === "undelivered") ? "#fff" : C.green;
      txt = (k === "lost" || k === "undelivered") ? "\u2715" : (k === "query" ? "?" : "");
    } else if (a === "target") {
      shape = "diamond"; fill = C.orange;
      txt = { applied: "$", deduplicated: "=", conflict: "\u2260", dropped: "\u2715",
              lookup: "?" }[k] || "";
    } else if (a === "world") {
      if (k === "crash") { shape = "bolt"; fill = C.vermillion; }
      else if (k === "restart") { shape = "circle"; fill = C.purple; txt = "\u21bb"; }
      else { shape = "hex"; fill = C.purple;
             txt = { revoke_lease: "L", manual_refund: "$", withdraw_approval: "W" }[k] || "!"; }
    }
    const stroke = C.ink;
    if (shape === "circle") g.appendChild(sv("circle", { r: 9, fill, stroke }));
    else if (shape === "square") g.appendChild(sv("rect", { x: -8, y: -8, width: 16, height: 16,
                                                           rx: 2, fill, stroke }));
    else if (shape === "doc") g.appendChild(sv("path", { d: "M-8,-10 H4 L8,-6 V10 H-8 Z", fill,
                                                        stroke }));
    else if (shape === "tri") g.appendChild(sv("path", { d: "M-8,-8 L9,0 L-8,8 Z", fill, stroke }));
    else if (shape === "tri-left") g.appendChild(sv("path", { d: "M8,-8 L-9,0 L8,8 Z", fill,
                                                             stroke }));
    else if (shape === "diamond") g.appendChild(sv("path", { d: "M0,-10 L10,0 L0,10 L-10,0 Z",
                                                            fill, stroke }));
    else if (shape === "hex") g.appendChild(sv("path", { d: "M-5,-9 H5 L10,0 L5,9 H-5 L-10,0 Z",
                                                        fill, stroke }));
    else if (shape === "bolt") g.appendChild(sv("path", {
      d: "M2,-12 L-7,2 H-1 L-3,12 L7,-2 H1 Z", fill, stroke }));
    if (txt) {
      const dark = fill === C.yellow || fill === "#fff" || fill === C.sky || fill === C.orange;
      g.appendChild(sv("text", { "text-anchor": "middle", dy: "0.35em", "font-size": 10,
                                 "font-weight": 700, fill: dark ? C.ink : "#fff" }, txt));
    }
    g.appendChild(sv("title", {}, "t = " + ms(ev.t) + " \u00b7 " + a + " \u00b7 " + ev.label));
    return g;
  }

  // ------------------------------------------------------------------ legend

  function buildLegend() {
    const ul = $("legend-list");
    const items = [
      [{ actor: "agent", kind: "decide", label: "" }, "agent: submit S, decide $, answer \u21a9"],
      [{ actor: "kernel", kind: "recover", label: "" }, "kernel: recover R, wait W, reply \u21a9, surface !"],
      [{ actor: "journal", kind: "DISPATCHED", label: "" }, "journal entry on disk: DISPATCHED (fsync) before the send"],
      [{ actor: "journal", kind: "COMMITTED", label: "" }, "COMMITTED \u2713: the target confirmed it"],
      [{ actor: "journal", kind: "REFUSED", label: "" }, "REFUSED \u2298: lease dead or premise stale"],
      [{ actor: "journal", kind: "AMBIGUOUS", label: "" }, "AMBIGUOUS ?: nobody can know, said out loud"],
      [{ actor: "network", kind: "send", label: "" }, "network: request leaves (? = lookup)"],
      [{ actor: "network", kind: "undelivered", label: "" }, "network: answer lost or reaches a dead worker"],
      [{ actor: "target", kind: "applied", label: "" }, "target: refund applied $, deduplicated ="],
      [{ actor: "world", kind: "crash", label: "" }, "the world: the worker crashes"],
      [{ actor: "world", kind: "restart", label: "" }, "the world: the worker restarts"],
      [{ actor: "world", kind: "manual_refund", label: "" }, "the world moves: manual refund $, lease revoked L"],
    ];
    for (const [ev, text] of items) {
      const li = el("li");
      const s = sv("svg", { width: 26, height: 26, viewBox: "-13 -13 26 26", "aria-hidden": "true" });
      s.appendChild(glyph(ev));
      li.appendChild(s);
      li.appendChild(el("span", {}, text));
      ul.appendChild(li);
    }
    const li = el("li");
    li.innerHTML = "<span class='mark ok'>\u2713 ok</span> <span class='mark fail'>\u2717 FAIL</span>" +
      "<span>verdict against the $20 approved</span>";
    ul.appendChild(li);
  }

  // ------------------------------------------------------------------ selection controls

  function buildControls() {
    $("fixed-seed").textContent = D.fixed_seed;
    const list = $("fault-list");
    D.faults.forEach((f, i) => {
      const b = el("button", { type: "button", "data-fault": f });
      b.appendChild(el("span", {}, (i + 1) + ". " + f));
      b.appendChild(el("span", { class: "marks" }));
      b.addEventListener("click", () => { S.fault = f; S.seed = null; select(false); });
      const li = el("li"); li.appendChild(b); list.appendChild(li);
    });
    for (const t of D.tiers) {
      const id = "tier-" + t;
      const lab = el("label", { for: id, title: D.tier_labels[t] || t });
      const inp = el("input", { type: "radio", name: "tier", id, value: t });
      inp.addEventListener("change", () => { S.tier = t; select(false); });
      lab.appendChild(inp);
      lab.appendChild(document.createTextNode(" " + tierShort(t)));
      $("tiers").appendChild(lab);
    }
    for (const s of D.systems) {
      const id = "sys-" + s;
      const lab = el("label", { for: id, title: D.system_labels[s] || s });
      const inp = el("input", { type: "checkbox", id, value: s });
      inp.addEventListener("change", () => {
        S.systems = D.systems.filter((x) => $("sys-" + x).checked);
        select(false);
      });
      lab.appendChild(inp);
      lab.appendChild(document.createTextNode(" " + s));
      $("systems").appendChild(lab);
    }
    $("btn-play").addEventListener("click", togglePlay);
    $("btn-fwd").addEventListener("click", () => { pause(); seek(S.cursor + 1); });
    $("btn-back").addEventListener("click", () => { pause(); seek(S.cursor - 1); });
    $("btn-start").addEventListener("click", () => { pause(); seek(0); });
    $("btn-end").addEventListener("click", () => { pause(); seek(merged.length); });
    $("scrub").addEventListener("input", (e) => { pause(); seek(Number(e.target.value)); });
    $("speed").addEventListener("change", (e) => { S.speed = Number(e.target.value); });
    document.addEventListener("keydown", onKey);
  }

  function tierShort(t) {
    return { t1: "t1 dedupes + lookup", t1d: "t1d dedupe only", t2: "t2 lookup only",
             t3: "t3 neither" }[t] || t;
  }

  function onKey(e) {
    const tag = (e.target && e.target.tagName) || "";
    if (tag === "INPUT" && e.target.type !== "range" && e.target.type !== "radio" &&
        e.target.type !== "checkbox") return;
    if (tag === "SELECT" || tag === "TEXTAREA" || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === " " || e.key === "Spacebar") {
      if (tag === "SUMMARY") return;
      e.preventDefault(); togglePlay();
    } else if (e.key === "ArrowRight") { e.preventDefault(); pause(); seek(S.cursor + 1); }
    else if (e.key === "ArrowLeft") { e.preventDefault(); pause(); seek(S.cursor - 1); }
    else if (e.key === "Home") { e.preventDefault(); pause(); seek(0); }
    else if (e.key === "End") { e.preventDefault(); pause(); seek(merged.length); }
    else if (e.key === "]" || e.key === "[") {
      const i = D.faults.indexOf(S.fault) + (e.key === "]" ? 1 : -1);
      S.fault = D.faults[(i + D.faults.length) % D.faults.length]; S.seed = null; select(false);
    } else if (e.key === "t") {
      S.tier = D.tiers[(D.tiers.indexOf(S.tier) + 1) % D.tiers.length]; select(false);
    }
  }

  // ------------------------------------------------------------------ URL hash

  function readHash() {
    const h = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (h.get("fault") && D.faults.includes(h.get("fault"))) S.fault = h.get("fault");
    if (h.get("tier") && D.tiers.includes(h.get("tier"))) S.tier = h.get("tier");
    if (h.get("systems") !== null) {
      S.systems = D.systems.filter((s) => h.get("systems").split(",").includes(s));
    }
    S.wantSeed = /^\d+$/.test(h.get("seed") || "") ? Number(h.get("seed")) : null;
    return h.get("play") !== "0";
  }
  function writeHash() {
    const h = new URLSearchParams({ fault: S.fault, tier: S.tier, systems: S.systems.join(",") });
    if (S.seed !== null) h.set("seed", String(S.seed));
    try { history.replaceState(null, "", "#" + h.toString()); } catch (err) { /* file:// quirk */ }
  }

  // ------------------------------------------------------------------ choosing runs

  function select(autoplay) {
    pause();
    for (const b of document.querySelectorAll("#fault-list button")) {
      const f = b.getAttribute("data-fault");
      b.setAttribute("aria-current", f === S.fault && S.seed === null ? "true" : "false");
      const marks = b.querySelector(".marks");
      marks.textContent = "";
      for (const s of D.systems) {
        const row = ROWS[f + "|" + s + "|" + S.tier];
        const v = row ? row.verdict : null;
        const m = el("span", { class: "mark " + (v === "ok" ? "ok" : v ? "fail" : "na"),
                               title: s + ": " + (row ? row.verdict + ", $" + row.refunded +
                                      ", " + row.outcome : "no run") },
                     SHORT[s] + (v === "ok" ? "\u2713" : v ? "\u2717" : "\u2013"));
        marks.appendChild(m);
      }
    }
    for (const t of D.tiers) $("tier-" + t).checked = t === S.tier;
    for (const s of D.systems) $("sys-" + s).checked = S.systems.includes(s);
    const pool = S.seed === null ? RUNS : SWEEP_RUNS;
    const what = S.seed === null ? S.fault : S.seed;
    shown = S.systems.map((s) => pool[what + "|" + s + "|" + S.tier]).filter(Boolean);
    merged = [];
    shown.forEach((run, r) => run.events.forEach((ev, e) => merged.push({ r, e, t: ev.t })));
    merged.sort((x, y) => x.t - y.t || x.r - y.r || x.e - y.e);
    const missing = S.systems.filter((s) => !shown.some((r) => r.system === s));
    $("caption").textContent = (S.seed === null ? "\u201c" + S.fault + "\u201d" :
      "Sweep case, seed " + S.seed +
      (shown.length ? " (" + (shown[0].plan_summary || "default plan") + ")" : "")) +
      " at " + (D.tier_labels[S.tier] || S.tier) +
      (shown.length ? "" : S.seed !== null && S.systems.length
        ? " \u2014 no recorded timeline for this seed here; the sweep panel below gives its " +
          "replay command." : " \u2014 choose at least one system.") +
      (missing.length && shown.length ? " No recorded timeline for: " + missing.join(", ") + "." : "");
    buildPanels();
    $("scrub").max = String(merged.length);
    writeHash();
    seek(0);
    if (autoplay) setTimeout(play, 500);
  }

  // ------------------------------------------------------------------ one panel per run

  function buildPanels() {
    const box = $("runs");
    box.textContent = "";
    panels = shown.map((run, r) => {
      const art = el("article", { class: "run box", "data-run": run.id, "data-system": run.system });
      const head = el("header");
      head.appendChild(el("h3", {}, run.system));
      head.appendChild(el("span", { class: "sub" }, D.system_labels[run.system] || ""));
      art.appendChild(head);
      const tl = el("div", { class: "tl" });
      const lanes = laneLabels();
      const scroll = el("div", { class: "scroll" });
      tl.appendChild(lanes); tl.appendChild(scroll);
      art.appendChild(tl);
      const now = el("p", { class: "now", "aria-live": "off" });
      art.appendChild(now);
      const cards = el("div", { class: "cards" });
      const disk = el("div", { class: "card disk" });
      disk.appendChild(el("h4", {}, "journal on disk"));
      const diskList = el("ol");
      disk.appendChild(diskList);
      const receipt = el("div", { class: "card receipt-card", "data-testid": "receipt" });
      const money = el("div", { class: "card money", "data-testid": "money" });
      cards.append(disk, receipt, money);
      art.appendChild(cards);
      const log = el("details", { class: "log" });
      const logHead = el("summary", {}, "every event so far, as text");
      const logList = el("ol");
      log.append(logHead, logList);
      art.appendChild(log);
      box.appendChild(art);
      const svg = timeline(run, geometry(run.events.length, scroll.clientWidth || 600), r);
      scroll.appendChild(svg.svg);
      return { run, art, head, svg, scroll, now, diskList, receipt, money, logList };
    });
  }

  function laneLabels() {
    const h = GEOM.top + LANES.length * GEOM.laneH + 8;
    const narrow = window.innerWidth < 600;  // short names leave room for the events
    const s = sv("svg", { width: narrow ? 64 : GEOM.gutter, height: h, class: "lanes",
                          "aria-hidden": "true" });
    s.appendChild(sv("text", { x: 8, y: 16, "font-size": 10, fill: C.grey }, "time \u2192"));
    LANES.forEach(([name, label], i) => {
      s.appendChild(sv("text", { x: 8, y: GEOM.top + i * GEOM.laneH + GEOM.laneH / 2 + 4,
                                 "font-size": 11.5, fill: C.ink }, narrow ? name : label));
    });
    return s;
  }

  // one column per event, widened to fill the panel when there is room
  function geometry(n, avail) {
    const col = Math.max(GEOM.col, Math.min(64, Math.floor((avail - 2 * GEOM.pad) / Math.max(n, 1))));
    return { col, x: (i) => GEOM.pad + i * col + col / 2 };
  }

  function timeline(run, geo, r) {
    const n = run.events.length;
    const xOf = geo.x;
    const W = GEOM.pad * 2 + n * geo.col;
    const H = GEOM.top + LANES.length * GEOM.laneH + 8;
    const svg = sv("svg", { width: W, height: H, role: "img",
                            "aria-label": "Timeline of " + run.id });
    const defs = sv("defs");
    const pat = sv("pattern", { id: "hatch-" + run.id, width: 8, height: 8,
                                patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" });
    pat.appendChild(sv("rect", { width: 8, height: 8, fill: "#fdf1e8" }));
    pat.appendChild(sv("line", { x1: 0, y1: 0, x2: 0, y2: 8, stroke: "#e7b08f", "stroke-width": 3 }));
    defs.appendChild(pat);
    svg.appendChild(defs);
    LANES.forEach((_, i) => {
      const y = GEOM.top + i * GEOM.laneH;
      svg.appendChild(sv("rect", { x: 0, y, width: W, height: GEOM.laneH,
                                   fill: i % 2 ? "#fafafa" : "#ffffff" }));
    });
    // outage bands: from the crash to the restart
    const bands = [];
    for (const iv of run.intervals || []) {
      const from = run.events.findIndex((e) => e.t >= iv.from);
      let to = run.events.findIndex((e) => e.t >= iv.to && e.actor === "world" &&
                                           e.kind === "restart");
      if (to < 0) to = n - 1;
      if (from < 0) continue;
      const g = sv("g", { class: "outage" });
      const rect = sv("rect", { x: xOf(from), y: GEOM.top - 12, width: 0,
                                height: LANES.length * GEOM.laneH + 12,
                                fill: "url(#hatch-" + run.id + ")", opacity: 0.9 });
      const lab = sv("text", { x: xOf(from) + 4, y: GEOM.top - 2, "font-size": 10,
                               fill: "#8a3300" }, iv.label || "outage");
      g.append(rect, lab);
      svg.appendChild(g);
      bands.push({ g, rect, from, to });
    }
    // time axis: a tick wherever simulated time moves on
    const cursorBar = sv("rect", { x: 0, y: GEOM.top - 14, width: geo.col,
                                   height: LANES.length * GEOM.laneH + 14, fill: C.yellow,
                                   opacity: 0.35, visibility: "hidden" });
    svg.appendChild(cursorBar);
    let lastT = null, tick = 0;
    run.events.forEach((ev, i) => {
      if (ev.t !== lastT) {
        const x = xOf(i) - geo.col / 2 + 1;
        svg.appendChild(sv("line", { x1: x, y1: 14, x2: x, y2: H - 6, stroke: C.light,
                                     "stroke-dasharray": "2 3" }));
        svg.appendChild(sv("text", { x: x + 2, y: tick % 2 ? 23 : 11, "font-size": 9.5,
                                     fill: C.grey }, ms(ev.t)));
        tick += 1; lastT = ev.t;
      }
    });
    const glyphs = run.events.map((ev, i) => {
      const lane = LANE_OF[ev.actor] !== undefined ? LANE_OF[ev.actor] : 1;
      const g = glyph(ev);
      const y = GEOM.top + lane * GEOM.laneH + GEOM.laneH / 2;
      g.setAttribute("transform", "translate(" + xOf(i) + "," + y + ")");
      g.setAttribute("visibility", "hidden");
      g.setAttribute("data-i", i);
      g.style.cursor = "pointer";
      g.addEventListener("click", () => {  // jump to this event (touch has no tooltips)
        pause();
        seek(merged.findIndex((m) => m.r === r && m.e === i) + 1);
      });
      if (ev.actor === "world" && ev.kind === "crash") {
        const line = sv("line", { x1: 0, y1: -y + GEOM.top - 12, x2: 0,
                                  y2: GEOM.top + LANES.length * GEOM.laneH - y,
                                  stroke: C.vermillion, "stroke-width": 2,
                                  "stroke-dasharray": "5 3" });
        g.insertBefore(line, g.firstChild);
        g.appendChild(sv("text", { x: -9, y: 4, "font-size": 10, "font-weight": 700,
                                   "text-anchor": "end", fill: "#8a3300", "paint-order": "stroke",
                                   stroke: "#fff", "stroke-width": 3 }, "crash"));
      }
      if (ev.actor === "journal" && ev.kind === "DISPATCHED") {
        g.appendChild(sv("text", { y: 21, "text-anchor": "middle", "font-size": 8.5,
                                   fill: C.ink }, "fsync"));
      }
      svg.appendChild(g);
      return g;
    });
    const ring = sv("circle", { r: 14, fill: "none", stroke: C.ink, "stroke-width": 2,
                                visibility: "hidden" });
    svg.appendChild(ring);
    return { svg, glyphs, bands, ring, cursorBar, geo };
  }

  // ------------------------------------------------------------------ playback

  function counts() {
    const c = shown.map(() => 0);
    for (let i = 0; i < S.cursor; i++) c[merged[i].r] += 1;
    return c;
  }
  function seek(k) {
    S.cursor = Math.max(0, Math.min(merged.length, k));
    render();
  }
  function play() {
    if (S.playing || !merged.length) return;
    if (S.cursor >= merged.length) seek(0);
    S.playing = true;
    $("btn-play").innerHTML = "&#8214; pause";
    tickPlay();
  }
  function tickPlay() {
    if (!S.playing) return;
    if (S.cursor >= merged.length) { pause(); return; }
    const prev = S.cursor > 0 ? merged[S.cursor - 1].t : null;
    const next = merged[S.cursor].t;
    const delay = (prev === next ? 380 : 760) / S.speed;
    S.timer = setTimeout(() => { seek(S.cursor + 1); tickPlay(); }, S.cursor === 0 ? 150 : delay);
  }
  function pause() {
    S.playing = false;
    if (S.timer) clearTimeout(S.timer);
    S.timer = null;
    const b = $("btn-play");
    if (b) b.innerHTML = "&#9654; play";
  }
  function togglePlay() { if (S.playing) pause(); else play(); }

  // ------------------------------------------------------------------ drawing the cursor

  function render() {
    const c = counts();
    panels.forEach((p, r) => renderPanel(p, c[r], S.cursor > 0 && merged[S.cursor - 1].r === r));
    $("scrub").value = String(S.cursor);
    const cur = S.cursor > 0 ? merged[S.cursor - 1] : null;
    $("readout").textContent = "step " + S.cursor + " / " + merged.length +
      (cur ? " \u00b7 t = " + ms(cur.t) : "");
    document.body.setAttribute("data-cursor", String(S.cursor));
    document.body.setAttribute("data-done", S.cursor >= merged.length ? "true" : "false");
    renderDiagram();
  }

  function renderPanel(p, n, isCurrent) {
    const run = p.run, evs = run.events, xOf = p.svg.geo.x;
    p.svg.glyphs.forEach((g, i) => g.setAttribute("visibility", i < n ? "visible" : "hidden"));
    for (const b of p.svg.bands) {
      const vis = n > b.from;
      b.g.setAttribute("visibility", vis ? "visible" : "hidden");
      const end = Math.min(b.to, Math.max(b.from, n - 1));
      b.rect.setAttribute("width", Math.max(0, xOf(end) - xOf(b.from)));
    }
    const last = n > 0 ? n - 1 : -1;
    if (last >= 0) {
      const tr = p.svg.glyphs[last].getAttribute("transform");
      p.svg.ring.setAttribute("transform", tr);
      p.svg.ring.setAttribute("visibility", isCurrent ? "visible" : "hidden");
      p.svg.cursorBar.setAttribute("x", xOf(last) - p.svg.geo.col / 2);
      p.svg.cursorBar.setAttribute("visibility", "visible");
      const x = xOf(last), w = p.scroll.clientWidth;
      if (x < p.scroll.scrollLeft + 20 || x > p.scroll.scrollLeft + w - 40) {
        p.scroll.scrollLeft = Math.max(0, x - w / 2);
      }
    } else {
      p.svg.ring.setAttribute("visibility", "hidden");
      p.svg.cursorBar.setAttribute("visibility", "hidden");
      p.scroll.scrollLeft = 0;
    }
    p.now.textContent = "";
    if (last >= 0) {
      const ev = evs[last];
      p.now.appendChild(el("b", {}, "t = " + ms(ev.t) + " \u00b7 " + ev.actor + ": "));
      p.now.appendChild(document.createTextNode(ev.label));
      if (ev.state) p.now.appendChild(el("span", { class: "sub" }, "  (state " + ev.state + ")"));
    } else {
      p.now.appendChild(el("span", { class: "sub" }, "Nothing has happened yet: press play."));
    }
    renderDisk(p, n);
    renderLog(p, n);
    renderReceipt(p, n);
    renderMoney(p, n);
    p.art.setAttribute("data-shown", String(n));
  }

  function entryText(entry) {
    if (!entry) return "";
    const bits = ["#" + entry.seq, entry.kind, "t=" + ms(entry.ts)];
    if (entry.kind === "PROPOSED" && entry.payload) bits.push("$" + entry.payload.amount);
    if (entry.attempt) bits.push("attempt " + entry.attempt);
    if (entry.via) bits.push("via " + entry.via);
    if (entry.reason) bits.push(entry.reason);
    if (entry.hash) bits.push("hash " + entry.hash.slice(0, 8));
    return bits.join("  ");
  }

  function renderDisk(p, n) {
    const run = p.run;
    if (p.diskN === n) return;
    const before = p.diskN === undefined ? n : p.diskN;
    p.diskN = n;
    const ol = p.diskList;
    ol.textContent = "";
    const j = run.journal || [];
    const bySeq = {};
    for (const e of j) if (e && e.seq !== undefined) bySeq[e.seq] = e;
    for (let i = 0; i < n; i++) {
      const ev = run.events[i];
      const count = ol.children.length;
      if (ev.actor === "journal" && ev.details && ev.details.seq !== undefined) {
        const entry = bySeq[ev.details.seq];
        const li = el("li", { class: ev.kind === "DISPATCHED" ? "fsync" : "" },
                      entry ? entryText(entry) : ev.label);
        if (ev.kind === "DISPATCHED") li.title = "written and fsync'd before the send";
        ol.appendChild(li);
      } else if (ev.actor === "journal" && ["decided", "started", "result"].includes(ev.kind)) {
        ol.appendChild(el("li", {}, ev.kind + "  t=" + ms(ev.t) + "  " + ev.label));
      } else if (ev.actor === "world" && ev.kind === "crash" && ev.details && ev.details.torn) {
        ol.appendChild(el("li", { class: "torn", title: "a torn write: no newline" },
                          "torn: " + ev.details.torn));
      } else if (ev.actor === "journal" && ev.kind === "verify") {
        ol.appendChild(el("li", {}, "restart: " + ev.label));
      }
      if (ol.children.length > count && i >= before) ol.lastChild.classList.add("new");
    }
    if (!ol.children.length) {
      const none = run.system === "naive" || run.system === "idempotency";
      ol.appendChild(el("li", {}, none ? "(this system keeps no journal: after a crash nothing " +
                                         "says what was started)" : "(empty)"));
    }
  }

  function renderLog(p, n) {
    const ol = p.logList;
    while (ol.children.length > n) ol.removeChild(ol.lastChild);
    for (let i = ol.children.length; i < n; i++) {
      const ev = p.run.events[i];
      ol.appendChild(el("li", {}, ms(ev.t) + " \u00b7 " + ev.actor + " \u00b7 " + ev.label +
                                  (ev.state ? " (state " + ev.state + ")" : "")));
    }
  }

  function field(dl, name, value, pending, shownText) {
    const dt = el("dt", {}, name);
    const dd = el("dd", { "data-field": name, "data-value": pending ? "" : JSON.stringify(value) },
                  pending ? "\u2026" : shownText);
    if (pending) dd.classList.add("pending");
    dl.append(dt, dd);
  }

  function authText(a) {
    if (!a) return "\u2014 (never authorized)";
    const lease = a.lease || {};
    const facts = Object.entries(a.facts || {}).map(([k, v]) => k + "=" + v).join(", ");
    const stale = (a.stale || []).length ? "; stale: " + a.stale.join(", ") : "; facts held";
    return "lease " + lease.id + (lease.live ? " live" : " dead") + (lease.revoked ? " (revoked)" : "") +
      stale + " (" + facts + ")";
  }

  function renderReceipt(p, n) {
    const run = p.run, box = p.receipt;
    let rs = null;
    for (const [i, r] of run.receipt_steps || []) if (i < n) rs = r;
    const key = JSON.stringify(rs) + (n >= run.events.length);
    if (p.receiptKey === key) return;
    const fresh = p.receiptKey !== undefined;
    p.receiptKey = key;
    box.textContent = "";
    box.appendChild(el("h4", {}, "receipt"));
    if (run.system !== "kernel") {
      box.appendChild(el("p", {}, run.system === "durable"
        ? "No receipt: the engine records the decision and replays it, re-running a started " +
          "step; nothing says whether it was still allowed or whether it landed once."
        : "No receipt: nothing records what was decided, whether it was allowed, or whether " +
          "it happened."));
      return;
    }
    if (!rs || !rs.length) {
      box.appendChild(el("p", { class: "sub" }, "Fills in as the journal is written."));
      return;
    }
    rs.forEach((r, k) => {
      const dl = el("dl", { class: "receipt", "data-effect": r.effect_id, "data-index": k });
      field(dl, "effect", r.effect_id, false, r.effect_id.slice(0, 12) + "\u2026");
      field(dl, "proposed", r.proposed, false, String(r.proposed));
      field(dl, "authorized", r.authorized, false, authText(r.authorized));
      const open = r.final === null;
      const why = { true: " (the target confirmed it)", false: " (provably never applied)",
                    unknown: open ? " (not confirmed yet)" : " (nobody can know: said so)" };
      field(dl, "executed", r.executed, false, r.executed + (why[r.executed] || ""));
      field(dl, "recorded", r.recorded, false, String(r.recorded));
      field(dl, "final", r.final, false, r.final === null ? "\u2014 (still open)" : r.final);
      field(dl, "reason", r.reason, false, r.reason === null ? "\u2014" : r.reason);
      if (fresh) for (const dd of dl.querySelectorAll("dd")) dd.classList.add("fresh");
      box.appendChild(dl);
    });
  }

  function renderMoney(p, n) {
    const run = p.run, box = p.money;
    const done = n >= run.events.length;
    const amount = n > 0 ? run.money[n - 1] : 0;
    const key = amount + "|" + done;
    if (p.moneyKey === key) return;
    p.moneyKey = key;
    box.textContent = "";
    box.appendChild(el("h4", {}, "money moved"));
    const big = el("div", { class: "amount", "data-testid": "refunded",
                            "data-value": String(amount) }, dollars(amount));
    box.appendChild(big);
    box.appendChild(el("div", {}, "refunded on order 881; approved " + dollars(run.approved)));
    const scale = Math.max(run.approved * 3, amount, 1);
    const bar = el("div", { class: "bar", "aria-hidden": "true" });
    bar.appendChild(el("div", { class: "fill" + (amount > run.approved ? " over" : ""),
                                style: "width:" + (100 * amount / scale) + "%" }));
    bar.appendChild(el("div", { class: "approved", style: "left:" + (100 * run.approved / scale) + "%",
                                title: "approved" }));
    box.appendChild(bar);
    const v = el("p", { "data-testid": "verdict", "data-value": done ? run.verdict : "" });
    if (done) {
      v.appendChild(el("span", { class: "verdict " + (run.verdict === "ok" ? "ok" : "fail") },
                       verdictMark(run.verdict)));
      v.appendChild(document.createTextNode(" " + (run.reasons.length ? run.reasons.join(", ") :
                                                   "no violation")));
    } else {
      v.appendChild(el("span", { class: "verdict pending" }, "running\u2026"));
    }
    box.appendChild(v);
    let badge = p.head.querySelector(".verdict");
    if (!badge) { badge = el("span"); p.head.insertBefore(badge, p.head.children[1]); }
    badge.className = "verdict " + (done ? (run.verdict === "ok" ? "ok" : "fail") : "pending");
    badge.textContent = done ? verdictMark(run.verdict) + " \u00b7 " + dollars(run.refunded) +
      " refunded" : "running\u2026 " + dollars(amount);
    if (done) {
      box.appendChild(el("div", { "data-testid": "outcome", "data-value": run.outcome },
                         "outcome: " + run.outcome));
      if (run.expected) {
        const ex = run.expected;
        const m = run.matches_reference;
        box.appendChild(el("div", { class: "sub" }, "reference (DESIGN \u00a76): " +
          dollars(ex.dollars) + (ex.outcome ? " " + ex.outcome : "") + ", " + ex.verdict +
          (m === true ? " \u2014 matches" : m === false ? " \u2014 DIFFERS" : "")));
      }
      if (run.metrics && run.metrics.resolution_ms !== null && run.metrics.resolution_ms !== undefined) {
        box.appendChild(el("div", { class: "sub" }, "resolved after " + ms(run.metrics.resolution_ms)));
      }
    }
  }

  // ------------------------------------------------------------------ state diagram

  // top to bottom: a rank per row (from build.py's layout), parallel states side by side
  const DIA = { colW: 138, rowH: 66, nodeW: 118, nodeH: 30, left: 14, top: 24 };
  let diagramParts = null;

  function buildDiagram() {
    const svg = $("diagram-svg");
    const d = D.diagram;
    const maxRank = Math.max(...d.nodes.map((x) => x.rank));
    const maxRow = Math.max(...d.nodes.map((x) => x.row));
    const W = DIA.left * 2 + (maxRow + 1) * DIA.colW;
    const H = DIA.top + maxRank * DIA.rowH + 26 + DIA.nodeH + 16;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("width", W);
    svg.setAttribute("height", H);
    svg.style.maxWidth = "100%";
    svg.style.height = "auto";
    svg.setAttribute("aria-label", "Kernel state diagram generated from kernel.edges()");
    const defs = sv("defs");
    for (const [id, col] of [["arr", "#777"], ["arr-on", C.ink]]) {
      const m = sv("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 9,
                               markerHeight: 9, orient: "auto-start-reverse",
                               markerUnits: "userSpaceOnUse" });
      m.appendChild(sv("path", { d: "M0,0 L10,5 L0,10 Z", fill: col }));
      defs.appendChild(m);
    }
    svg.appendChild(defs);
    const pos = {};
    for (const nd of d.nodes) {
      pos[nd.id] = { x: DIA.left + nd.row * DIA.colW,
                     y: DIA.top + nd.rank * DIA.rowH + (nd.rank === maxRank ? 26 : 0), nd };
    }
    // parallel edges (same from and to) share one arrow, their events joined
    const pairs = {};
    for (const [a, ev, b] of d.edges) {
      const k = a + ">" + b;
      (pairs[k] = pairs[k] || { a, b, events: [] }).events.push(ev);
    }
    const edges = {};
    let skips = 0;
    for (const { a, b, events } of Object.values(pairs)) {
      const p = pos[a], q = pos[b];
      const cx1 = p.x + DIA.nodeW / 2, cx2 = q.x + DIA.nodeW / 2;
      const y2 = q.y;
      const skip = q.nd.rank - p.nd.rank > 1;
      let path, lx, ly, anchor = "start";
      if (skip) {
        const x1 = p.x + DIA.nodeW, y1 = p.y + DIA.nodeH / 2;
        const bend = x1 + 26 + 14 * skips;
        skips += 1;
        path = "M" + x1 + "," + y1 + " C" + bend + "," + y1 + " " + cx2 + "," + (y2 - 90) +
          " " + cx2 + "," + y2;
        lx = x1 + 4; ly = y1 - 4;
      } else {
        const y1 = p.y + (a === "(new)" ? DIA.nodeH / 2 + 9 : DIA.nodeH);
        path = "M" + cx1 + "," + y1 + " L" + cx2 + "," + y2;
        const f = cx1 === cx2 ? 0.5 : 0.72;  // diagonal labels nearer their target
        lx = cx1 + f * (cx2 - cx1) + 5; ly = y1 + f * (y2 - y1) + 4;
        if (cx2 < cx1) anchor = "end";
      }
      const g = sv("g", { class: "edge" });
      const line = sv("path", { d: path, fill: "none", stroke: "#777", "stroke-width": 1.5,
                                "marker-end": "url(#arr)" });
      const lab = sv("text", { x: lx, y: ly, "font-size": 10.5, "text-anchor": anchor,
                               fill: C.ink, "paint-order": "stroke", stroke: "#fff",
                               "stroke-width": 3 }, events.join(" / "));
      g.append(line, lab);
      svg.appendChild(g);
      edges[a + ">" + b] = { line };
    }
    const nodes = {};
    for (const nd of d.nodes) {
      const p = pos[nd.id];
      const g = sv("g", { class: "node", "data-state": nd.id });
      if (nd.id === "(new)") {
        g.appendChild(sv("circle", { cx: p.x + DIA.nodeW / 2, cy: p.y + DIA.nodeH / 2, r: 9,
                                     fill: C.ink }));
        g.appendChild(sv("text", { x: p.x + DIA.nodeW / 2 + 14, y: p.y + DIA.nodeH / 2 + 4,
                                   "font-size": 10, fill: C.grey }, "start"));
        svg.appendChild(g);
        nodes[nd.id] = { g, box: null };
        continue;
      }
      const [col, mark] = STATE_STYLE[nd.id] || [C.grey, ""];
      const box = sv("rect", { x: p.x, y: p.y, width: DIA.nodeW, height: DIA.nodeH,
                               rx: nd.final ? 14 : 4, fill: "#fff", stroke: col,
                               "stroke-width": nd.final ? 3 : 2 });
      const txt = sv("text", { x: p.x + DIA.nodeW / 2, y: p.y + DIA.nodeH / 2 + 4,
                               "text-anchor": "middle", "font-size": 11.5, "font-weight": 600,
                               fill: C.ink }, mark + " " + nd.id);
      const now = sv("text", { x: p.x + 2, y: p.y + DIA.nodeH + 12, "text-anchor": "start",
                               "font-size": 10, "font-weight": 700, fill: C.ink,
                               visibility: "hidden" }, "\u25b2 now");
      g.append(box, txt, now);
      svg.appendChild(g);
      nodes[nd.id] = { g, box, txt, now, col };
    }
    const loops = Object.entries(d.self_loops || {})
      .map(([s, evs]) => s + ": " + evs.join(", ")).join("; ");
    $("diagram-note").textContent = "Drawn from " + d.source + " (" + d.edges.length +
      " state changes), not by hand. Events the table accepts without a state change: " +
      loops + ". Final states have rounded corners.";
    diagramParts = { nodes, edges };
  }

  function renderDiagram() {
    if (!diagramParts) return;
    const idx = shown.findIndex((r) => r.system === "kernel");
    let state = null, prev = null;
    if (idx >= 0) {
      const n = counts()[idx];
      const evs = shown[idx].events;
      for (let i = 0; i < n; i++) {
        const s = evs[i].state;
        if (s && s !== state) { prev = state === null ? "(new)" : state; state = s; }
      }
    }
    for (const [id, part] of Object.entries(diagramParts.nodes)) {
      if (!part.box) continue;
      const on = id === state;
      part.box.setAttribute("fill", on ? part.col : "#fff");
      part.txt.setAttribute("fill", on && part.col !== C.orange ? "#fff" : C.ink);
      part.now.setAttribute("visibility", on ? "visible" : "hidden");
      part.g.setAttribute("data-current", on ? "true" : "false");
    }
    for (const [k, part] of Object.entries(diagramParts.edges)) {
      const on = prev !== null && k === prev + ">" + state;
      part.line.setAttribute("stroke", on ? C.ink : "#9a9a9a");
      part.line.setAttribute("stroke-width", on ? 3.5 : 1.5);
      part.line.setAttribute("marker-end", on ? "url(#arr-on)" : "url(#arr)");
    }
    $("diagram-svg").setAttribute("data-state", state || "");
    const note = idx < 0 ? "Show the kernel to follow its state here." :
      state ? "Kernel run at the cursor: " + state + "." : "Kernel run: nothing proposed yet.";
    $("diagram-svg").setAttribute("aria-label", "Kernel state diagram. " + note);
    const h = $("diagram").querySelector("h2");
    h.textContent = "The kernel's state diagram" + (state ? " \u2014 now " + state : "");
  }

  // ------------------------------------------------------------------ the sweep (lazy)

  // a plain <script> tag: the one way to load data that works from file:// without a server
  function loadScript(src, ready, done) {
    if (ready()) { done(); return; }
    const t0 = performance.now();
    const s = document.createElement("script");
    s.src = src;
    s.onload = () => { window.VIEWER_LAST_LOAD_MS = performance.now() - t0; done(); };
    s.onerror = () => {
      $("warnings").textContent = src + " is missing: run python -m viewer.build, then reload.";
    };
    document.head.appendChild(s);
  }
  function loadSweep(done) {
    loadScript(D.sweep_file || "sweep.js", () => !!window.VIEWER_SWEEP, () => {
      if (window.VIEWER_SWEEP_LOAD_MS === undefined) {
        window.VIEWER_SWEEP_LOAD_MS = window.VIEWER_LAST_LOAD_MS;
      }
      done();
    });
  }
  function playSweepRun(seed, system, tier) {
    loadScript(D.sweep_traces_file || "sweep_traces.js", () => !!window.VIEWER_SWEEP_TRACES, () => {
      SWEEP_RUNS = window.VIEWER_SWEEP_TRACES.runs;
      S.seed = seed; S.tier = tier;
      if (system && !S.systems.includes(system)) {
        S.systems = D.systems.filter((x) => x === system || S.systems.includes(x));
      }
      select(false);
      $("runs").scrollIntoView();
    });
  }

  function sweepCell(c) {
    if (!c) return null;
    const W = window.VIEWER_SWEEP;
    return { refunded: c[0], outcome: W.codes[c[1]], reasons: W.codes[c[2]] || [],
             resolution_ms: c[3], extra: c[4] ? W.codes[c[4]] : null };
  }

  function renderSweep() {
    const W = window.VIEWER_SWEEP, body = $("sweep-body");
    const t0 = performance.now();
    body.textContent = "";
    if (!W.cases.length) { body.textContent = "No sweep cases in results/."; return; }
    const systems = D.systems, tiers = D.tiers;
    const fails = {};
    for (const cs of W.cases) {
      cs[3].forEach((c, j) => {
        const cell = sweepCell(c);
        if (cell && cell.reasons.length) fails[W.columns[j]] = (fails[W.columns[j]] || 0) + 1;
      });
    }
    body.appendChild(el("p", {}, W.cases.length + " cases (seeds " + W.cases[0][0] + "\u2013" +
      W.cases[W.cases.length - 1][0] + "), each run against every system at every tier. " +
      "Failing runs per system and tier:"));
    const tw = el("div", { class: "tablewrap" });
    const tab = el("table", { "data-testid": "sweep-summary" });
    const hr = el("tr"); hr.appendChild(el("th", {}, "system"));
    for (const t of tiers) hr.appendChild(el("th", {}, t));
    tab.appendChild(hr);
    for (const s of systems) {
      const tr = el("tr"); tr.appendChild(el("th", {}, s));
      for (const t of tiers) {
        const f = fails[s + "/" + t] || 0;
        tr.appendChild(el("td", { class: f ? "fail" : "ok" }, (f ? "\u2717 " : "\u2713 ") + f));
      }
      tab.appendChild(tr);
    }
    tw.appendChild(tab); body.appendChild(tw);
    const traced = (W.traced || []).length;
    body.appendChild(el("p", {}, traced
      ? traced + " sweep cells were traced in full: their cells offer \u25b6 play timeline. " +
        "Every other cell prints its exact replay command."
      : "Each cell prints the exact command that replays its full timeline."));
    const form = el("form", { id: "sweep-form" });
    form.innerHTML = "<label>seed <input id='sweep-seed' type='number' min='" + W.cases[0][0] +
      "' max='" + W.cases[W.cases.length - 1][0] + "' value='" + W.cases[0][0] +
      "' style='width:7em'></label> <button type='submit'>open case</button> " +
      "<label>or the next case where <select id='sweep-sys'></select> fails " +
      "<button type='button' id='sweep-next'>find</button></label>";
    body.appendChild(form);
    for (const s of systems) form.querySelector("#sweep-sys").appendChild(el("option", { value: s }, s));
    const view = el("div", { id: "sweep-case" });
    body.appendChild(view);
    form.addEventListener("submit", (e) => { e.preventDefault(); showCase(Number($("sweep-seed").value)); });
    $("sweep-next").addEventListener("click", () => {
      const sys = $("sweep-sys").value;
      const from = Number($("sweep-seed").value);
      const i0 = W.cases.findIndex((c) => c[0] > from);
      const order = W.cases.slice(i0 < 0 ? W.cases.length : i0).concat(W.cases.slice(0, i0 < 0 ? 0 : i0));
      const hit = order.find((cs) => cs[3].some((c, j) => W.columns[j].startsWith(sys + "/") &&
                                                 c && W.codes[c[2]].length));
      if (hit) { $("sweep-seed").value = hit[0]; showCase(hit[0]); }
      else view.textContent = "No failing case for " + sys + ".";
    });
    showCase(W.cases[0][0]);
    window.VIEWER_SWEEP_RENDER_MS = performance.now() - t0;
    document.body.setAttribute("data-sweep", "ready");
  }

  function showCase(seed) {
    const W = window.VIEWER_SWEEP, view = $("sweep-case");
    const cs = W.cases.find((c) => c[0] === seed);
    view.textContent = "";
    if (!cs) { view.textContent = "No sweep case with seed " + seed + "."; return; }
    view.setAttribute("data-seed", String(seed));
    view.appendChild(el("h3", {}, "Sweep case, seed " + seed));
    view.appendChild(el("p", {}, "Plan: " + (cs[1] || "(defaults)")));
    view.appendChild(el("p", {}, "Fault kinds: " + (W.codes[cs[2]] || []).join(", ")));
    const tw = el("div", { class: "tablewrap" });
    const tab = el("table");
    const hr = el("tr"); hr.appendChild(el("th", {}, "system \\ tier"));
    for (const t of D.tiers) hr.appendChild(el("th", { title: D.tier_labels[t] }, t));
    tab.appendChild(hr);
    const cmd = el("code", { class: "cmd", "data-testid": "replay-command" });
    const pick = (s, t, td) => {
      for (const x of tab.querySelectorAll("td.cell")) x.setAttribute("aria-selected", "false");
      td.setAttribute("aria-selected", "true");
      cmd.textContent = "python run_all.py --replay " + seed + " --system " + s + " --tier " + t +
        " --json";
    };
    let first = null;
    for (const s of D.systems) {
      const tr = el("tr"); tr.appendChild(el("th", {}, s));
      for (const t of D.tiers) {
        const j = W.columns.indexOf(s + "/" + t);
        const c = sweepCell(j >= 0 ? cs[3][j] : null);
        const td = el("td", { class: "cell " + (c ? (c.reasons.length ? "fail" : "ok") : "na"),
                              tabindex: "0" });
        if (c) {
          td.appendChild(el("b", {}, (c.reasons.length ? "\u2717 " : "\u2713 ") + "$" + c.refunded));
          td.appendChild(el("div", {}, c.outcome));
          if (c.reasons.length) td.appendChild(el("div", {}, c.reasons.join(", ")));
          if (c.extra && c.extra.world_race) td.appendChild(el("div", {}, "world race"));
          td.appendChild(el("div", { class: "sub" }, "resolved " + ms(c.resolution_ms)));
        } else td.textContent = "\u2013";
        if ((W.traced || []).includes(seed + "|" + s + "|" + t)) {
          const b = el("button", { type: "button", class: "play-sweep" }, "\u25b6 play timeline");
          b.addEventListener("click", (e) => { e.stopPropagation(); playSweepRun(seed, s, t); });
          td.appendChild(b);
        }
        td.addEventListener("click", () => pick(s, t, td));
        td.addEventListener("keydown", (e) => { if (e.key === "Enter") pick(s, t, td); });
        tr.appendChild(td);
        if (!first || (c && c.reasons.length && !first.bad)) first = { s, t, td, bad: c && c.reasons.length };
      }
      tab.appendChild(tr);
    }
    tw.appendChild(tab); view.appendChild(tw);
    view.appendChild(el("p", {}, "Full timeline of a cell (click it to choose), from the repository root:"));
    view.appendChild(cmd);
    if (first) pick(first.s, first.t, first.td);
  }

  // ------------------------------------------------------------------ start

  function start() {
    buildLegend();
    buildControls();
    buildDiagram();
    if ((D.warnings || []).length) $("warnings").textContent = "Data warnings: " + D.warnings.join("; ");
    const reduced = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    const auto = readHash() && !reduced;
    if (S.wantSeed !== null) playSweepRun(S.wantSeed, null, S.tier);
    else select(auto);
    $("sweep").addEventListener("toggle", () => {
      if ($("sweep").open && document.body.getAttribute("data-sweep") !== "ready") {
        loadSweep(renderSweep);
      }
    });
    window.addEventListener("hashchange", () => {
      readHash();
      if (S.wantSeed !== null) playSweepRun(S.wantSeed, null, S.tier);
      else { S.seed = null; select(false); }
    });
    let resizeTimer = null;
    window.addEventListener("resize", () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => { buildPanels(); render(); }, 150);
    });
    window.viewer = { seek, play, pause, state: S, merged: () => merged };
  }
  start();
})();
