"""Writing results: markdown and JSON tables, trace files, with stable bytes.

How it works. Every writer takes plain data and an output directory, sorts what has no
natural order, and writes JSON with sorted keys and a trailing newline, so two runs with the
same seeds produce identical files. Paths inside the files are relative to the output dir.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from faults.plans import CATALOGUE
from faults.systems import SYSTEM_NAMES
from sim import trace
from sim.fixed import EXPLAINED
from sim.tiers import TIER_NAMES

REF_COLUMNS = (("kernel", "t1"), ("kernel", "t2"), ("kernel", "t3"), ("naive", "t1"),
               ("idempotency", "t1"), ("durable", "t1"))


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(trace.dumps(data), encoding="utf-8")


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")


def clean(out: Path) -> None:
    """Remove what a previous run generated, so the results come from nothing."""
    shutil.rmtree(out / "traces", ignore_errors=True)
    for pattern in ("*.md", "*.json", "*.png", "*.svg"):
        for old in out.glob(pattern):
            old.unlink()


def write_traces(out: Path, docs: list[dict[str, Any]]) -> None:
    index = []
    for doc in docs:
        write_json(out / "traces" / f"{doc['id']}.json", doc)
        index.append({"id": doc["id"], "file": f"{doc['id']}.json", "fault": doc["fault"],
                      "system": doc["system"], "tier": doc["tier"], "verdict": doc["verdict"],
                      "refunded": doc["refunded"], "outcome": doc["outcome"]})
    write_json(out / "traces" / "index.json", {
        "version": trace.TRACE_VERSION, "format": "sim/TRACES.md",
        "faults": list(CATALOGUE), "systems": list(SYSTEM_NAMES), "tiers": list(TIER_NAMES),
        "traces": index})


def cell_text(r: dict[str, Any], kernel: bool) -> str:
    word = r["outcome"].split(" (")[0].split(";")[0] if kernel else ""
    rejected = " +REJECTED" if kernel and "REJECTED" in r["outcome"] else ""
    verdict = "ok" if r["verdict"] == "ok" else "**FAIL**"
    return f"${r['refunded']} {word}{rejected} {verdict}".replace("  ", " ")


def fixed_markdown(rows: list[dict[str, Any]]) -> str:
    by = {(r["fault"], r["system"], r["tier"]): r for r in rows}
    out = ["# Fixed fault table", "",
           "Every fault of the catalogue (DESIGN.md section 6) against every system at every "
           "tier. Dollars are what the target actually applied (system plus support by hand); "
           "$20 is approved. t1 = dedupes and can be looked up (Stripe-like), t1d = dedupes "
           "only, t2 = lookup only (with lag), t3 = neither. Regenerate with "
           "`python run_all.py`; every cell's full trace is in `traces/`.", "",
           "## Against the reference outcomes", "",
           "Each cell: ours, then the reference in brackets; a mark shows whether they agree.",
           ""]
    head = ["fault"] + [f"{s} {t}" for s, t in REF_COLUMNS]
    out += [_row(head), _row(["---"] * len(head))]
    for fault in CATALOGUE:
        cells = [fault]
        for system, tier in REF_COLUMNS:
            r = by[(fault, system, tier)]
            exp = r["expected"]
            ours = cell_text(r, system == "kernel")
            if exp is None:
                cells.append(ours + " (no reference)")
                continue
            ref = f"${exp['dollars']}" + (f" {exp['outcome']}" if exp["outcome"] else "") + \
                (f" {exp['verdict']}" if "verdict" in exp else "")
            mark = "✓" if r["matches_reference"] else "✗"
            cells.append(f"{ours} [{ref}] {mark}")
        out.append(_row(cells))
    kernel = [r for r in rows if r["system"] == "kernel"]
    oracle_ok = sum(r["oracle_valid"] is True for r in kernel)
    spec_ok = sum(r["spec_valid"] is True for r in kernel)
    spec_ran = sum(r["spec_valid"] is not None for r in kernel)
    mismatches = [r for r in rows if r["matches_reference"] is False]
    out += ["", f"Cells with a reference: {sum(r['matches_reference'] is not None for r in rows)}"
            f"; mismatches: {len(mismatches)}. Kernel runs judged valid by the "
            f"independent judges (`sim/judge.py`): {oracle_ok}/{len(kernel)}; replayed "
            f"step by step against "
            f"Kernel.tla (`spec.conformance.trace`): {spec_ok}/{spec_ran} valid."]
    for r in mismatches:
        out.append(f"- {r['id']}: ${r['refunded']} {r['outcome']} vs {r['expected']}")
    out += ["", "Notes: the reference's kernel t1 labels 'retry' where this simulator's t1 "
            "target is also queryable, so recovery confirms by lookup first (same dollars). "
            f"kernel t1d: {EXPLAINED['kernel/t1d']}.", ""]
    for system in SYSTEM_NAMES:
        out += [f"## {system}", ""]
        head = ["fault"] + list(TIER_NAMES)
        out += [_row(head), _row(["---"] * len(head))]
        for fault in CATALOGUE:
            out.append(_row([fault] + [cell_text(by[(fault, system, t)], system == "kernel")
                                       for t in TIER_NAMES]))
        out.append("")
    return "\n".join(out)


INDEX = """# Results

Generated by `python run_all.py` (seed and knobs are printed first); never edit by hand.
Same seeds, same bytes. Formats: `sim/TRACES.md`.

