"""Compact timelines of sweep runs and shrunk stories, replayed from their seeds for the viewer.

How it works. ``results/`` keeps one line per sweep case, not its timeline. The viewer wants
to play every failing sweep run, every kernel run that ended AMBIGUOUS, the kernel beside each
failing baseline (same seed, same tier: the divergence is drawn on both), and every shrunk
story. This module re-runs exactly those cells with the simulator's public functions
(``faults.plans.plan_from_seed``, ``sim.world.simulate``, ``sim.measure.measure``, the same
calls ``run_all.py --replay SEED --system S --tier T --json`` makes) and writes them in
chunks of ``CHUNK`` seeds, one JavaScript file each, loaded by the page only when one of their
runs is opened.

Encoding, per chunk: ``codes`` holds each distinct value once (an event without its time, a
journal entry, a receipt list, a metrics record); a run is ``[times and codes of its events,
flat: t0, c0, t1, c1, ...], [journal codes], [[event index, receipts code], ...], intervals
code, money code, [refunded, outcome code, reasons code, metrics code, workers, resolution
ms]]``; the receipts are the last step's; seed, system and tier are the key's. Runs
identical to an earlier one of the chunk are listed in ``same``. Hashes and keys are cut to
12 hex digits; the full ones are a ``--replay`` away.
Seeded, ordered merge: the same results give the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CHUNK = 100
KEEP = ("seq", "kind", "ts", "attempt", "via", "reason", "first_sent")


def wanted(cases: list[dict[str, Any]]) -> dict[int, tuple[list[str], str | None]]:
    """Per seed, the cells (``system/tier``) worth a timeline, and the case's world if named."""
    out: dict[int, tuple[list[str], str | None]] = {}
    for case in cases:
        keep = set()
        for name, raw in case.get("cells", {}).items():
            reasons = raw[2] if isinstance(raw, list) else raw.get("reasons", [])
            outcome = raw[1] if isinstance(raw, list) else raw.get("outcome", "")
            system, tier = name.split("/")
            if reasons:
                keep.add(name)
                keep.add(f"kernel/{tier}")
            elif system == "kernel" and "AMBIGUOUS" in str(outcome):
                keep.add(name)
        if keep:
            out[int(case["seed"])] = (sorted(keep), case.get("world"))
    return out


def _slim_event(ev: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in ev.items() if k != "t"}
    details = dict(ev.get("details") or {})
    if isinstance(details.get("key"), str) and len(details["key"]) > 12:
        details["key"] = details["key"][:12]
    if details:
        out["details"] = details
    return out


def _slim_entry(entry: dict[str, Any]) -> dict[str, Any]:
    out = {k: entry[k] for k in KEEP if k in entry}
    if isinstance(entry.get("payload"), dict):
        out["payload"] = {"amount": entry["payload"].get("amount")}
    for k in ("hash", "effect_id"):
        if isinstance(entry.get(k), str):
            out[k] = entry[k][:12]
    return out


def run_doc(plan: Any, seed: int, system: str, tier: str, fault: str) -> dict[str, Any]:
    """One traced run as the viewer needs it (no spec check: that is ``--replay``'s job)."""
    from faults.systems import SYSTEMS
    from sim.measure import measure
    from sim.trace import intervals, journal_records
    from sim.world import simulate
    from viewer.build import compact_run

    run = simulate(plan, SYSTEMS[system], tier, seed, trace=True)
    m = measure(run)
    view = m.get("kernel")
    doc = {"fault": fault, "system": system, "tier": tier, "seed": seed,
           "events": run.events or [], "journal": view["entries"] if view else
           journal_records(run), "intervals": intervals(run),
           "refunded": m["refunded"], "approved": m["approved"], "outcome": m["outcome"],
           "verdict": "ok" if m["ok"] else "FAIL", "reasons": m["violations"],
           "receipts": [r.as_json() if hasattr(r, "as_json") else r for r in view["receipts"]]
           if view else None,
           "metrics": {k: v for k, v in m.items()
                       if k not in ("kernel", "violations", "ok", "outcome")},
           "plan_summary": plan.summary(), "recoverers": plan.recoverers}
    return compact_run(doc)


def _replay_seed(item: tuple[int, list[str], str | None]) -> list[tuple[str, dict[str, Any]]]:
    from faults.plans import plan_from_seed

    seed, cells, world = item
    plan = plan_from_seed(seed, world) if world else plan_from_seed(seed)  # type: ignore[call-arg]
    out = []
    for name in cells:
        system, tier = name.split("/")
        out.append((f"{seed}|{system}|{tier}",
                    run_doc(plan, seed, system, tier, f"random {seed}")))
    return out


def encode(runs: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Runs, dictionary-encoded (see the module comment)."""
    from viewer.build import _Codes, dumps

    codes = _Codes()
    codes.code(None)
    packed: dict[str, Any] = {}
    seen: dict[str, str] = {}
    same: dict[str, str] = {}
    for key, run in runs:
        flat: list[int] = []
        for ev in run["events"]:
            flat += [ev["t"], codes.code(_slim_event(ev))]
        journal = [codes.code(_slim_entry(e) if run["system"] == "kernel" else e)
                   for e in run["journal"]]
        steps = [[i, codes.code(r)] for i, r in run["receipt_steps"]]
        metrics = {k: v for k, v in run["metrics"].items() if k != "resolution_ms"}
        meta = [run["refunded"], codes.code(run["outcome"]), codes.code(run["reasons"]),
                codes.code(metrics), run["recoverers"], run["metrics"].get("resolution_ms")]
        row = [flat, journal, steps, codes.code(run["intervals"]), codes.code(run["money"]),
               meta]
        text = dumps(row)
        if text in seen:
            same[key] = seen[text]
        else:
            seen[text] = key
            packed[key] = row
    return {"codes": codes.values, "runs": packed, "same": same}


def sweep_chunks(cases: list[dict[str, Any]], jobs: int = 1,
                 limit: int | None = None) -> dict[int, dict[str, Any]]:
    """Chunk number -> encoded runs; ``limit`` keeps only the first seeds (tests)."""
    from sim import parallel

    want = [(seed, cells, world) for seed, (cells, world) in sorted(wanted(cases).items())
            if limit is None or seed < limit]
    with parallel.pool(jobs) as p:
        done = parallel.map_ordered(p, _replay_seed, want)
    by_chunk: dict[int, list[tuple[str, dict[str, Any]]]] = {}
    for (seed, _cells, _world), runs in zip(want, done, strict=True):
        by_chunk.setdefault(seed // CHUNK, []).extend(runs)
    return {n: encode(runs) for n, runs in sorted(by_chunk.items())}


def shrunk_runs(shrunk: dict[str, Any]) -> dict[str, Any]:
    """Every shrunk story at each tier it fails, with the kernel on the same plan beside it."""
    from faults.plans import FaultPlan

    runs = []
    seed = int(shrunk.get("seed", 0))
    for story in shrunk.get("stories", []):
        if not story.get("found"):
            continue
        fields = dict(story.get("plan") or {})
        fields.setdefault("name", "shrunk")
        try:
            plan = FaultPlan.from_json(fields)
        except (TypeError, ValueError):
            continue
        fault = "shrunk: " + str(story.get("summary") or "")
        for tier in story.get("failing_tiers") or []:
            for system in (story["system"], "kernel"):
                key = f"shrunk-{story['system']}|{system}|{tier}"
                runs.append((key, run_doc(plan, seed, system, tier, fault)))
    return encode(runs)


def read_cases(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip()]
