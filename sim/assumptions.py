"""The worlds where an assumption the kernel's safety rests on does not hold.

How it works. ``results/README.md`` lists the modelling assumptions; for each one the
simulator can break, ``BROKEN`` names the world knob that breaks it and this module runs the
kernel alone over ``CASES`` seeded cases in that world (the same plans as the sweep, with the
knob overridden), counting failing runs per tier and keeping the first failing seeds with
their replay commands. These failures are expected: they show what the assumption buys.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sim import report, sweep
from sim.tiers import TIER_NAMES

CASES = 200  # per broken world (fewer when the sweep itself runs fewer)
BROKEN = {
    "in_flight": "the target ignores deadlines and the network may deliver a request at any "
                 "time (no in-flight bound)",
    "in_flight_declared": "as above, but the target says it bounds nothing "
                          "(bounds_in_flight=false): the assumption is not needed, so the "
                          "kernel must fail nowhere (it pays in AMBIGUOUS instead)",
    "lookup_lag": "a landed effect stays invisible to lookups 1 s longer than the settle "
                  "margin, while the target declares its usual lag",
    "dedup_window": "the target forgets idempotency keys after a quarter of its declared "
                    "window",
    "fsync": "a crash also loses the last journal line that was fsync'd",
    "conditional_append": "a worker appends to the shared journal without re-reading what "
                          "another worker appended (no lock, no conditional append)",
}


def run(executor: Any, out: Path, say: Any, cases: int = CASES) -> dict[str, Any]:
    results = {}
    for name, story in BROKEN.items():
        knob = name
        failing = dict.fromkeys(TIER_NAMES, 0)
        examples: list[str] = []
        for rec in executor.map_chunks(sweep.chunk, sweep.tasks(0, cases, knob, ("kernel",))):
            for cell_name, cell in rec["cells"].items():
                tier = cell_name.split("/")[1]
                if cell[2]:
                    failing[tier] += 1
                    if len(examples) < 5:
                        command = sweep.replay_command(rec["seed"], "kernel", tier, knob)
                        examples.append(f"seed {rec['seed']} {tier} {cell[2]}: `{command}`")
        results[name] = {"world": knob, "story": story, "cases": cases,
                         "kernel_failing_runs": failing, "examples": examples}
        say(f"      {name} broken: kernel failing runs per tier: "
            + ", ".join(f"{t} {n}" for t, n in failing.items()))
    report.write_json(out / "assumptions.json", results)
    report.write_text(out / "assumptions.md", markdown(results))
    return results


def markdown(results: dict[str, Any]) -> str:
    out = ["# When an assumption does not hold", "",
           "The kernel alone, over the sweep's seeded plans, in a world where one assumption "
           "of `README.md` is broken. Failing runs here are expected: they show what the "
           "assumption buys. Each example replays alone.", ""]
    head = ["assumption broken", "world", "cases", *TIER_NAMES]
    out += [report._row(head), report._row(["---"] * len(head))]
    for name, r in results.items():
        out.append(report._row([name, r["story"], str(r["cases"]),
                                *[str(r["kernel_failing_runs"][t]) for t in TIER_NAMES]]))
    for name, r in results.items():
        out += ["", f"## {name}: first failing runs", ""] + [f"- {e}" for e in r["examples"]]
    return "\n".join(out)