| file | what |
|---|---|
| `fixed_table.md`, `.json` | every fault x system x tier, against DESIGN.md section 6 |
| `traces/` | one full trace per fixed-table cell (`index.json` lists them), for the viewer |
| `sweep_summary.md`, `.json` | the sweep: harm, violations, judges, resolution, digest |
| `sweep_cases.jsonl` | one compact line per sweep case, written as it completes |
| `sweep_failures.md` | every failing sweep run, with the command that replays it alone |
| `coverage.md` | in how many kernel runs each fault took effect, per tier, against the 5% floor |
| `assumptions.md`, `.json` | the kernel alone in worlds where one assumption below is broken |
| `shrunk.md`, `.json` | the smallest failing story per system (Hypothesis) |
| `mutants/` | planted kernel bugs and what caught them (`python run_all.py --mutants`) |
| `violations_by_system_tier.*`, `heatmap_fault_system.*`, `time_to_resolution.*` | plots |

## How every kernel run is judged

Never by the kernel's own decision code (a test walks the imports and poisons the
functions): ground truth from what the target applied (each request stamped, when it left,
with whether the lease was live and the decision's premises held) and from the receipts
the kernel reported; the independent invariants `kernel.invariants` (K1-K7, K9); and the
journal replayed step by step against `spec/Kernel.tla`. AMBIGUOUS and REFUSED are
availability, never violations.

## The assumptions the kernel's safety rests on

Each holds in the sweep's world. `assumptions.md` runs the kernel where it does not.

1. **In-flight bound.** A request cannot land after a known time: the target drops a request
   that arrives after its deadline, or delivery is bounded (within the 2 s send timeout, or
   never). Each sweep case draws one of the two for every system alike; the network may
   delay a request far past its deadline. About a sixth of the cases instead have a target that
   bounds nothing and says so (`bounds_in_flight=false`): the assumption is not needed there
   and the kernel must stay safe, paying in AMBIGUOUS; a slow send then often lands past its
   deadline ("late delivery"). Broken world: `in_flight` (neither, and the target does not
   say so).
2. **Lookup lag bound.** A queryable target shows a landed effect within its declared lag,
   and the settle margin (1 s) exceeds it. Broken world: `lookup_lag`.
3. **Dedup window.** A deduplicating target remembers a key for its declared window (60 s);
   the kernel resends with the key only until window minus the 5 s margin. Broken world:
   `dedup_window`.
4. **Durable fsync.** A line the journal fsync'd survives a crash; an unflushed tail may be
   lost or torn. Broken world: `fsync`.
5. **One order for the journal.** Several workers append to one journal only conditionally
   (re-read and replay when another appended first; the simulator's driver does this, the
   kernel is pure). Broken world: `conditional_append`.
6. **Truthful answers.** An ack or a found lookup means the target applied the effect; the
   target applies what it acknowledges, once per request. Not broken here.
7. **One clock.** Deadlines, claims and windows are compared on one time line (the simulated
   clock is shared by workers and targets); real deployments need bounded skew. Not broken.
8. **Observations current at the check.** Lease and facts are read when the kernel checks
   them; a world change between the check and the landing is `world_race` (counted, not a
   violation: no worker can prevent it). Not broken.

## How the world is modelled (and where it differs from the reference)

- Tiers: t1 dedupes and can be looked up (Stripe-like, the reference's tier 1), t1d dedupes
  only, t2 lookup only (lag up to 900 ms, below the 1,000 ms settle margin), t3 neither.
  Dedup window 60 s; kernel send timeout 2 s, settle margin 1 s, dedup margin 5 s.
- Swarm generator: each case switches a random subset of fault kinds on and shapes their
  parameters so they take effect (a slow send that lands after the restart, a torn line on
  disk at the restart, a second recoverer stepping the same effect, a lag that only the
  settle margin keeps from hiding the effect). Coverage counts what took effect.
- Premises: each case draws whether the decision relies on the order's refunded total (a
  fact its own refund moves: at tiers that cannot say which refund is ours, that premise
  leaks whether the refund landed) or only on facts the refund never moves (the approval,
  the payment, a customer hold), so no premise reveals the answer.
- Kernel t1 rows the reference labels "retry": this t1 target is also queryable, so recovery
  looks the effect up before resending (same dollars).
- Kernel t1d (not in the reference): with a premise the refund moves, a dedupe-only target
  cannot say which refund is ours, so recovery ends AMBIGUOUS rather than resending.
- Baselines: naive re-runs the agent after a crash (it may re-decide) and retries a timed
  out call once without a key; idempotency-only keys requests by (order, case) and retries;
  durable execution records the decision and step results, re-runs a started step with the
  same key and holds a workflow lock. None re-checks the lease or the premises.
- Leases: the decision names one lease. A world event revokes it (`revoke_lease`), or
  revokes it and leaves the agent holding a fresh live lease under another id
  (`renew_lease`): a live lease that is not the decision's authority, so a send of that
  decision after it counts as a send under a revoked lease.
- Crashes happen at protocol points (before the send, in flight, after the target applied,
  while the answer is journaled, while recovering), so one plan tells the same story to
  every system.
- Time to resolution: from each job's submission until its caller can know the outcome, the
  same for every system; non-failing and failing runs are reported apart.
"""


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"
