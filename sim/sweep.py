"""The seeded sweep: random fault plans, every system at every tier, violations counted.

How it works. Case ``seed`` is ``plan_from_seed(seed)`` run against each system and tier with
the same seed; a worker process computes one whole case (16 untraced runs) and returns a
compact record: the plan's summary and, per system/tier, dollars, outcome, verdict and
reasons. Records come back in seed order and are folded into the summary (violation counts
and rates per system and tier, AMBIGUOUS counts, time to resolution, the fault kinds each
system fails on). Every failing cell is listed with the command that replays it alone.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from faults.plans import DEDUP_WINDOW, FaultPlan, plan_from_seed
from faults.systems import SYSTEM_NAMES, SYSTEMS
from sim import report, trace
from sim.measure import VIOLATIONS, measure
from sim.tiers import TIER_NAMES, TIMING
from sim.world import simulate

CELLS = [(s, t) for s in SYSTEM_NAMES for t in TIER_NAMES]
CRASH_KINDS = {"before_send": "crash before send", "sent": "crash in flight",
               "after_apply": "crash after apply", "after_ack": "crash after ack"}


def fault_kinds(plan: FaultPlan) -> list[str]:
    """The kinds of fault a random plan contains (for the heat map)."""
    kinds = []
    if plan.crash:
        kinds.append(CRASH_KINDS[plan.crash])
        if plan.outage > DEDUP_WINDOW - TIMING.dedup_margin:
            kinds.append("late recovery")
        if plan.recrash:
            kinds.append("crash during recovery")
        if plan.recoverers > 1:
            kinds.append("two recoverers")
        if plan.torn:
            kinds.append("torn write")
    kinds += [f"{e} before dispatch" for e in plan.before_dispatch]
    kinds += [f"{e} during outage" for e in plan.during_outage]
    if plan.duplicate_submits:
        kinds.append("duplicate submit")
    if plan.conflicting_amount is not None:
        kinds.append("conflicting payload")
    if plan.redecide_amount is not None:
        kinds.append("model re-decides")
    if plan.slow_send:
        kinds.append("slow send")
    if plan.ack_lost:
        kinds.append("ack lost")
    if plan.late_ack:
        kinds.append("late ack")
    return kinds or ["no fault"]


def run_one(seed: int, system: str, tier: str, trace_it: bool = False) -> tuple[Any, dict]:
    run = simulate(plan_from_seed(seed), SYSTEMS[system], tier, seed, trace=trace_it)
    return run, measure(run)


def case(seed: int) -> dict[str, Any]:
    """One sweep case: every system at every tier, compactly."""
    plan = plan_from_seed(seed)
    cells = {}
    for system, tier in CELLS:
        m = measure(simulate(plan, SYSTEMS[system], tier, seed))
        cell = {"refunded": m["refunded"], "outcome": m["outcome"], "ok": m["ok"],
                "reasons": m["violations"], "resolution_ms": m["resolution_ms"]}
        if m["world_race"]:
            cell["world_race"] = True
        if system == "kernel":
            cell["ambiguous"] = m["ambiguous"]
            oracle = m["kernel"]["oracle"]
            cell["oracle"] = None if oracle is None else oracle["valid"]
        cells[f"{system}/{tier}"] = cell
    return {"seed": seed, "plan": plan.summary(), "kinds": fault_kinds(plan), "cells": cells}


def replay_command(seed: int, system: str, tier: str) -> str:
    return f"python run_all.py --replay {seed} --system {system} --tier {tier}"


def replay(seed: int, system: str, tier: str) -> dict[str, Any]:
    """One sweep cell, traced: the full document (printed by ``--replay``)."""
    run, m = run_one(seed, system, tier, trace_it=True)
    return trace.build(run, m, f"random {seed}", None, None)


def replay_plan(plan: FaultPlan, seed: int, system: str, tier: str) -> dict[str, Any]:
    """A plan given by hand (``--plan``), traced."""
    run = simulate(plan, SYSTEMS[system], tier, seed, trace=True)
    return trace.build(run, measure(run), plan.name, None, None)


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    table: dict[str, dict[str, Any]] = {}
    failures = []
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    kind_total: Counter[str] = Counter()
    times: dict[str, list[int]] = defaultdict(list)
    for rec in records:
        for kind in rec["kinds"]:
            kind_total[kind] += 1
        for name, cell in rec["cells"].items():
            row = table.setdefault(name, {"runs": 0, "failures": 0, "ambiguous": 0,
                                          "world_race": 0, "oracle_invalid": 0,
                                          "oracle_checked": 0,
                                          "violations": dict.fromkeys(VIOLATIONS, 0)})
            row["runs"] += 1
            row["ambiguous"] += cell.get("ambiguous", 0)
            row["world_race"] += cell.get("world_race", False)
            if cell.get("oracle") is not None:
                row["oracle_checked"] += 1
                row["oracle_invalid"] += cell["oracle"] is False
            if cell["resolution_ms"] is not None:
                times[name].append(cell["resolution_ms"])
            for reason in cell["reasons"]:
                row["violations"][reason] += 1
            if not cell["ok"]:
                row["failures"] += 1
                system, tier = name.split("/")
                failures.append({"seed": rec["seed"], "system": system, "tier": tier,
                                 "reasons": cell["reasons"], "plan": rec["plan"],
                                 "command": replay_command(rec["seed"], system, tier)})
                for kind in rec["kinds"]:
                    by_kind[kind][system] += 1
    for name, row in table.items():
        row["rate"] = round(row["failures"] / row["runs"], 4) if row["runs"] else 0.0
        ts = sorted(times[name])
        row["resolution_ms"] = {"median": _pct(ts, 0.5), "p90": _pct(ts, 0.9),
                                "max": ts[-1] if ts else None}
    kernel_failures = sum(table[f"kernel/{t}"]["failures"] for t in TIER_NAMES
                          if f"kernel/{t}" in table)
    return {"cases": len(records), "table": table, "failures": failures,
            "kernel_failures": kernel_failures,
            "kinds": {k: {"cases": kind_total[k], "failing_runs": dict(sorted(by_kind[k].items()))}
                      for k in sorted(kind_total)},
            "resolution_samples": {k: sorted(v) for k, v in sorted(times.items())}}


def _pct(values: list[int], q: float) -> int | None:
    if not values:
        return None
    return values[min(len(values) - 1, int(q * len(values)))]


def run(pool: Any, first_seed: int, cases: int, out: Path,
        say: Callable[[str], None]) -> dict[str, Any]:
    from sim.parallel import map_ordered

    seeds = list(range(first_seed, first_seed + cases))
    records = map_ordered(pool, case, seeds)
    summary = summarize(records)
    write(out, first_seed, records, summary)
    for system in SYSTEM_NAMES:
        rates = ", ".join(f"{t} {summary['table'][f'{system}/{t}']['failures']}"
                          for t in TIER_NAMES) if records else "no cases"
        say(f"      {system:<12} failing runs per tier: {rates}")
    for f in summary["failures"]:
        if f["system"] == "kernel":
            say(f"      KERNEL FAILURE {f['reasons']}: {f['command']}")
    return summary


def compact_record(rec: dict[str, Any]) -> dict[str, Any]:
    """A case as one short line: each cell is [refunded, outcome, reasons, resolution_ms],
    plus a fifth element {"world_race": true, "oracle": ...} only when there is something to
    say (the oracle's verdict is shown only when it is not True)."""
    cells = {}
    for name, c in rec["cells"].items():
        cell: list[Any] = [c["refunded"], c["outcome"], c["reasons"], c["resolution_ms"]]
        extra = {k: c[k] for k in ("world_race",) if c.get(k)}
        if c.get("oracle", True) is not True:
            extra["oracle"] = c["oracle"]
        if extra:
            cell.append(extra)
        cells[name] = cell
    return {"seed": rec["seed"], "plan": rec["plan"], "kinds": rec["kinds"], "cells": cells}


def write(out: Path, first_seed: int, records: list[dict[str, Any]],
          summary: dict[str, Any]) -> None:
    compact = "".join(json.dumps(compact_record(r), sort_keys=True, separators=(",", ":"),
                                 ensure_ascii=False) + "\n" for r in records)
    (out / "sweep_cases.jsonl").write_text(compact, encoding="utf-8")
    report.write_json(out / "sweep_summary.json", {
        "first_seed": first_seed, "cases": summary["cases"], "table": summary["table"],
        "kinds": summary["kinds"], "failing_runs": len(summary["failures"])})
    report.write_text(out / "sweep_summary.md", markdown(first_seed, summary))
    report.write_text(out / "sweep_failures.md", failures_markdown(summary["failures"]))


def markdown(first_seed: int, s: dict[str, Any]) -> str:
    n = s["cases"]
    out = ["# Sweep summary", "",
           f"{n} seeded cases (seeds {first_seed}..{first_seed + n - 1}), each run against "
           f"every system at every tier. Violations are measured from what the target "
           f"applied. AMBIGUOUS is availability lost, not a violation. `world_race`: a refund "
           f"whose request left under holding premises landed after the world moved (no "
           f"worker can prevent it; not a violation). Failing runs, each with its replay "
           f"command: `sweep_failures.md`.", ""]
    head = ["system", "tier", "runs", "failing", "rate", *VIOLATIONS, "ambiguous",
            "world_race", "oracle checked/invalid", "resolution ms median/p90/max"]
    out += [report._row(head), report._row(["---"] * len(head))]
    for name in sorted(s["table"], key=lambda k: CELLS.index(tuple(k.split("/")))):
        row = s["table"][name]
        system, tier = name.split("/")
        r = row["resolution_ms"]
        out.append(report._row([system, tier, str(row["runs"]), str(row["failures"]),
                                f"{row['rate']:.2%}",
                                *[str(row["violations"][v]) for v in VIOLATIONS],
                                str(row["ambiguous"]), str(row["world_race"]),
                                f"{row['oracle_checked']}/{row['oracle_invalid']}",
                                f"{r['median']}/{r['p90']}/{r['max']}"]))
    out += ["", "## Failing runs by fault kind", "",
            "A case usually combines several faults; a failing run counts once for each kind "
            "its case contains.", ""]
    head = ["fault kind", "cases", *SYSTEM_NAMES]
    out += [report._row(head), report._row(["---"] * len(head))]
    for kind, info in s["kinds"].items():
        out.append(report._row([kind, str(info["cases"])] +
                               [str(info["failing_runs"].get(x, 0)) for x in SYSTEM_NAMES]))
    return "\n".join(out)


def failures_markdown(failures: list[dict[str, Any]]) -> str:
    """One line per failing case: each failing system with its tiers, reasons and the command
    that replays it alone (at its first failing tier; the other tiers replay the same way)."""
    by_seed: dict[int, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    plans = {}
    for f in failures:
        by_seed[f["seed"]][f["system"]].append(f)
        plans[f["seed"]] = f["plan"]
    out = ["# Failing sweep runs", "",
           f"{len(failures)} failing runs in {len(by_seed)} cases. One line per case; each "
           "failing system shows its failing tiers, the violations, and the command that "
           "replays it alone and prints its full timeline (swap `--tier` for the other tiers).",
           ""]
    for seed in sorted(by_seed):
        parts = []
        for system in SYSTEM_NAMES:
            runs = by_seed[seed].get(system)
            if not runs:
                continue
            reasons = sorted({r for f in runs for r in f["reasons"]})
            tiers = " ".join(f["tier"] for f in runs)
            parts.append(f"{system} {tiers} ({', '.join(reasons)}): `{runs[0]['command']}`")
        out.append(f"- seed {seed} [{plans[seed]}]: " + "; ".join(parts))
    return "\n".join(out)
