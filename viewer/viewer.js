/*
 * How it works. traces.js (viewer/build.py) sets window.VIEWER_DATA: the fault list, the fixed
 * table's rows, the state diagram and where every other data file is. The runs of one fault
 * live in faults/<fault>.js, compact sweep and shrunk replays in replays/*.js; each is loaded
 * with a <script> tag (the one loader that works from file://) the first time it is needed.
 *
 * A "view" is a set of runs shown side by side (one fault at one tier, a sweep seed, a shrunk
 * story, or runs opened from a file). Their events are merged into one sequence ordered by
 * simulated time; the playback cursor is a position in it (0 = nothing yet). All panels share
 * one time axis (axis.js-like part below): each distinct instant gets a slot wide enough for
 * the events it holds, short gaps are drawn to scale and long waits are cut short with their
 * length written on the cut, so the same instant sits at the same x in every panel. Zoom and
 * pan move one window over that axis; the overview strip shows where the window is.
 * At the end of a run its "why" sentence is generated from its own measurements (why()), and
 * where a failing baseline and the kernel part ways both timelines are marked (divergence()).
 * The URL hash names the view and the step (#fault=..&tier=..&step=.., #seed=.., #story=..).
 */
(function () {
  "use strict";
  const D = window.VIEWER_DATA;
  const $ = (id) => document.getElementById(id);
  const SVGNS = "http://www.w3.org/2000/svg";
  const C = { orange: "#E69F00", sky: "#56B4E9", green: "#009E73", yellow: "#F0E442",
              blue: "#0072B2", vermillion: "#D55E00", purple: "#CC79A7", ink: "#1b1b1b",
              grey: "#6b6b6b", light: "#d0d0d0" };
  const BASE_LANES = [["agent", "agent", "agent"], ["kernel", "system", "system"],
    ["journal", "journal (disk)", "journal"], ["network", "network", "network"],
    ["target", "target (payments)", "target"], ["world", "the world", "world"]];
  const STATE_STYLE = {
    PROPOSED: [C.grey, "P"], AUTHORIZED: [C.grey, "A"], DISPATCHED: [C.purple, "D"],
    COMMITTED: [C.green, "\u2713"], REFUSED: [C.blue, "\u2298"], AMBIGUOUS: [C.orange, "?"],
  };
  const SHORT = { naive: "N", idempotency: "I", durable: "D", kernel: "K" };
  const G = { laneH: 25, top: 32, unit: 19, hop: 0.32, cut: 400, cutW: 44 };
  const REASONS = {
    ack: "the target acknowledged it",
    found_by_lookup: "a lookup found it had landed",
    no_dedup_no_lookup: "the target can neither deduplicate nor be looked up",
    premise_stale_at_recovery_cannot_confirm: "the world moved during the outage and the " +
      "target cannot say whether our own refund is the one it sees",
    lease_dead_at_recovery_cannot_confirm: "the lease died during the outage and the target " +
      "cannot say whether the refund landed",
    dedup_window_expired_no_lookup: "the dedup window had passed and the target cannot be " +
      "looked up",
    lease_dead: "the agent's lease was no longer live", premise_stale: "a fact the decision " +
      "relied on no longer held",
    lease_dead_at_recovery: "at recovery the lease was dead and a lookup proved the refund " +
      "never landed",
    premise_stale_at_recovery: "at recovery a premise no longer held and a lookup proved the " +
      "refund never landed",
    conflicting_payload: "the same decision came back with a different payload",
  };
  const FAULT_TEXT = {
    "happy path": "Nothing goes wrong: one refund of $20, sent once.",
    "crash before send": "The worker writes its intent, then crashes before the request leaves.",
    "crash before ack": "The worker crashes after the payment service applied the refund but " +
      "before the answer came back.",
    "duplicate submit": "The same job is submitted twice.",
    "model re-decides $30": "After a crash the model is asked again and decides $30 instead " +
      "of $20.",
    "conflicting payload": "A resubmission carries the same decision key with another amount.",
    "lease revoked": "The agent's lease (its authority) is revoked before the refund is sent.",
    "stale premise": "A fact the decision relied on changes before the refund is sent.",
    "manual refund during outage": "While the worker is down, support refunds the customer by " +
      "hand.",
    "lease revoked during outage": "While the worker is down, its lease is revoked.",
    "key expired before recovery": "The worker stays down longer than the target's dedup window.",
    "recovery racing a slow send": "The first request is slow; recovery must not race it.",
    "two workers recovering": "Two restarted workers find the same open effect.",
    "lookup lag at tier 2": "A landed refund stays invisible to lookups for a while.",
    "torn journal write": "The crash tears the journal's last line.",
  };
  if (!D) {
    document.body.insertAdjacentHTML("afterbegin",
      "<p class='warn'>traces.js is missing: run <code>python run_all.py</code> or " +
      "<code>python -m viewer.build</code>, then reload.</p>");
    return;
  }
  const ROWS = {};
  for (const r of D.rows) ROWS[r.fault + "|" + r.system + "|" + r.tier] = r;

  const S = { fault: "crash before ack", tier: "t1", systems: ["naive", "kernel"],
              source: "fixed", seed: null, story: null, files: null, cursor: 0,
              playing: false, timer: null, speed: 1, zoom: 1, x0: 0, pick: null };
  let shown = [], merged = [], panels = [], axis = null, dive = [];

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
    if (Math.abs(t) < 1000) return t + " ms";
    return (t / 1000).toFixed(Math.abs(t) < 10000 ? 2 : 1) + " s";
  }
  const dollars = (n) => "$" + n;
  const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);
  const loading = {};
  function loadScript(src) {
    if (!loading[src]) {
      loading[src] = new Promise((ok, fail) => {
        const s = document.createElement("script");
        const t0 = performance.now();
        s.src = src;
        s.onload = () => { window.VIEWER_LAST_LOAD_MS = performance.now() - t0; ok(); };
        s.onerror = () => { delete loading[src]; fail(new Error(src + " is missing")); };
        document.head.appendChild(s);
      });
    }
    return loading[src];
  }
  function warn(text) { $("warnings").textContent = text; }

  // ------------------------------------------------------------------ outcomes, money, why

  function isAmbiguous(outcome) { return /AMBIGUOUS/.test(outcome || ""); }
  function outcomeOf(run) {
    if (run.verdict !== "ok") {
      return { cls: "fail", mark: "\u2717 FAIL", word: "FAIL" };
    }
    if (isAmbiguous(run.outcome)) {
      return { cls: "amb", mark: "? AMBIGUOUS", word: "AMBIGUOUS" };
    }
    return { cls: "ok", mark: "\u2713 ok", word: "ok" };
  }
  function reasonOf(outcome) {
    const m = /AMBIGUOUS \(([a-z_]+)\)/.exec(outcome || "");
    return m ? (REASONS[m[1]] || m[1].replace(/_/g, " ")) : "";
  }
  // dollars after each event, split: what the system moved and what the world did by hand
  function moneyParts(run) {
    if (run._money) return run._money;
    let sys = 0, hand = 0;
    run._money = run.events.map((ev) => {
      const d = ev.details || {};
      if (ev.actor === "target" && ev.kind === "applied") {
        if (d.by_system !== undefined) sys = d.by_system;
        else if (d.refunded !== undefined) sys = d.refunded - hand;
        if (d.by_hand !== undefined) hand = d.by_hand;
      } else if (ev.actor === "world" && ev.kind === "manual_refund") {
        const m = /\$(\d+)/.exec(ev.label || "");
        hand += d.amount !== undefined ? d.amount : m ? Number(m[1]) : 0;
      }
      return [sys, hand];
    });
    return run._money;
  }

  function faultPhrase(run) {
    const ev = run.events, bits = [];
    const crash = ev.findIndex((e) => e.actor === "world" && e.kind === "crash");
    if (crash >= 0) {
      const before = ev.slice(0, crash);
      const sent = before.some((e) => e.actor === "network" && e.kind === "send");
      const applied = before.some((e) => e.actor === "target" && e.kind === "applied");
      const answered = before.some((e) => e.actor === "network" && e.kind === "answer");
      const after = ev.slice(crash).find((e) => e.actor === "target" && e.kind === "applied");
      if (!sent) bits.push("the worker crashed before the request left");
      else if (applied && !answered) bits.push("the crash lost the answer (the refund had landed)");
      else if (!applied && after && after.t - ev[crash].t < 200) {
        bits.push("the worker crashed with the refund in flight");
      } else if (!applied) bits.push("the worker crashed before the refund landed");
      else bits.push("the worker crashed after the answer came back");
      const iv = (run.intervals || [])[0];
      if (iv && iv.to - iv.from >= 55000) bits.push("it stayed down " + ms(iv.to - iv.from));
    }
    const hand = ev.find((e) => e.actor === "world" && e.kind === "manual_refund");
    const byHand = (run.metrics || {}).by_hand || 0;
    if (byHand) bits.push("support refunded " + dollars(byHand) + " by hand");
    else if (hand) bits.push("support looked at the order by hand (it already showed a refund)");
    if (ev.some((e) => e.actor === "world" && e.kind === "revoke_lease")) {
      bits.push("the agent's lease was revoked");
    }
    if (ev.some((e) => e.actor === "world" && e.kind === "renew_lease")) {
      bits.push("the decision's lease was revoked and the agent holds a new one");
    }
    if (ev.some((e) => e.actor === "world" && e.kind === "withdraw_approval")) {
      bits.push("the approval was withdrawn");
    }
    if (ev.some((e) => e.actor === "world" && e.kind === "hold_customer")) {
      bits.push("the customer's account was put on hold");
    }
    const submits = ev.filter((e) => e.actor === "agent" && e.kind === "submit").length;
    if (submits > 1) bits.push("the job was submitted " + submits + " times");
    const amounts = new Set(ev.filter((e) => e.actor === "agent" && e.kind === "decide" &&
      e.details && e.details.payload).map((e) => e.details.payload.amount));
    if (amounts.size > 1) bits.push("the model decided " + [...amounts].map(dollars).join(" then "));
    if (ev.some((e) => e.actor === "network" && e.kind === "lost")) bits.push("an answer was lost");
    return bits.length ? bits.join(", ") : "nothing went wrong";
  }

  function actionPhrase(run) {
    const m = run.metrics || {}, ev = run.events;
    const sends = ev.filter((e) => e.actor === "network" && e.kind === "send").length;
    const name = run.system === "kernel" ? "the kernel" : run.system === "naive" ? "naive retry" :
      run.system === "idempotency" ? "the idempotency-key system" : "durable execution";
    if (run.system === "kernel") return kernelPhrase(run, sends);
    const rerun = ev.some((e) => e.actor === "agent" && e.kind === "decide" &&
                               /re-run/.test(e.label || ""));
    const apps = m.applications !== undefined ? m.applications : null;
    const bits = [];
    if (apps !== null && apps > 1) {
      bits.push((rerun ? name + " re-ran the agent and" : name) + " sent the refund " + sends +
        " times; the target applied it " + apps + " times");
    } else if (apps === 1) bits.push(name + " sent it " + (sends > 1 ? sends + " times" : "once") +
      " and the target applied it once");
    else bits.push(name + " never got a refund applied");
    if (m.revoked_lease) bits.push("it sent under a revoked lease");
    if (m.stale_premise) bits.push("it sent although a premise no longer held");
    if (m.conflicting) bits.push("an amount other than the decision's first was paid");
    return bits.join("; ");
  }

  function kernelPhrase(run, sends) {
    const out = run.outcome || "";
    const m = /^(\w+) \(([a-z_]+)\)/.exec(out);
    const final = m ? m[1] : "", why = m ? m[2] : "";
    const rejected = /REJECTED conflicting_payload/.test(out) ?
      "; the conflicting resubmission was rejected" : "";
    const recovered = run.events.some((e) => e.actor === "kernel" && e.kind === "recover");
    let s;
    if (final === "COMMITTED" && why === "found_by_lookup") {
      s = "on restart the kernel found DISPATCHED in its journal, waited out the in-flight " +
        "send and looked the refund up: it had landed, so it sent nothing more";
    } else if (final === "COMMITTED") {
      const absent = run.events.some((e) => e.actor === "target" && e.kind === "lookup" &&
                                          /absent/.test(e.label || ""));
      const how = absent ? "looked it up, found it had not landed and sent it" :
        sends > 1 ? "resent it with the same key" : "sent it";
      s = recovered ? "on restart the kernel found the open effect in its journal, waited " +
        "out the claim, " + how + "; the target confirmed it once" :
        "the kernel sent it once and the target confirmed it";
    } else if (final === "REFUSED") {
      s = "the kernel re-checked before sending and refused: " + (REASONS[why] || why);
    } else if (final === "AMBIGUOUS") {
      s = "the kernel could not tell whether the refund had landed (" + (REASONS[why] || why) +
        "), so it sent nothing more and ended AMBIGUOUS";
    } else s = "the kernel ended " + out;
    return s + rejected;
  }

  function why(run) {
    if (run.coding) {
      const c = run.coding;
      return cap(c.row.replace(/_/g, " ")) + ": " + run.system + " " + (c.verdict === "ok" ?
        "held" : "failed (" + (c.harms || []).join(", ") + ")") + "; landed: " +
        JSON.stringify(c.landed === undefined ? null : c.landed) + ".";
    }
    const m = run.metrics || {};
    const sys = m.by_system !== undefined ? m.by_system : run.refunded;
    const hand = m.by_hand || 0;
    let money = dollars(sys) + " moved by the system for " + dollars(run.approved) + " approved";
    if (hand) money += ", plus " + dollars(hand) + " refunded by hand (the world, not the system)";
    const amb = run.system === "kernel" && isAmbiguous(run.outcome) ?
      "; a person must reconcile this" : "";
    return cap(faultPhrase(run)) + "; " + actionPhrase(run) + ": " + money + amb + ".";
  }

  // where a failing baseline and the kernel part ways: event indexes in each run
  function divergence(base, kern) {
    const outward = (r) => r.events.map((e, i) => [e, i])
      .filter(([e]) => e.actor === "network" || e.actor === "target");
    const a = outward(base), b = outward(kern);
    let i = 0;
    while (i < a.length && i < b.length && a[i][0].actor === b[i][0].actor &&
           a[i][0].kind === b[i][0].kind) i += 1;
    if (i >= a.length) return null;
    const prevK = i > 0 ? b[i - 1][1] : -1;
    const later = kern.events.map((e, k) => [e, k]).filter(([e, k]) => k > prevK);
    let pick = later.find(([e]) => e.actor === "journal" && STATE_STYLE[e.kind] &&
                                   ["COMMITTED", "REFUSED", "AMBIGUOUS"].includes(e.kind) &&
                                   i >= b.length);
    if (!pick) pick = later.find(([e]) => e.actor === "kernel" || e.actor === "journal");
    if (!pick && i < b.length) pick = b[i];
    if (!pick) return null;
    return { base: a[i][1], kern: pick[1] };
  }

  // ------------------------------------------------------------------ glyphs per actor

  function glyph(ev, scale) {
    const g = sv("g", { class: "glyph" });
    const a = ev.actor, k = ev.kind;
    let fill = C.grey, txt = "", shape = "circle";
    if (a === "agent") {
      fill = C.sky; txt = { submit: "S", decide: "$", answer: "\u21a9" }[k] || "\u2022";
    } else if (a === "kernel") {
      shape = "square"; fill = C.yellow;
      txt = { wait: "W", recover: "R", reply: "\u21a9", surface: "!", replay: "\u27f2",
              attach: "+" }[k] || "K";
    } else if (a === "journal") {
      shape = "doc";
      if (STATE_STYLE[k]) [fill, txt] = STATE_STYLE[k];
      else txt = { REJECTED: "\u2260", LATE: "L", verify: "v", decided: "d", started: "s",
                   result: "r" }[k] || "\u2022";
      if (k === "REJECTED") fill = C.blue;
      if (k === "verify") fill = "#8c8c8c";
      if (k === "AMBIGUOUS") shape = "octagon";
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
             txt = { revoke_lease: "L", renew_lease: "N", manual_refund: "$",
                     withdraw_approval: "W", hold_customer: "H", hide_fact: "F",
                     retype_fact: "F", lease_expires: "E" }[k] || "!"; }
    }
    const P = {
      square: "M-8,-8 H8 V8 H-8 Z", doc: "M-8,-10 H4 L8,-6 V10 H-8 Z",
      tri: "M-8,-8 L9,0 L-8,8 Z", "tri-left": "M8,-8 L-9,0 L8,8 Z",
      diamond: "M0,-10 L10,0 L0,10 L-10,0 Z", hex: "M-5,-9 H5 L10,0 L5,9 H-5 L-10,0 Z",
      bolt: "M2,-12 L-7,2 H-1 L-3,12 L7,-2 H1 Z",
      octagon: "M-4,-10 H4 L10,-4 V4 L4,10 H-4 L-10,4 V-4 Z" };
    const inner = sv("g", scale && scale !== 1 ? { transform: "scale(" + scale + ")" } : {});
    if (shape === "circle") inner.appendChild(sv("circle", { r: 9, fill, stroke: C.ink }));
    else inner.appendChild(sv("path", { d: P[shape], fill, stroke: C.ink }));
    if (txt) {
      const dark = [C.yellow, "#fff", C.sky, C.orange].includes(fill);
      inner.appendChild(sv("text", { "text-anchor": "middle", dy: "0.35em", "font-size": 10,
                                     "font-weight": 700, fill: dark ? C.ink : "#fff" }, txt));
    }
    g.appendChild(inner);
    g.appendChild(sv("title", {}, "t = " + ms(ev.t) + " \u00b7 " + a +
                           (workerOf(ev) !== undefined ? " (worker " + workerOf(ev) + ")" : "") +
                           " \u00b7 " + ev.label));
    return g;
  }

  // ------------------------------------------------------------------ the legend

  const LEGEND = [
    ["agent", "submit", "agent: a job is submitted (S)"],
    ["agent", "decide", "agent: the model decides an amount ($)"],
    ["agent", "answer", "agent: the caller gets its answer (\u21a9)"],
    ["kernel", "recover", "recovery finds an open effect (R)"],
    ["kernel", "wait", "waits out a send's claim (W)"],
    ["kernel", "reply", "answers a resubmission (\u21a9)"],
    ["kernel", "surface", "surfaces AMBIGUOUS to a person (!)"],
    ["kernel", "replay", "durable engine replays its history (\u27f2)"],
    ["kernel", "attach", "durable: a resubmission joins the workflow (+)"],
    ["journal", "PROPOSED", "journal: PROPOSED (P), AUTHORIZED (A)", ["AUTHORIZED"]],
    ["journal", "DISPATCHED", "journal: DISPATCHED, written and fsync'd before the send (D)"],
    ["journal", "COMMITTED", "COMMITTED: the target confirmed it (\u2713)"],
    ["journal", "REFUSED", "REFUSED: lease dead or premise stale (\u2298)"],
    ["journal", "AMBIGUOUS", "AMBIGUOUS: nobody can know; a person must reconcile (?)"],
    ["journal", "REJECTED", "REJECTED: a conflicting resubmission (\u2260)"],
    ["journal", "LATE", "a late answer, journaled after the final state (L)"],
    ["journal", "verify", "restart: the journal is verified (v)"],
    ["journal", "decided", "durable engine records: decided d, started s, result r",
     ["started", "result"]],
    ["network", "send", "network: a request leaves"],
    ["network", "query", "network: a lookup leaves (?)"],
    ["network", "answer", "network: an answer arrives"],
    ["network", "undelivered", "network: an answer is lost or reaches a dead worker (\u2715)",
     ["lost"]],
    ["target", "applied", "target: refund applied ($)"],
    ["target", "deduplicated", "target: deduplicated by key (=)"],
    ["target", "conflict", "target: same key, other payload (\u2260)"],
    ["target", "dropped", "target: arrived after its deadline, dropped (\u2715)"],
    ["target", "lookup", "target: answers a lookup (?)"],
    ["world", "crash", "the world: the worker crashes"],
    ["world", "restart", "the world: the worker restarts (\u21bb)"],
    ["world", "revoke_lease", "the world moves: lease revoked L, manual refund $, approval " +
     "withdrawn W", ["manual_refund", "withdraw_approval"]],
    ["world", "hold_customer", "the world moves: the customer's account is put on hold (H)"],
    ["world", "renew_lease", "the world moves: the decision's lease revoked, a new lease held " +
     "under another id (N)"],
    ["world", "hide_fact", "the fact source stops reporting a premise's fact, or reports it " +
     "as another JSON type (F)", ["retype_fact"]],
    ["world", "lease_expires", "the decision's lease expires at the instant it is next " +
     "checked (E)"],
  ];
  function buildLegend() {
    const ul = $("legend-list");
    for (const [actor, kind, text, more] of LEGEND) {
      const li = el("li", { "data-actor": actor, "data-kinds": [kind].concat(more || []).join(" ") });
      const s = sv("svg", { width: 24, height: 24, viewBox: "-13 -13 26 26", "aria-hidden": "true" });
      s.appendChild(glyph({ actor, kind, label: "", t: 0 }));
      li.append(s, el("span", {}, text));
      ul.appendChild(li);
    }
    const extra = [
      ["<svg width='34' height='14' aria-hidden='true'><line x1='2' y1='7' x2='30' y2='7' stroke='#333' stroke-width='1.5' marker-end='url(#lg-arr)'/><defs><marker id='lg-arr' viewBox='0 0 10 10' refX='9' refY='5' markerWidth='7' markerHeight='7' orient='auto'><path d='M0,0 L10,5 L0,10 Z' fill='#333'/></marker></defs></svg>", "a message: send \u2192 target \u2192 answer (dashed: lost)"],
      ["<span class='sw hatch'></span>", "outage: the worker is down"],
      ["<span class='sw cut'>\u22ef 2 s</span>", "a long wait, drawn short with its length"],
      ["<span class='sw part'></span>", "where the failing system and the kernel part ways"],
      ["<span class='sw now'></span>", "the playhead: now"],
      ["<span class='mark ok'>\u2713 ok</span>", "no violation; the refund resolved"],
      ["<span class='mark fail'>\u2717 FAIL</span>", "a violation (double refund, sent without authority\u2026)"],
      ["<span class='mark amb'>? AMBIG.</span>", "AMBIGUOUS: honest, unresolved; a person must reconcile it"],
    ];
    for (const [html, text] of extra) {
      const li = el("li", { "data-extra": "1" });
      li.innerHTML = html;
      li.appendChild(el("span", {}, text));
      ul.appendChild(li);
    }
  }

  // ------------------------------------------------------------------ loading runs

  function fixedRuns(fault) {
    const file = (D.fault_files || {})[fault];
    if (!file) return Promise.reject(new Error("no runs for " + fault));
    return loadScript(file).then(() => (window.VIEWER_RUNS || {})[fault] || {});
  }
  function replayIndex() {
    return loadScript(D.sweep_traces_file || "sweep_traces.js")
      .then(() => window.VIEWER_SWEEP_TRACES);
  }
  function decode(packed, key) {
    const real = (packed.same || {})[key] || key;
    const row = packed.runs[real];
    if (!row) return null;
    const c = packed.codes, [seedPart, system, tier] = key.split("|");
    const [flat, journal, steps, ivs, money, meta] = row;
    const events = [];
    for (let i = 0; i < flat.length; i += 2) events.push(Object.assign({ t: flat[i] }, c[flat[i + 1]]));
    const receiptSteps = steps.map(([i, k]) => [i, c[k]]);
    const metrics = Object.assign({}, c[meta[3]], { resolution_ms: meta[5] });
    const seed = /^\d+$/.test(seedPart) ? Number(seedPart) : null;
    return { id: key.replace(/\|/g, "__"), key, system, tier, seed, events,
             journal: journal.map((k) => c[k]), receipt_steps: receiptSteps,
             receipts: receiptSteps.length ? receiptSteps[receiptSteps.length - 1][1] : null,
             intervals: c[ivs] || [], money: c[money], refunded: meta[0], outcome: c[meta[1]],
             reasons: c[meta[2]] || [], verdict: (c[meta[2]] || []).length ? "FAIL" : "ok",
             metrics, approved: metrics.approved || 20, recoverers: meta[4] };
  }
  function replayRuns(keys, fileOf) {
    return replayIndex().then((idx) => {
      const files = [...new Set(keys.map((k) => fileOf(idx.replays, k)).filter(Boolean))];
      return Promise.all(files.map((f) => loadScript(f).then(() => f))).then(() => {
        const got = {};
        for (const k of keys) {
          const f = fileOf(idx.replays, k);
          const full = (idx.runs || {})[k];
          const packed = f && (window.VIEWER_REPLAYS || {})[f];
          const run = full || (packed ? decode(packed, k) : null);
          if (run) got[k] = run;
        }
        return got;
      });
    });
  }
  const chunkFile = (R, key) => R.files[String(Math.floor(Number(key.split("|")[0]) / R.chunk))];
  const storyFile = (R) => R.shrunk_file;

  // ------------------------------------------------------------------ choosing what to show

  function viewKeys() {
    if (S.source === "seed") return S.systems.map((s) => S.seed + "|" + s + "|" + S.tier);
    if (S.source === "story") {
      return [S.story + "|" + S.story.replace(/^shrunk-/, "") + "|" + S.tier,
              S.story + "|kernel|" + S.tier];
    }
    return [];
  }

  function select(opts) {
    const o = opts || {};
    pause();
    document.body.setAttribute("data-ready", "false");
    markFaults();
    syncControls();
    const done = (runs, missing) => {
      shown = runs;
      S.zoom = 1; S.x0 = 0; S.pick = null; S.cursor = 0;
      prepare();
      caption(missing);
      buildPanels();
      writeHash();
      seek(o.step !== undefined ? o.step : 0);
      document.body.setAttribute("data-ready", "true");
      if (o.play) S.autoplay = setTimeout(() => { S.autoplay = null; if (S.cursor === 0) play(); }, 350);
    };
    if (S.source === "files") { done(S.files, []); return; }
    const failed = (e) => warn(/missing|no runs/.test(e.message) ? e.message +
      ": run python -m viewer.build, then reload." : "viewer error: " + e.message);
    if (S.source === "fixed") {
      fixedRuns(S.fault).then((runs) => {
        const byKey = {};
        for (const r of Object.values(runs)) byKey[r.system + "|" + r.tier] = r;
        const want = S.systems.map((s) => byKey[s + "|" + S.tier]);
        done(want.filter(Boolean), S.systems.filter((s, i) => !want[i]));
      }).catch(failed);
      return;
    }
    const keys = viewKeys();
    replayRuns(keys, S.source === "story" ? storyFile : chunkFile).then((got) => {
      const runs = keys.map((k) => got[k]).filter(Boolean);
      const uniq = runs.filter((r, i) => runs.findIndex((x) => x.system === r.system) === i);
      done(uniq, keys.filter((k) => !got[k]).map((k) => k.split("|")[1]));
    }).catch(failed);
  }

  function prepare() {
    merged = [];
    shown.forEach((run, r) => run.events.forEach((ev, e) => merged.push({ r, e, t: ev.t })));
    merged.sort((x, y) => x.t - y.t || x.r - y.r || x.e - y.e);
    const k = shown.findIndex((r) => r.system === "kernel");
    dive = shown.map(() => null);
    if (k >= 0) {
      shown.forEach((run, r) => {
        if (r === k || run.verdict === "ok") return;
        const d = divergence(run, shown[k]);
        if (d) { dive[r] = { at: d.base, other: k }; if (!dive[k]) dive[k] = { at: d.kern, other: r }; }
      });
    }
    axis = buildAxis(shown);
  }

  function caption(missing) {
    const box = $("caption");
    box.textContent = "";
    let head;
    if (S.source === "fixed") {
      head = "\u201c" + S.fault + "\u201d \u2014 " + (FAULT_TEXT[S.fault] || "").replace(/\.$/, "");
    } else if (S.source === "seed") {
      head = "Sweep case, seed " + S.seed + ": " + (shown[0] ? faultPhrase(shown[0]) : "") +
        (shown[0] && shown[0].plan_summary ? " (plan " + shown[0].plan_summary + ")" : "");
    } else if (S.source === "story") {
      head = "Shrunk story (the smallest failing plan Hypothesis found for " +
        S.story.replace(/^shrunk-/, "") + ")";
    } else head = (S.label || "Opened from a file") + ": " + shown.map((r) => r.id || r.system).join(", ");
    box.appendChild(el("b", {}, head));
    const coding = shown.length && shown[0].coding;
    box.appendChild(document.createTextNode(". Target: " + (coding
      ? "a repository (a change already applied re-applies as a no-op; a lookup compares after-images)"
      : D.tier_labels[S.tier] || S.tier) + "."));
    if (missing.length) {
      const why = S.source === "seed" ? " (it passed; its timeline is one command away: " +
        "python run_all.py --replay " + S.seed + " --system " + missing[0] + " --tier " +
        S.tier + " --json, then open the file here)" : "";
      box.appendChild(el("span", { class: "sub" }, " No recorded timeline for " +
        missing.join(", ") + why + "."));
    }
    if (!shown.length && !missing.length) {
      box.appendChild(el("span", { class: "sub" }, " Choose at least one system."));
    }
  }

  // ------------------------------------------------------------------ the shared time axis

  // one lane per worker: its steps, the journal entries it appends, its sends and the answers
  // it gets (details.worker, from sim.world.Node); the agent (the model and the caller), the
  // target and the world keep their lanes; the whole shared journal is on the journal card
  const WORKER_ACTORS = ["kernel", "journal", "network"];
  function workerOf(ev) {
    const w = ev.worker !== undefined ? ev.worker : (ev.details || {}).worker;
    return w === undefined || w === null ? undefined : Number(w);
  }
  function workersOf(run) {
    if (run._workers) return run._workers;
    const role = {}, seen = new Set();
    let restarts = 0;
    for (const ev of run.events) {
      const w = workerOf(ev);
      if (w !== undefined) seen.add(w);
      if (ev.actor === "world" && ev.kind === "restart") {
        restarts += 1;
        for (const n of (ev.details || {}).workers || []) {
          seen.add(Number(n));
          role[Number(n)] = restarts === 1 ? "recovery" : "recovery " + restarts;
        }
      }
    }
    Object.defineProperty(run, "_workers", { value: { list: [...seen].sort((a, b) => a - b), role },
                                             enumerable: false, configurable: true });
    return run._workers;
  }
  function lanesOf(run) {
    const { list, role } = workersOf(run);
    const longName = (l) => l[0] === "target" && run.coding ? "target (repository)" : l[1];
    if (!list.length) {  // an older trace that does not say which worker did what
      const n = Math.max(1, ...run.events.filter((e) => e.actor === "world" && e.kind === "restart")
        .map((e) => Number((/^(\d+) worker/.exec(e.label || "") || [0, 1])[1])));
      return BASE_LANES.map((l) => ({ id: l[0], long: l[0] === "kernel" && n > 1 ?
        "system (" + n + " workers)" : longName(l), short: l[2],
        title: l[0] === "kernel" && n > 1 ? "this trace does not say which worker did what, " +
          "so the workers share this lane" : "" }));
    }
    const left = (actor) => run.events.some((e) => e.actor === actor && workerOf(e) === undefined);
    const out = [];
    for (const l of BASE_LANES) {
      if ((l[0] === "network" || l[0] === "journal") && !left(l[0])) continue;
      if (l[0] !== "kernel") { out.push({ id: l[0], long: longName(l), short: l[2] }); continue; }
      for (const w of list) {
        const r = role[w];
        out.push({ id: "worker#" + w, worker: w, long: "worker " + w + (r ? " (" + r + ")" : ""),
                   short: "wkr " + w + (r ? " \u21bb" : ""),
                   title: r ? "worker " + w + " started at a restart (" + r + ")" :
                     "the first worker" });
      }
    }
    return out;
  }
  function laneId(ev, lanes) {
    const w = workerOf(ev);
    if (WORKER_ACTORS.includes(ev.actor) && w !== undefined) {
      const id = "worker#" + w;
      if (lanes.some((l) => l.id === id)) return id;
    }
    if (lanes.some((l) => l.id === ev.actor)) return ev.actor;
    const any = lanes.find((l) => /^(worker#|kernel)/.test(l.id));
    return any ? any.id : lanes[0].id;
  }

  // one slot per distinct instant; to scale for short hops, cut short for long waits
  function buildAxis(runs) {
    const times = [...new Set(runs.flatMap((r) => r.events.map((e) => e.t)))].sort((a, b) => a - b);
    const need = {};
    runs.forEach((run) => {
      const lanes = lanesOf(run), count = {};
      for (const ev of run.events) {
        const k = ev.t + "|" + laneId(ev, lanes);
        count[k] = (count[k] || 0) + 1;
        need[ev.t] = Math.max(need[ev.t] || 1, count[k]);
      }
    });
    const slots = [], cuts = [];
    let x = 10;
    times.forEach((t, i) => {
      if (i > 0) {
        const dt = t - times[i - 1];
        if (dt > G.cut) { cuts.push({ x, w: G.cutW, dt, from: times[i - 1], to: t }); x += G.cutW; }
        else x += Math.max(4, dt * G.hop);
      }
      const w = G.unit * need[t];
      slots.push({ t, x, w });
      x += w;
    });
    return { times, slots, cuts, width: x + 10, at: Object.fromEntries(slots.map((s) => [s.t, s])) };
  }
  // world x of a time that is not an event time (outage ends, deadlines)
  function worldX(t) {
    const s = axis.slots;
    if (!s.length) return 0;
    if (t <= s[0].t) return s[0].x;
    for (let i = 1; i < s.length; i++) {
      if (t <= s[i].t) {
        const a = s[i - 1], b = s[i], f = (t - a.t) / Math.max(1, b.t - a.t);
        return a.x + a.w + f * (b.x - a.x - a.w);
      }
    }
    return s[s.length - 1].x + s[s.length - 1].w;
  }
  function view() {
    const tl = panels.length ? panels[0].tl : null;
    const W = Math.max(220, (tl && tl.clientWidth) || ($("runs").clientWidth - 26) || 600);
    const longest = Math.max(0, ...shown.flatMap((r) => lanesOf(r).map((l) => l.long.length)));
    const gutter = window.innerWidth < 600 ? 52 : Math.min(150, Math.max(104, 12 + 6.3 * longest));
    const avail = Math.max(120, W - gutter - 6);
    const fit = Math.min(1.6, avail / Math.max(1, axis.width));
    const k = fit * S.zoom;
    const span = avail / k;
    S.x0 = Math.max(0, Math.min(S.x0, Math.max(0, axis.width - span)));
    return { W, gutter, avail, k, span, sx: (xw) => gutter + (xw - S.x0) * k,
             gscale: Math.max(0.62, Math.min(1, G.unit * k / 19)) };
  }

  // ------------------------------------------------------------------ one panel per run

  function buildPanels() {
    const box = $("runs");
    box.textContent = "";
    panels = shown.map((run, r) => {
      const art = el("article", { class: "run box", "data-run": run.id, "data-system": run.system });
      const head = el("header");
      head.appendChild(el("h3", {}, run.system));
      const badge = el("span", { class: "verdict pending", "data-testid": "badge" }, "running\u2026");
      head.appendChild(badge);
      head.appendChild(el("span", { class: "sub" }, (D.system_labels || {})[run.system] || ""));
      const tl = el("div", { class: "tl" });
      const whyBox = el("p", { class: "why", "data-testid": "why" });
      const now = el("p", { class: "now", "aria-live": "off" });
      const inspect = el("div", { class: "inspect", hidden: "" });
      const more = el("details", { class: "more-cards" });
      if (window.innerWidth >= 900) more.open = true;
      more.appendChild(el("summary", {}, "money, receipt and " + (run.system === "durable" ?
        "engine history" : "journal")));
      const cards = el("div", { class: "cards" });
      more.appendChild(cards);
      const disk = el("div", { class: "card disk" });
      disk.appendChild(el("h4", {}, run.system === "durable" ? "engine history on disk" :
                                    "journal on disk"));
      const diskList = el("ol");
      disk.appendChild(diskList);
      const receipt = el("div", { class: "card receipt-card", "data-testid": "receipt" });
      const money = el("div", { class: "card money", "data-testid": "money" });
      cards.append(money, receipt, disk);
      art.append(head, whyBox, tl, now, inspect, more);
      box.appendChild(art);
      return { run, r, art, head, badge, tl, whyBox, now, inspect, diskList, receipt, money };
    });
    layout();
  }

  function layout() {
    if (!axis) return;
    const v = view();
    S.v = v;
    panels.forEach((p) => drawTimeline(p, v));
    drawOverview(v);
    $("zoom-level").textContent = S.zoom === 1 ? "whole run" : S.zoom.toFixed(1) + "\u00d7";
    if (panels.length) render();
  }

  function eventX(p, i, v) {
    return v.sx(p.xs[i]);
  }

  function drawTimeline(p, v) {
    const run = p.run, lanes = lanesOf(run), narrow = window.innerWidth < 600;
    const H = G.top + lanes.length * G.laneH + 16, W = v.W;
    const svg = sv("svg", { width: W, height: H, role: "img", class: "tlsvg",
                            "aria-label": "Timeline of " + run.id + ", one lane per actor and per worker" });
    const clipId = "clip-" + p.r;
    const defs = sv("defs");
    const clip = sv("clipPath", { id: clipId });
    clip.appendChild(sv("rect", { x: v.gutter, y: 0, width: W - v.gutter, height: H }));
    defs.appendChild(clip);
    const pat = sv("pattern", { id: "hatch-" + p.r, width: 8, height: 8,
                                patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" });
    pat.appendChild(sv("rect", { width: 8, height: 8, fill: "#fdf1e8" }));
    pat.appendChild(sv("line", { x1: 0, y1: 0, x2: 0, y2: 8, stroke: "#e7b08f", "stroke-width": 3 }));
    defs.appendChild(pat);
    const mk = sv("marker", { id: "arr-" + p.r, viewBox: "0 0 10 10", refX: 9, refY: 5,
                              markerWidth: 7, markerHeight: 7, orient: "auto" });
    mk.appendChild(sv("path", { d: "M0,0 L10,5 L0,10 Z", fill: "#555" }));
    defs.appendChild(mk);
    svg.appendChild(defs);
    const laneY = {};
    lanes.forEach((l, i) => {
      const y = G.top + i * G.laneH;
      laneY[l.id] = y + G.laneH / 2;
      svg.appendChild(sv("rect", { x: 0, y, width: W, height: G.laneH, class: "lane",
                                   "data-lane": l.id, fill: i % 2 ? "#f6f5f1" : "#ffffff" }));
      const lab = sv("text", { x: 4, y: y + G.laneH / 2 + 4, "font-size": narrow ? 10 : 11.5,
                               fill: C.ink, class: "lane-label", "data-lane": l.id },
                     narrow ? l.short : l.long);
      if (l.title) lab.appendChild(sv("title", {}, l.title));
      svg.appendChild(lab);
    });
    svg.appendChild(sv("line", { x1: v.gutter - 2, y1: G.top - 20, x2: v.gutter - 2, y2: H,
                                 stroke: C.light }));
    const plot = sv("g", { "clip-path": "url(#" + clipId + ")" });
    svg.appendChild(plot);
    // x of every event: its instant's slot, side by side when a lane holds several
    const seen = {};
    p.xs = run.events.map((ev) => {
      const s = axis.at[ev.t], key = ev.t + "|" + laneId(ev, lanes);
      const j = seen[key] = (seen[key] === undefined ? 0 : seen[key] + 1);
      return s.x + G.unit / 2 + j * G.unit;
    });
    p.lanes = run.events.map((ev) => laneId(ev, lanes));
    p.ys = p.lanes.map((id) => laneY[id]);
    drawBands(p, plot, v, H);
    drawTicks(plot, v, H);
    drawArrows(p, plot, v);
    const d = dive[p.r];
    if (d) drawPart(p, plot, v, H, d);
    p.playhead = sv("line", { x1: 0, y1: G.top - 18, x2: 0, y2: H, stroke: C.ink,
                              "stroke-width": 1.5, visibility: "hidden", class: "playhead" });
    plot.appendChild(p.playhead);
    p.glyphs = run.events.map((ev, i) => {
      const g = glyph(ev, v.gscale);
      g.setAttribute("transform", "translate(" + eventX(p, i, v) + "," + p.ys[i] + ")");
      g.setAttribute("visibility", "hidden");
      g.setAttribute("data-i", i);
      g.setAttribute("data-lane", p.lanes[i]);
      g.setAttribute("tabindex", "-1");
      g.classList.add("clickable");
      g.addEventListener("click", (e) => { e.stopPropagation(); inspectEvent(p, i); });
      if (ev.actor === "journal" && ev.kind === "DISPATCHED" && v.gscale > 0.8) {
        g.appendChild(sv("text", { y: 20, "text-anchor": "middle", "font-size": 8.5 }, "fsync"));
      }
      plot.appendChild(g);
      return g;
    });
    p.ring = sv("circle", { r: 13, fill: "none", stroke: C.ink, "stroke-width": 2,
                            visibility: "hidden" });
    plot.appendChild(p.ring);
    enablePan(svg, v);
    p.tl.textContent = "";
    p.tl.appendChild(svg);
  }

  function drawBands(p, g, v, H) {
    for (const iv of p.run.intervals || []) {
      const x1 = v.sx(worldX(iv.from)), x2 = v.sx(worldX(iv.to));
      const band = sv("g", { class: "outage", visibility: "hidden" });
      band.appendChild(sv("rect", { x: x1, y: G.top - 14, width: Math.max(2, x2 - x1),
                                    height: H - G.top + 14, fill: "url(#hatch-" + p.r + ")",
                                    opacity: 0.85 }));
      band.appendChild(sv("text", { x: x1 + 3, y: G.top - 3, "font-size": 10, fill: "#8a3300" },
                          "down " + ms(iv.to - iv.from)));
      band.setAttribute("data-from", iv.from);
      g.appendChild(band);
      (p.bands = p.bands || []).push(band);
    }
  }

  function drawTicks(g, v, H) {
    let last = -1e9;
    for (const s of axis.slots) {
      const x = v.sx(s.x);
      if (x < v.gutter - 10 || x > v.W + 10) continue;
      g.appendChild(sv("line", { x1: x, y1: 14, x2: x, y2: H, stroke: "#e4e2dc" }));
      if (x - last >= 46) {
        g.appendChild(sv("text", { x: x + 2, y: 11, "font-size": 9.5, fill: C.grey }, ms(s.t)));
        last = x;
      }
    }
    for (const c of axis.cuts) {
      const x = v.sx(c.x), w = c.w * v.k;
      if (x + w < v.gutter || x > v.W) continue;
      const grp = sv("g", { class: "cut" });
      grp.appendChild(sv("rect", { x, y: 14, width: w, height: H - 14, fill: "#d9d6cc",
                                   opacity: 0.45 }));
      grp.appendChild(sv("path", { d: "M" + (x + w * 0.35) + ",16 l4,6 l-4,6 M" + (x + w * 0.6) +
                                   ",16 l4,6 l-4,6", stroke: C.grey, fill: "none" }));
      const cy = G.top + (H - 16 - G.top) / 2, cx = x + w / 2;
      grp.appendChild(sv("text", { x: cx, y: cy, "text-anchor": "middle", dy: "0.35em",
                                   "font-size": 10, fill: C.ink, "font-weight": 600,
                                   transform: "rotate(-90 " + cx + " " + cy + ")",
                                   "paint-order": "stroke", stroke: "#f4f2ec",
                                   "stroke-width": 3 }, "\u22ef " + ms(c.dt) + " \u22ef"));
      grp.appendChild(sv("title", {}, "a wait of " + ms(c.dt) + " (from " + ms(c.from) + " to " +
                                       ms(c.to) + "), drawn short"));
      g.appendChild(grp);
    }
  }

  // send -> target -> answer: paired by message number (details.msg) where the trace gives it,
  // else by attempt and order
  function messages(run) {
    const ev = run.events, used = new Set(), out = [];
    const TGT = ["applied", "deduplicated", "conflict", "dropped"];
    const BACK = ["answer", "lost", "undelivered"];
    const find = (from, pred) => {
      for (let j = from + 1; j < ev.length; j++) if (!used.has(j) && pred(ev[j])) { used.add(j); return j; }
      return -1;
    };
    const msgOf = (x) => (x.details || {}).msg;
    ev.forEach((e, i) => {
      if (e.actor !== "network" || (e.kind !== "send" && e.kind !== "query")) return;
      const m = msgOf(e), att = (e.details || {}).attempt;
      const same = (x) => m === undefined || msgOf(x) === m;
      const hit = e.kind === "query" ?
        find(i, (x) => x.actor === "target" && x.kind === "lookup" && same(x))
        : find(i, (x) => x.actor === "target" && TGT.includes(x.kind) && same(x) &&
               (m !== undefined || att === undefined || !/attempt \d+/.test(x.label) ||
                new RegExp("attempt " + att + "\\b").test(x.label)));
      if (hit < 0) return;
      out.push([i, hit, false]);
      if (ev[hit].kind === "dropped" || (e.kind === "query" && m !== undefined)) return;
      const back = find(hit, (x) => x.actor === "network" && BACK.includes(x.kind) && same(x));
      if (back >= 0) out.push([hit, back, ev[back].kind !== "answer"]);
    });
    return out;
  }
  function drawArrows(p, g, v) {
    p.arrows = messages(p.run).map(([a, b, lost]) => {
      const x1 = eventX(p, a, v), y1 = p.ys[a], x2 = eventX(p, b, v), y2 = p.ys[b];
      const dy = y2 > y1 ? 1 : -1;
      const line = sv("line", { x1: x1 + 4, y1: y1 + dy * 9, x2: x2 - 2, y2: y2 - dy * 10,
                                stroke: "#555", "stroke-width": 1.3, "marker-end": "url(#arr-" + p.r + ")",
                                "stroke-dasharray": lost ? "3 3" : "", visibility: "hidden",
                                class: "msg", "data-from": a, "data-to": b });
      g.appendChild(line);
      return { line, b };
    });
  }
  function drawPart(p, g, v, H, d) {
    const x = eventX(p, d.at, v);
    const grp = sv("g", { class: "part", "data-i": d.at, visibility: "hidden" });
    grp.appendChild(sv("line", { x1: x, y1: G.top - 16, x2: x, y2: H - 14, stroke: C.vermillion,
                                 "stroke-width": 2.5, "stroke-dasharray": "6 3" }));
    const other = shown[d.other].system;
    const left = x > v.W - 150;
    grp.appendChild(sv("text", { x: left ? x - 4 : x + 4, y: H - 4, "font-size": 10.5,
                                 "font-weight": 700, "text-anchor": left ? "end" : "start",
                                 fill: "#8a3300", "paint-order": "stroke", stroke: "#fff",
                                 "stroke-width": 3 }, "parts from " + other + " here"));
    g.appendChild(grp);
    p.part = grp;
  }

  // drag on a timeline pans it when zoomed in
  function enablePan(svg, v) {
    let from = null;
    svg.addEventListener("pointerdown", (e) => {
      if (S.zoom === 1) return;
      from = { x: e.clientX, x0: S.x0 };
      svg.setPointerCapture(e.pointerId);
    });
    svg.addEventListener("pointermove", (e) => {
      if (!from) return;
      const nx = from.x0 - (e.clientX - from.x) / v.k;
      if (Math.abs(nx - S.x0) * v.k >= 3) { S.x0 = nx; layout(); }
    });
    const stop = () => { from = null; };
    svg.addEventListener("pointerup", stop);
    svg.addEventListener("pointercancel", stop);
  }

  function drawOverview(v) {
    const box = $("overview");
    box.textContent = "";
    const W = Math.max(v.W, box.clientWidth || 0);
    const k = (W - v.gutter - 6) / Math.max(1, axis.width);
    const H = 14 + Math.max(1, shown.length) * 8;
    const svg = sv("svg", { width: W, height: H, "aria-label": "Overview: the whole run; the " +
                            "box is the part shown", role: "img" });
    const ox = (xw) => v.gutter + xw * k;
    svg.appendChild(sv("text", { x: 2, y: 11, "font-size": 10, fill: C.grey }, "overview"));
    for (const c of axis.cuts) {
      svg.appendChild(sv("rect", { x: ox(c.x), y: 2, width: c.w * k, height: H - 4, fill: "#eceae4" }));
    }
    shown.forEach((run, r) => run.events.forEach((ev) => {
      const s = axis.at[ev.t];
      svg.appendChild(sv("rect", { x: ox(s.x + G.unit / 2) - 1, y: 4 + r * 8, width: 2, height: 6,
                                   fill: run.verdict === "ok" ? C.green : C.vermillion }));
    }));
    const win = sv("rect", { x: ox(S.x0), y: 1, width: Math.max(6, v.span * k), height: H - 2,
                             fill: "rgba(0,114,178,0.10)", stroke: C.blue, "stroke-width": 1.5,
                             class: "window" });
    svg.appendChild(win);
    const head = sv("line", { x1: 0, y1: 0, x2: 0, y2: H, stroke: C.ink, "stroke-width": 1.5,
                              class: "ovhead" });
    svg.appendChild(head);
    const moveTo = (e) => {
      const rect = svg.getBoundingClientRect();
      const xw = (e.clientX - rect.left - v.gutter) / k;
      if (S.zoom === 1) S.zoom = 2;
      S.x0 = xw - view().span / 2;
      layout();
    };
    let drag = false;
    svg.addEventListener("pointerdown", (e) => { drag = true; moveTo(e); });
    svg.addEventListener("pointermove", (e) => { if (drag) moveTo(e); });
    svg.addEventListener("pointerup", () => { drag = false; });
    box.appendChild(svg);
    S.ov = { head, ox };
  }

  function setZoom(z, centreT) {
    const v0 = view();
    const centre = centreT !== undefined ? worldX(centreT) : S.x0 + v0.span / 2;
    S.zoom = Math.max(1, Math.min(12, z));
    S.x0 = centre - view().span / 2;
    layout();
  }

  // ------------------------------------------------------------------ clicking a mark

  function inspectEvent(p, i) {
    pause();
    const at = merged.findIndex((m) => m.r === p.r && m.e === i);
    S.pick = { r: p.r, i };
    seek(at + 1);
  }
  function showInspect(p, i) {
    const run = p.run, ev = run.events[i], box = p.inspect;
    box.hidden = false;
    box.textContent = "";
    const head = el("div", { class: "insp-head" });
    head.appendChild(el("b", {}, "Event " + (i + 1) + " of " + run.events.length + " \u00b7 t = " +
                                 ms(ev.t) + " \u00b7 " + ev.actor + " " + ev.kind));
    const close = el("button", { type: "button", class: "small" }, "close");
    close.addEventListener("click", () => { S.pick = null; box.hidden = true; });
    head.appendChild(close);
    box.appendChild(head);
    box.appendChild(el("p", {}, ev.label));
    const changes = [];
    const before = i > 0 ? moneyParts(run)[i - 1] : [0, 0], after = moneyParts(run)[i];
    if (before[0] !== after[0]) changes.push("money moved by the system: " + dollars(before[0]) + " \u2192 " + dollars(after[0]));
    if (before[1] !== after[1]) changes.push("refunded by hand (the world): " + dollars(before[1]) + " \u2192 " + dollars(after[1]));
    const prevState = i > 0 ? run.events[i - 1].state : undefined;
    if (ev.state && ev.state !== prevState) changes.push("effect state: " + (prevState || "(none)") + " \u2192 " + ev.state);
    const seq = (ev.details || {}).seq;
    const entry = seq !== undefined ? (run.journal || []).find((e) => e && e.seq === seq) : null;
    if (entry) changes.push("journal entry #" + seq + " appended (below)");
    const step = (run.receipt_steps || []).find(([k]) => k === i);
    if (step) changes.push("the receipt changed: final " + (step[1].map((r) => r.final || "open").join(", ")));
    const d = dive[p.r];
    if (d && d.at === i) changes.push("here " + run.system + " and " + shown[d.other].system + " part ways");
    const ul = el("ul");
    for (const c of changes.length ? changes : ["nothing the cards track (money, state, journal, receipt)"]) {
      ul.appendChild(el("li", {}, c));
    }
    box.appendChild(el("div", { class: "sub" }, "What it changed:"));
    box.appendChild(ul);
    const full = { t: ev.t, actor: ev.actor, kind: ev.kind, label: ev.label };
    if (ev.details) full.details = ev.details;
    if (ev.state) full.state = ev.state;
    box.appendChild(el("pre", { "data-testid": "event-json" }, JSON.stringify(full, null, 1) +
      (entry ? "\njournal entry:\n" + JSON.stringify(entry, null, 1) : "")));
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
  // a pending autoplay (scheduled by select) is dropped by any later play or pause, so a
  // key pressed before it fires is never undone by it
  function cancelAutoplay() {
    if (S.autoplay) clearTimeout(S.autoplay);
    S.autoplay = null;
  }
  function play() {
    cancelAutoplay();
    if (S.playing || !merged.length) return;
    if (S.cursor >= merged.length) seek(0);
    S.playing = true;
    $("btn-play").innerHTML = "&#8214; pause";
    tickPlay();
  }
  function tickPlay() {
    if (!S.playing) return;
    if (S.cursor >= merged.length) { pause(); return; }
    const prev = S.cursor > 0 ? merged[S.cursor - 1].t : merged[0].t;
    const dt = merged[S.cursor].t - prev;
    const delay = (dt === 0 ? 260 : dt > G.cut ? 900 : 420 + dt) / S.speed;
    S.timer = setTimeout(() => { seek(S.cursor + 1); tickPlay(); }, S.cursor === 0 ? 120 : delay);
  }
  function pause() {
    cancelAutoplay();
    S.playing = false;
    if (S.timer) clearTimeout(S.timer);
    S.timer = null;
    const b = $("btn-play");
    if (b) b.innerHTML = "&#9654; play";
  }
  function togglePlay() { if (S.playing) pause(); else play(); }

  function render() {
    const c = counts();
    const v = S.v || view();
    const cur = S.cursor > 0 ? merged[S.cursor - 1] : null;
    if (cur && S.zoom > 1) {  // keep the playhead in the window
      const x = worldX(cur.t);
      if (x < S.x0 || x > S.x0 + v.span) { S.x0 = x - v.span / 3; layout(); return; }
    }
    panels.forEach((p, r) => renderPanel(p, c[r], cur && cur.r === r, cur, v));
    $("scrub").max = String(merged.length);
    $("scrub").value = String(S.cursor);
    $("readout").textContent = "step " + S.cursor + " / " + merged.length +
      (cur ? " \u00b7 t = " + ms(cur.t) : "");
    if (S.ov) {
      const x = cur ? S.ov.ox(worldX(cur.t)) : -10;
      S.ov.head.setAttribute("x1", x); S.ov.head.setAttribute("x2", x);
    }
    document.body.setAttribute("data-cursor", String(S.cursor));
    document.body.setAttribute("data-done", S.cursor >= merged.length && merged.length ? "true" : "false");
    renderDiagram(c);
    renderSummary();
    if (!S.playing) writeHash();
  }

  function renderPanel(p, n, isCurrent, cur, v) {
    const run = p.run;
    p.glyphs.forEach((g, i) => g.setAttribute("visibility", i < n ? "visible" : "hidden"));
    for (const a of p.arrows) a.line.setAttribute("visibility", a.b < n ? "visible" : "hidden");
    for (const b of p.bands || []) {
      const first = run.events.findIndex((e) => e.t >= Number(b.getAttribute("data-from")));
      b.setAttribute("visibility", first >= 0 && n > first ? "visible" : "hidden");
    }
    if (p.part) p.part.setAttribute("visibility", n > dive[p.r].at ? "visible" : "hidden");
    if (cur) {
      const x = v.sx(worldX(cur.t) + G.unit / 2);
      p.playhead.setAttribute("x1", x); p.playhead.setAttribute("x2", x);
      p.playhead.setAttribute("visibility", "visible");
    } else p.playhead.setAttribute("visibility", "hidden");
    const last = n - 1;
    if (last >= 0 && isCurrent) {
      p.ring.setAttribute("transform", "translate(" + eventX(p, last, v) + "," + p.ys[last] + ")");
      p.ring.setAttribute("visibility", "visible");
    } else p.ring.setAttribute("visibility", "hidden");
    p.now.textContent = "";
    if (last >= 0) {
      const ev = run.events[last];
      p.now.appendChild(el("b", {}, "t = " + ms(ev.t) + " \u00b7 " + ev.actor +
                           (workerOf(ev) !== undefined ? " (worker " + workerOf(ev) + ")" : "") + ": "));
      p.now.appendChild(document.createTextNode(ev.label));
      if (ev.state) p.now.appendChild(el("span", { class: "sub" }, "  (state " + ev.state + ")"));
    } else {
      p.now.appendChild(el("span", { class: "sub" }, "Nothing has happened yet: press play, or tap any mark."));
    }
    if (S.pick && S.pick.r === p.r && S.pick.i < n) showInspect(p, S.pick.i);
    else p.inspect.hidden = true;
    const done = n >= run.events.length;
    const o = outcomeOf(run);
    p.badge.className = "verdict " + (done ? o.cls : "pending");
    p.badge.textContent = done ? o.mark + " \u00b7 " + dollars(run.refunded) : "running\u2026";
    p.art.setAttribute("data-outcome", done ? o.word : "");
    p.whyBox.textContent = done ? why(run) : "";
    p.whyBox.className = "why " + (done ? o.cls : "");
    renderDisk(p, n);
    renderReceipt(p, n);
    renderMoney(p, n, done);
    p.art.setAttribute("data-shown", String(n));
  }

  function entryText(entry) {
    if (!entry) return "";
    const bits = ["#" + entry.seq, entry.kind, "t=" + ms(entry.ts)];
    if (entry.kind === "PROPOSED" && entry.payload) {
      if (entry.payload.amount !== undefined) bits.push("$" + entry.payload.amount);
      else if (entry.payload.unit !== undefined) bits.push("change " + entry.payload.unit);
    }
    if (entry.attempt) bits.push("attempt " + entry.attempt);
    if (entry.via) bits.push("via " + entry.via);
    if (entry.reason) bits.push(entry.reason);
    if (entry.hash) bits.push("hash " + entry.hash.slice(0, 8));
    return bits.join("  ");
  }
  function durableText(rec) {
    const bits = [rec.kind];
    if (rec.payload && rec.payload.amount !== undefined) bits.push("$" + rec.payload.amount);
    if (rec.result !== undefined) bits.push(JSON.stringify(rec.result));
    if (rec.wf) bits.push(rec.wf);
    return bits.join("  ");
  }

  // which durable records are on disk after n events: decided/started with their events,
  // a result record with the first answer that follows its start
  function durableShown(run, n) {
    const recs = run.journal || [];
    let k = 0, open = false;
    for (let i = 0; i < n && k < recs.length; i++) {
      const ev = run.events[i];
      while (k < recs.length && recs[k].kind === "result" && open &&
             ev.actor === "network" && ev.kind === "answer") { k += 1; open = false; }
      if (ev.actor === "journal" && k < recs.length && recs[k].kind === ev.kind) {
        open = ev.kind === "started"; k += 1;
      }
    }
    return recs.slice(0, k);
  }

  function renderDisk(p, n) {
    if (p.diskN === n) return;
    const before = p.diskN === undefined ? n : p.diskN;
    p.diskN = n;
    const run = p.run, ol = p.diskList;
    ol.textContent = "";
    if (run.system === "durable") {
      durableShown(run, n).forEach((rec) => ol.appendChild(el("li", { class: rec.kind === "result" ? "result" : "" },
                                                               durableText(rec))));
    } else {
      const bySeq = {};
      for (const e of run.journal || []) if (e && e.seq !== undefined) bySeq[e.seq] = e;
      for (let i = 0; i < n; i++) {
        const ev = run.events[i], count = ol.children.length;
        if (ev.actor === "journal" && ev.details && ev.details.seq !== undefined) {
          const entry = bySeq[ev.details.seq];
          ol.appendChild(el("li", { class: ev.kind === "DISPATCHED" ? "fsync" : "" },
                            entry ? entryText(entry) : ev.label));
        } else if (ev.actor === "world" && ev.kind === "crash" && ev.details && ev.details.torn) {
          ol.appendChild(el("li", { class: "torn", title: "a torn write: no newline" },
                            "torn: " + ev.details.torn));
        } else if (ev.actor === "journal" && ev.kind === "verify") {
          ol.appendChild(el("li", {}, "restart: " + ev.label));
        }
        if (ol.children.length > count && i >= before) ol.lastChild.classList.add("new");
      }
    }
    if (!ol.children.length) {
      const none = run.system === "naive" || run.system === "idempotency";
      ol.appendChild(el("li", {}, none ? "(this system keeps no journal: after a crash nothing " +
                                         "says what was started)" : "(empty)"));
    }
  }

  function field(dl, name, value, shownText) {
    dl.append(el("dt", {}, name), el("dd", { "data-field": name, "data-value": JSON.stringify(value) },
                                     shownText));
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
    const key = JSON.stringify(rs);
    if (p.receiptKey === key) return;
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
      field(dl, "effect", r.effect_id, String(r.effect_id).slice(0, 12) + "\u2026");
      field(dl, "proposed", r.proposed, String(r.proposed));
      field(dl, "authorized", r.authorized, authText(r.authorized));
      const open = r.final === null;
      const said = { true: " (the target confirmed it)", false: " (provably never applied)",
                     unknown: open ? " (not confirmed yet)" : " (nobody can know: said so)" };
      field(dl, "executed", r.executed, r.executed + (said[r.executed] || ""));
      field(dl, "recorded", r.recorded, String(r.recorded));
      field(dl, "final", r.final, r.final === null ? "\u2014 (still open)" : r.final);
      field(dl, "reason", r.reason, r.reason === null ? "\u2014" : r.reason);
      if (r.final === "AMBIGUOUS") {
        dl.appendChild(el("dd", { class: "amb-note" }, "A person must reconcile this: " +
                                  (REASONS[r.reason] || r.reason) + "."));
      }
      box.appendChild(dl);
    });
  }

  function renderMoney(p, n, done) {
    const run = p.run, box = p.money;
    if (run.coding) {  // a coding-agents run moves no money: its outcome and the harm measured
      if (p.moneyKey === "coding") return;
      p.moneyKey = "coding";
      box.textContent = "";
      box.appendChild(el("h4", {}, "outcome"));
      box.appendChild(el("div", {}, "changes: " + (run.outcome || "none")));
      box.appendChild(el("div", {}, (run.reasons || []).length
        ? "harm measured from the repository: " + run.reasons.join(", ")
        : "no harm measured from the repository"));
      return;
    }
    const [sys, hand] = n > 0 ? moneyParts(run)[n - 1] : [0, 0];
    const amount = n > 0 && run.money ? run.money[n - 1] : sys + hand;
    const key = amount + "|" + sys + "|" + hand + "|" + done;
    if (p.moneyKey === key) return;
    p.moneyKey = key;
    box.textContent = "";
    box.appendChild(el("h4", {}, "money"));
    const row = el("div", { class: "amounts" });
    row.appendChild(el("div", { class: "amount", "data-testid": "by-system", "data-value": String(sys) },
                       dollars(sys)));
    row.appendChild(el("div", {}, "moved by the system (approved " + dollars(run.approved) + ")"));
    box.appendChild(row);
    const scale = Math.max(run.approved * 3, amount, 1);
    const bar = el("div", { class: "bar", "aria-hidden": "true" });
    bar.appendChild(el("div", { class: "fill" + (sys > run.approved ? " over" : ""),
                                style: "width:" + (100 * sys / scale) + "%" }));
    bar.appendChild(el("div", { class: "fill hand", style: "left:" + (100 * sys / scale) + "%;width:" +
                                (100 * hand / scale) + "%" }));
    bar.appendChild(el("div", { class: "approved", style: "left:" + (100 * run.approved / scale) + "%" }));
    box.appendChild(bar);
    box.appendChild(el("div", { class: hand ? "hand-note" : "sub", "data-testid": "by-hand",
                                "data-value": String(hand) },
      hand ? "+ " + dollars(hand) + " refunded by hand by support: the world's doing, not the system's"
        : "no refund by hand"));
    box.appendChild(el("div", { class: "sub", "data-testid": "refunded", "data-value": String(amount) },
                       "the order shows " + dollars(amount) + " refunded in all"));
    const o = outcomeOf(run);
    const v = el("p", { "data-testid": "verdict", "data-value": done ? run.verdict : "" });
    if (done) {
      v.appendChild(el("span", { class: "verdict " + o.cls }, o.mark));
      v.appendChild(document.createTextNode(" " + (run.reasons.length ? run.reasons.join(", ") :
        o.cls === "amb" ? "no violation, but unresolved" : "no violation")));
      box.appendChild(v);
      box.appendChild(el("div", { "data-testid": "outcome", "data-value": run.outcome },
                         "outcome: " + run.outcome));
      if (o.cls === "amb") {
        box.appendChild(el("div", { class: "amb-note", "data-testid": "ambiguous-note" },
          "AMBIGUOUS: " + reasonOf(run.outcome) + ". Nothing was sent again; a person must " +
          "reconcile this."));
      }
      if (run.expected) {
        const ex = run.expected, m = run.matches_reference;
        box.appendChild(el("div", { class: "sub" }, "reference (DESIGN \u00a76): " +
          dollars(ex.dollars) + (ex.outcome ? " " + ex.outcome : "") + ", " + ex.verdict +
          (m === true ? " \u2014 matches" : m === false ? " \u2014 DIFFERS" : "")));
      }
      const res = (run.metrics || {}).resolution_ms;
      if (res !== null && res !== undefined) box.appendChild(el("div", { class: "sub" }, "resolved after " + ms(res)));
    } else {
      v.appendChild(el("span", { class: "verdict pending" }, "running\u2026"));
      box.appendChild(v);
    }
  }

  // the one-line summary above the panels: each run's verdict, and why once it has played
  function renderSummary() {
    const box = $("summary");
    box.textContent = "";
    const c = counts();
    shown.forEach((run, r) => {
      const done = c[r] >= run.events.length, o = outcomeOf(run);
      const li = el("li", { class: done ? o.cls : "pending" });
      li.appendChild(el("b", {}, run.system + ": "));
      li.appendChild(document.createTextNode(done ? o.mark + ", " + dollars(run.refunded) +
        " refunded" + (run.metrics && run.metrics.by_hand ? " (" + dollars(run.metrics.by_hand) +
        " of it by hand)" : "") : "playing\u2026"));
      box.appendChild(li);
    });
  }

  // ------------------------------------------------------------------ state diagram

  // compact enough to sit under the fault list (290 px wide) with the first screen to spare
  const DIA = { colW: 138, rowH: 50, nodeW: 118, nodeH: 30, left: 14, top: 6, lastGap: 22 };
  let diagramParts = null;
  function buildDiagram() {
    const svg = $("diagram-svg"), d = D.diagram;
    const maxRank = Math.max(...d.nodes.map((x) => x.rank));
    const maxRow = Math.max(...d.nodes.map((x) => x.row));
    const W = DIA.left * 2 + (maxRow + 1) * DIA.colW;
    const H = DIA.top + maxRank * DIA.rowH + DIA.lastGap + DIA.nodeH + 16;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("width", W);
    svg.setAttribute("height", H);
    svg.setAttribute("aria-label", "Kernel state diagram generated from kernel.edges()");
    const defs = sv("defs");
    for (const [id, col] of [["arr", "#777"], ["arr-on", C.ink]]) {
      const m = sv("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 9,
                               markerHeight: 9, orient: "auto-start-reverse", markerUnits: "userSpaceOnUse" });
      m.appendChild(sv("path", { d: "M0,0 L10,5 L0,10 Z", fill: col }));
      defs.appendChild(m);
    }
    svg.appendChild(defs);
    const pos = {};
    for (const nd of d.nodes) {
      pos[nd.id] = { x: DIA.left + nd.row * DIA.colW,
                     y: DIA.top + nd.rank * DIA.rowH + (nd.rank === maxRank ? DIA.lastGap : 0), nd };
    }
    const pairs = {};
    for (const [a, ev, b] of d.edges) (pairs[a + ">" + b] = pairs[a + ">" + b] || { a, b, events: [] }).events.push(ev);
    const edges = {};
    let skips = 0;
    const labels = {};  // curves that leave one state at one spot share one label
    for (const { a, b, events } of Object.values(pairs)) {
      const p = pos[a], q = pos[b];
      const cx1 = p.x + DIA.nodeW / 2, cx2 = q.x + DIA.nodeW / 2, y2 = q.y;
      let path, lx, ly, anchor = "start";
      if (q.nd.rank - p.nd.rank > 1) {
        const x1 = p.x + DIA.nodeW, y1 = p.y + DIA.nodeH / 2, bend = x1 + 26 + 14 * skips;
        skips += 1;
        path = "M" + x1 + "," + y1 + " C" + bend + "," + y1 + " " + cx2 + "," + (y2 - 90) + " " + cx2 + "," + y2;
        lx = x1 + 4; ly = y1 - 4;
      } else {
        const y1 = p.y + (a === "(new)" ? DIA.nodeH / 2 + 9 : DIA.nodeH);
        path = "M" + cx1 + "," + y1 + " L" + cx2 + "," + y2;
        const f = cx1 === cx2 ? 0.5 : 0.72;
        lx = cx1 + f * (cx2 - cx1) + 5; ly = y1 + f * (y2 - y1) + 4;
        if (cx2 < cx1) anchor = "end";
      }
      const g = sv("g", { class: "edge" });
      const line = sv("path", { d: path, fill: "none", stroke: "#777", "stroke-width": 1.5, "marker-end": "url(#arr)" });
      g.appendChild(line);
      const spot = lx + "," + ly, seen = labels[spot];
      if (seen) {
        for (const ev of events) if (!seen.events.includes(ev)) seen.events.push(ev);
        seen.text.textContent = seen.events.join(" / ");
      } else {
        const text = sv("text", { x: lx, y: ly, "font-size": 10.5, "text-anchor": anchor, fill: C.ink,
                                  "paint-order": "stroke", stroke: "#fff", "stroke-width": 3 }, events.join(" / "));
        labels[spot] = { events: [...events], text };
        g.appendChild(text);
      }
      svg.appendChild(g);
      edges[a + ">" + b] = { line };
    }
    const nodes = {};
    for (const nd of d.nodes) {
      const p = pos[nd.id], g = sv("g", { class: "node", "data-state": nd.id });
      if (nd.id === "(new)") {
        g.appendChild(sv("circle", { cx: p.x + DIA.nodeW / 2, cy: p.y + DIA.nodeH / 2, r: 9, fill: C.ink }));
        g.appendChild(sv("text", { x: p.x + DIA.nodeW / 2 + 14, y: p.y + DIA.nodeH / 2 + 4, "font-size": 10, fill: C.grey }, "start"));
        svg.appendChild(g);
        nodes[nd.id] = { g, box: null };
        continue;
      }
      const [col, mark] = STATE_STYLE[nd.id] || [C.grey, ""];
      const box = sv("rect", { x: p.x, y: p.y, width: DIA.nodeW, height: DIA.nodeH, rx: nd.final ? 14 : 4,
                               fill: "#fff", stroke: col, "stroke-width": nd.final ? 3 : 2 });
      const txt = sv("text", { x: p.x + DIA.nodeW / 2, y: p.y + DIA.nodeH / 2 + 4, "text-anchor": "middle",
                               "font-size": 11.5, "font-weight": 600, fill: C.ink }, mark + " " + nd.id);
      const now = sv("text", { x: p.x + 2, y: p.y + DIA.nodeH + 12, "font-size": 10, "font-weight": 700,
                               fill: C.ink, visibility: "hidden" }, "\u25b2 now");
      g.append(box, txt, now);
      svg.appendChild(g);
      nodes[nd.id] = { g, box, txt, now, col };
    }
    const loops = Object.entries(d.self_loops || {}).map(([s, evs]) => s + ": " + evs.join(", ")).join("; ");
    $("diagram-note").textContent = "Drawn from " + d.source + " (" + d.edges.length +
      " state changes), not by hand; final states have rounded corners.";
    const still = el("details", { class: "keys" });
    still.append(el("summary", {}, "events that change no state"), el("p", {}, loops + "."));
    $("diagram").appendChild(still);
    diagramParts = { nodes, edges };
  }
  function renderDiagram(c) {
    if (!diagramParts) return;
    const idx = shown.findIndex((r) => r.system === "kernel");
    let state = null, prev = null;
    if (idx >= 0) {
      const evs = shown[idx].events;
      for (let i = 0; i < c[idx]; i++) {
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
    $("diagram").querySelector("h2").textContent = "Kernel states" + (state ? " \u00b7 now " + state : "");
  }

  // ------------------------------------------------------------------ controls, keys, links

  function tierShort(t) {
    return { t1: "t1 dedupes + lookup", t1d: "t1d dedupe only", t2: "t2 lookup only",
             t3: "t3 neither" }[t] || t;
  }
  function markFaults() {
    for (const b of document.querySelectorAll("#fault-list button")) {
      const f = b.getAttribute("data-fault");
      b.setAttribute("aria-current", f === S.fault && S.source === "fixed" ? "true" : "false");
      const marks = b.querySelector(".marks");
      marks.textContent = "";
      for (const s of D.systems) {
        const row = ROWS[f + "|" + s + "|" + S.tier];
        const o = row ? outcomeOf(row) : null;
        const sym = o ? { ok: "\u2713", fail: "\u2717", amb: "?" }[o.cls] : "\u2013";
        marks.appendChild(el("span", { class: "mark " + (o ? o.cls : "na"), "data-outcome": o ? o.word : "",
                                       title: s + ": " + (row ? o.word + ", $" + row.refunded + ", " + row.outcome : "no run") },
                             SHORT[s] + sym));
      }
    }
  }
  function syncControls() {
    for (const t of D.tiers) $("tier-" + t).checked = t === S.tier;
    for (const s of D.systems) $("sys-" + s).checked = S.systems.includes(s);
  }
  function buildControls() {
    $("fixed-seed").textContent = D.fixed_seed;
    const list = $("fault-list");
    D.faults.forEach((f, i) => {
      const b = el("button", { type: "button", "data-fault": f });
      b.appendChild(el("span", {}, (i + 1) + ". " + f));
      b.appendChild(el("span", { class: "marks" }));
      b.addEventListener("click", () => { S.fault = f; S.source = "fixed"; select({ play: true }); });
      const li = el("li"); li.appendChild(b); list.appendChild(li);
    });
    for (const t of D.tiers) {
      const lab = el("label", { for: "tier-" + t, title: D.tier_labels[t] || t });
      const inp = el("input", { type: "radio", name: "tier", id: "tier-" + t, value: t });
      inp.addEventListener("change", () => { S.tier = t; select({ play: true }); });
      lab.append(inp, document.createTextNode(" " + tierShort(t)));
      $("tiers").appendChild(lab);
    }
    for (const s of D.systems) {
      const lab = el("label", { for: "sys-" + s, title: D.system_labels[s] || s });
      const inp = el("input", { type: "checkbox", id: "sys-" + s, value: s });
      inp.addEventListener("change", () => {
        S.systems = D.systems.filter((x) => $("sys-" + x).checked);
        select({});
      });
      lab.append(inp, document.createTextNode(" " + s));
      $("systems").appendChild(lab);
    }
    $("btn-play").addEventListener("click", togglePlay);
    $("btn-fwd").addEventListener("click", () => { pause(); seek(S.cursor + 1); });
    $("btn-back").addEventListener("click", () => { pause(); seek(S.cursor - 1); });
    $("btn-start").addEventListener("click", () => { pause(); seek(0); });
    $("btn-end").addEventListener("click", () => { pause(); seek(merged.length); });
    $("scrub").addEventListener("input", (e) => { pause(); seek(Number(e.target.value)); });
    $("speed").addEventListener("change", (e) => { S.speed = Number(e.target.value); });
    $("zoom-in").addEventListener("click", () => setZoom(S.zoom * 2, curT()));
    $("zoom-out").addEventListener("click", () => setZoom(S.zoom / 2, curT()));
    $("zoom-fit").addEventListener("click", () => setZoom(1));
    $("copy-link").addEventListener("click", copyLink);
    $("file-input").addEventListener("change", (e) => openFiles(e.target.files));
    document.addEventListener("keydown", onKey);
    document.addEventListener("dragover", (e) => { e.preventDefault(); document.body.classList.add("dropping"); });
    document.addEventListener("dragleave", () => document.body.classList.remove("dropping"));
    document.addEventListener("drop", (e) => {
      e.preventDefault();
      document.body.classList.remove("dropping");
      if (e.dataTransfer && e.dataTransfer.files.length) openFiles(e.dataTransfer.files);
    });
  }
  const curT = () => (S.cursor > 0 ? merged[S.cursor - 1].t : undefined);

  // keys drive the timeline only when no control has focus
  function onKey(e) {
    const t = e.target;
    const onControl = t && t !== document.body && t !== document.documentElement &&
      !(t.closest && t.closest("#runs") && !/^(INPUT|SELECT|TEXTAREA|BUTTON|A|SUMMARY)$/.test(t.tagName));
    if (onControl || e.altKey || e.ctrlKey || e.metaKey) return;
    const k = e.key;
    const act = {
      " ": togglePlay, Spacebar: togglePlay,
      ArrowRight: () => { pause(); seek(S.cursor + 1); },
      ArrowLeft: () => { pause(); seek(S.cursor - 1); },
      Home: () => { pause(); seek(0); }, End: () => { pause(); seek(merged.length); },
      "+": () => setZoom(S.zoom * 2, curT()), "=": () => setZoom(S.zoom * 2, curT()),
      "-": () => setZoom(S.zoom / 2, curT()), "0": () => setZoom(1),
      "]": () => nextFault(1), "[": () => nextFault(-1),
      t: () => { S.tier = D.tiers[(D.tiers.indexOf(S.tier) + 1) % D.tiers.length]; select({}); },
    }[k];
    if (!act) return;
    e.preventDefault();
    act();
  }
  function nextFault(d) {
    const i = D.faults.indexOf(S.fault) + d;
    S.fault = D.faults[(i + D.faults.length) % D.faults.length];
    S.source = "fixed";
    select({});
  }

  function readHash() {
    const h = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (h.get("tier") && D.tiers.includes(h.get("tier"))) S.tier = h.get("tier");
    if (h.get("systems") !== null) S.systems = D.systems.filter((s) => h.get("systems").split(",").includes(s));
    S.source = "fixed";
    if (h.get("fault") && D.faults.includes(h.get("fault"))) S.fault = h.get("fault");
    if (/^\d+$/.test(h.get("seed") || "")) {
      S.source = "seed"; S.seed = Number(h.get("seed"));
      if (h.get("system") && D.systems.includes(h.get("system")) && !S.systems.includes(h.get("system"))) {
        S.systems = D.systems.filter((s) => s === h.get("system") || S.systems.includes(s));
      }
    }
    if (/^shrunk-[a-z]+$/.test(h.get("story") || "")) { S.source = "story"; S.story = h.get("story"); }
    const step = /^\d+$/.test(h.get("step") || "") ? Number(h.get("step")) : undefined;
    return { play: h.get("play") !== "0" && step === undefined, step };
  }
  function hashNow() {
    const h = new URLSearchParams();
    if (S.source === "seed") h.set("seed", String(S.seed));
    else if (S.source === "story") h.set("story", S.story);
    else h.set("fault", S.fault);
    h.set("tier", S.tier);
    if (S.source !== "story") h.set("systems", S.systems.join(","));
    if (S.cursor > 0) h.set("step", String(S.cursor));
    return "#" + h.toString();
  }
  function writeHash() {
    if (S.source === "files") return;
    try { history.replaceState(null, "", hashNow()); } catch (err) { /* file:// quirk */ }
  }
  function copyLink() {
    const url = location.href.split("#")[0] + hashNow();
    const box = $("link-box");
    box.hidden = false;
    box.value = url;
    const said = () => { $("copy-state").textContent = "link copied"; };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(url).then(said, () => { box.select(); $("copy-state").textContent = "select and copy:"; });
    } else { box.select(); $("copy-state").textContent = "select and copy:"; }
  }

  // ------------------------------------------------------------------ runs from a file

  // a --replay ... --json document, a list of them, or {"runs": [...]}; times in ms
  function runsFromJson(doc) {
    const list = Array.isArray(doc) ? doc : Array.isArray(doc.runs) ? doc.runs :
      doc.runs && typeof doc.runs === "object" ? Object.values(doc.runs) : [doc];
    return list.map((r, i) => {
      if (!r || !Array.isArray(r.events)) throw new Error("item " + (i + 1) + " has no events list");
      const run = Object.assign({ system: "kernel", tier: "t1", approved: 20, reasons: [],
                                  verdict: "ok", outcome: "", metrics: {} }, r);
      run.id = run.id || (run.system + " from file");
      if (!run.receipt_steps) {
        const last = run.events.map((e) => e.actor === "journal" && e.details && e.details.seq !== undefined)
          .lastIndexOf(true);
        run.receipt_steps = run.receipts && last >= 0 ? [[last, run.receipts]] : [];
      }
      if (run.refunded === undefined) run.refunded = (run.metrics || {}).refunded || 0;
      return run;
    });
  }
  function openFiles(files) {
    const reads = [...files].map((f) => f.text().then((txt) => {
      try { return runsFromJson(JSON.parse(txt)); }
      catch (err) { throw new Error(f.name + ": " + err.message); }
    }));
    Promise.all(reads).then((lists) => {
      S.files = lists.flat();
      S.source = "files";
      S.label = "";
      if (S.files[0] && D.tiers.includes(S.files[0].tier)) S.tier = S.files[0].tier;
      warn("");
      select({ play: true });
    }).catch((err) => warn("Could not open the file: " + err.message +
      " (expected the JSON of python run_all.py --replay SEED --system S --tier T --json)"));
  }

  // ------------------------------------------------------------------ start

  function start() {
    buildLegend();
    buildControls();
    buildDiagram();
    buildCoding();
    if ((D.warnings || []).length) warn("Data warnings: " + D.warnings.join("; "));
    const reduced = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    const h = readHash();
    select({ play: h.play && !reduced, step: h.step });
    window.addEventListener("hashchange", () => {
      if (location.hash === hashNow()) return;
      const hh = readHash();
      select({ step: hh.step });
    });
    let resizeTimer = null, lastW = window.innerWidth;
    window.addEventListener("resize", () => {
      if (window.innerWidth === lastW) return;
      lastW = window.innerWidth;
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(layout, 150);
    });
    const sw = $("sweep");
    sw.addEventListener("toggle", () => {
      if (sw.open && window.VIEWER_SWEEP_PANEL) window.VIEWER_SWEEP_PANEL.open();
    });
    window.viewer = { seek, play, pause, state: S, merged: () => merged, shown: () => shown,
                      select, why, outcomeOf, playSeed, ms, el, D };
  }
  // the coding-agents scenario: its table, each cell played in the same player
  function buildCoding() {
    if (!D.coding_file) return;
    const box = $("coding");
    box.hidden = false;
    box.addEventListener("toggle", () => {
      if (!box.open || box.dataset.ready) return;
      loadScript(D.coding_file).then(() => {
        box.dataset.ready = "1";
        const cells = window.VIEWER_CODING || [];
        const rowsC = [...new Set(cells.map((c) => c.row))];
        const systems = [...new Set(cells.map((c) => c.system))];
        const tab = el("table", { "data-testid": "coding-table" });
        const hr = el("tr");
        hr.appendChild(el("th", {}, "row"));
        for (const s of systems) hr.appendChild(el("th", {}, s));
        tab.appendChild(hr);
        for (const r of rowsC) {
          const tr = el("tr");
          const first = cells.find((c) => c.row === r);
          tr.appendChild(el("th", {}, r + (first.guarantee ? " (" + first.guarantee + ")" : "")));
          for (const s of systems) {
            const c = cells.find((x) => x.row === r && x.system === s);
            const td = el("td", { class: c ? (c.verdict === "ok" ? "ok" : "fail") : "na" });
            if (c) {
              const b = el("button", { type: "button", class: "small" },
                           (c.verdict === "ok" ? "\u2713 " : "\u2717 ") + c.verdict);
              b.addEventListener("click", () => playCoding(c));
              td.appendChild(b);
            }
            tr.appendChild(td);
          }
          tab.appendChild(tr);
        }
        const wrap = el("div", { class: "tablewrap" });
        wrap.appendChild(tab);
        $("coding-body").textContent = "";
        $("coding-body").appendChild(wrap);
      }).catch((e) => warn(e.message));
    });
  }
  function playCoding(c) {
    const harms = c.harms || [];
    S.files = [{ id: c.id, system: c.system, tier: S.tier, events: c.events || [],
                 journal: c.journal || [], verdict: c.verdict, reasons: harms,
                 outcome: Object.values(c.outcomes || {}).join(", "), refunded: 0, approved: 0,
                 metrics: {}, receipt_steps: [], coding: c }];
    S.source = "files";
    S.label = "Coding agents, row " + c.row;
    select({ play: true });
    $("story-top").scrollIntoView({ block: "start" });
  }

  function playSeed(seed, system, tier) {
    S.source = "seed"; S.seed = seed; S.tier = tier;
    if (system && !S.systems.includes(system)) S.systems = D.systems.filter((x) => x === system || S.systems.includes(x));
    if (system && !S.systems.includes("kernel")) S.systems = D.systems.filter((x) => x === "kernel" || S.systems.includes(x));
    select({ play: true });
    $("story-top").scrollIntoView({ block: "start" });
  }
  window.VIEWER_PLAY_SEED = playSeed;
  start();
})();
