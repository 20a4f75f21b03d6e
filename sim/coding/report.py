"""results/coding_*: the fixed table, its traces, the sweep and the G1-G8 table, as text.

How it works. Every writer takes data computed elsewhere and formats it; the G1-G8 table
(``guarantees_markdown``) reads each guarantee's status off the measured cells: a guarantee
is ``held`` only when the kernel holds its fixed row and the sweep found no harm of its kind,
and the rows and figures that measure it are printed beside it. Files are written with
sorted keys and fixed float formatting, so the same seeds give the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SYSTEM_LABEL = {"naive": "naive", "advisory": "advisory claim files",
                "filehash": "original, file-hash mode", "symbol": "original, symbol mode",
                "kernel": "kernel"}

# guarantee -> (fixed rows, harms of the sweep that measure it, spec invariant, broken variant)
GUARANTEES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], str, str]] = {
    "G1": ("Single order of events", ("duplicate_work", "duplicate_submit"),
           ("implemented_twice", "journal_breach"), "G1_OneOrder (spec/Coord.tla)",
           "spec/broken/StaleView.tla (two writers deciding on a stale view)"),
    "G2": ("Exclusive assignment, fenced", ("stale_owner_late_write", "duplicate_work"),
           ("stale_owner_write", "implemented_twice"), "G2_ExclusiveClaims",
           "spec/broken/CoordNoFencing.tla"),
    "G3": ("Survives coordinator failure", ("coordinator_killed_mid_change",
                                            "crash_before_commit", "shared_budget_two_crashes"),
           ("broken_tree", "dishonest", "unresolved"), "K1-K9 over every open effect "
           "(spec/Kernel.tla, spec/Coord.tla)", "spec/broken/NoDurableIntent.tla"),
    "G4": ("Answerable at any instant", ("coordinator_killed_mid_change",),
           ("unresolved",), "none (kernel.view.status is a pure function of the journal)",
           "none"),
    "G5": ("Verified completion", ("agent_edits_own_test",), ("broken_tree", "test_edited"),
           "G5_VerifiedCompletion", "spec/broken/CoordAgentsWord.tla"),
    "G6": ("Semantic exclusivity (limited: read-set overlap)",
           ("overlapping_reads", "semantic_only", "rename_break"), ("broken_tree",),
           "G6_ReadsAtSend", "none of its own (premise checks: spec/broken/NoRecheck.tla)"),
    "G7": ("Bounded cost", ("shared_budget_two_crashes",), ("over_budget",),
           "G7_Budget, G7_SpentWithinCap", "spec/broken/CoordReserveApart.tla"),
    "G8": ("Intent freshness", ("plan_superseded_mid_change", "lease_revoked"),
           ("superseded_plan_write", "revoked_lease_write"), "G8_PlanAtSend",
           "spec/broken/CoordNoPlanCheck.tla"),
}
G6_NOTE = ("G6 is held only in its limited form. It catches a change whose read set (the "
           "normalised definitions of the symbols its own code uses, found with ast) was "
           "changed by another landing or edit after it was planned, and a unit admitted while "
           "a live claim covered what it reads: such a change is refused for re-planning, "
           "never landed unknowingly. It does not catch two agents on disjoint symbols making "
           "decisions that are incoherent together (each change's reads untouched by the "
           "other, the product of both wrong); the tests then are the only line of defence, "
           "and only when they exercise both. Nobody solves that in general, and neither "
           "does this.")


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, sort_keys=True, indent=1) + "\n", encoding="utf-8")


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _cell(r: dict[str, Any]) -> str:
    if r["verdict"] == "ok":
        return "ok"
    why = r["harms"] + [f"refused {u} for no reason" for u in r["lost"]]
    return "FAIL: " + ", ".join(why)


def table_markdown(rows: list[dict[str, Any]], systems: tuple[str, ...], seed: int,
                   title: str) -> str:
    by = {(r["row"], r["system"]): r for r in rows}
    names = list(dict.fromkeys(r["row"] for r in rows))
    out = [f"# {title}", "", f"Seed {seed}. A cell holds (ok) when the judge finds no harm in "
           "the repository and no correct change refused for no reason. Regenerate: "
           "`python -m sim.coding`.", "",
           "| row | guarantee | " + " | ".join(SYSTEM_LABEL[s] for s in systems) + " |",
           "|---|---|" + "---|" * len(systems)]
    for name in names:
        g = by[(name, systems[0])]["guarantee"]
        out.append(f"| {name} | {g} | " + " | ".join(_cell(by[(name, s)]) for s in systems)
                   + " |")
    ref = [r for r in rows if "matches_reference" in r]
    same = sum(r["matches_reference"] for r in ref)
    out += ["", f"The original's measured outcome (its file-hash mode failed benign_reformat, "
                f"its symbol mode failed semantic_only, every other of its rows held): "
                f"{same} of {len(ref)} of our cells of its two modes on its seven rows agree.",
            "", "Outcomes per unit (kernel):", ""]
    for name in names:
        r = by[(name, "kernel")]
        out.append(f"- {name}: " + "; ".join(f"{k.split(':', 1)[1]} {v}"
                                              for k, v in r["outcomes"].items()))
    return "\n".join(out) + "\n"


def sweep_markdown(summary: dict[str, Any], seed: int) -> str:
    systems = summary["systems"]
    harms = sorted({h for s in systems.values() for h, n in s["by_harm"].items() if n})
    out = ["# Coding sweep", "", f"{summary['cases']} seeded cases (seeds {seed} to "
           f"{seed + summary['cases'] - 1}), each run against every system; harm judged from "
           "the repository and the landing record (sim/coding/judge.py).", "",
           "| system | runs with harm | runs with a change refused for no reason | "
           + " | ".join(harms) + " |", "|---|---|---|" + "---|" * len(harms)]
    for name, s in systems.items():
        out.append(f"| {SYSTEM_LABEL[name]} | {s['harmed']} | {s['lost_availability']} | "
                   + " | ".join(str(s["by_harm"][h]) for h in harms) + " |")
    out += ["", f"Coverage (cases per fault kind; floor {summary['coverage_floor']}):", ""]
    out += [f"- {k}: {n}" for k, n in summary["coverage"].items()]
    if summary["below_floor"]:
        out += ["", "BELOW THE FLOOR: " + ", ".join(summary["below_floor"])]
    out += ["", "Replay a failing case: " + "; ".join(
        f"`{cmds[0]}`" for cmds in summary["replay"].values() if cmds)]
    return "\n".join(out) + "\n"


def guarantees_markdown(rows: list[dict[str, Any]], summary: dict[str, Any] | None,
                        real_agrees: bool | None) -> str:
    by = {(r["row"], r["system"]): r for r in rows}
    kernel = (summary or {}).get("systems", {}).get("kernel")
    out = ["# G1-G8 for several coding agents on one repository", "",
           "Each status is read off measurements: held when the kernel holds every fixed row "
           "that measures it and the sweep found no harm of its kinds in any kernel run. "
           "Sweep figures are kernel runs with that harm, out of all kernel runs.", "",
           "| guarantee | status | spec invariant | broken variant | fixed rows (kernel) | "
           "sweep (kernel runs with the harm) |", "|---|---|---|---|---|---|"]
    for g, (title, fixed_rows, harms, invariant, broken) in GUARANTEES.items():
        held_rows = all(by[(r, "kernel")]["verdict"] == "ok" for r in fixed_rows)
        figures = "not run" if kernel is None else ", ".join(
            f"{h} {kernel['by_harm'][h]}/{kernel['runs']}" for h in harms)
        clean = kernel is not None and all(kernel["by_harm"][h] == 0 for h in harms)
        status = "held" if held_rows and clean else "partial" if held_rows else "absent"
        if g == "G6" and status == "held":
            status = "held (limited form)"
        rows_text = ", ".join(f"{r} {by[(r, 'kernel')]['verdict']}" for r in fixed_rows)
        out.append(f"| {g} {title} | {status} | {invariant} | {broken} | {rows_text} | "
                   f"{figures} |")
    if kernel is not None:
        out += ["", f"Availability: {kernel['lost_availability']} of {kernel['runs']} kernel "
                    f"runs refused at least one change the judge finds would have been "
                    f"correct (the price of refusing on a changed premise)."]
    if real_agrees is not None:
        out += ["", "The fixed table on a real temporary repository with real pytest runs "
                    f"(`python3 run_all.py --coding`): {'agrees' if real_agrees else 'DISAGREES'}"
                    " with the simulated one, cell by cell."]
    out += ["", G6_NOTE, "",
            "G4: `kernel.view.status(entries, now)` answers what runs, who holds which item "
            "until when, why each open unit waits and what to undo (before-images), from the "
            "journal alone; the coordinator_killed row rebuilds claims, reservations and the "
            "open change from the journal after the crash."]
    return "\n".join(out) + "\n"


def traces_document(rows: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    """The viewer's data: one trace per fixed cell."""
    return {"scenario": "coding", "seed": seed, "traces": [
        {"id": r["id"], "row": r["row"], "guarantee": r["guarantee"], "system": r["system"],
         "verdict": r["verdict"], "harms": r["harms"], "lost": r["lost"],
         "outcomes": r["outcomes"], "plan": r["trace"]["plan"], "events": r["trace"]["events"],
         "journal": r["trace"]["journal"]} for r in rows]}
