"""The fixed coding table: the original's seven rows and one row per guarantee, every system.

How it works. Each row is a ``CodingPlan``; each (row, system) cell is one traced run with
``FIXED_SEED``, judged by ``sim.coding.judge``. A cell holds when the judge finds no harm and
no change refused for no reason. ``REFERENCE`` is what the original system measured on its
seven rows (its file mode lost availability on benign_reformat, its symbol mode let
semantic_only land broken, every other row held); the table says whether our runs of the
original's two modes reproduce it.
"""

from __future__ import annotations

from typing import Any

from sim.coding.judge import judge
from sim.coding.registry import SYSTEM_NAMES, SYSTEMS
from sim.coding.story import WORK, CodingPlan, simulate

FIXED_SEED = 1
MID = WORK // 2

ROWS: dict[str, tuple[str, CodingPlan]] = {p.name: (g, p) for g, p in (
    ("original", CodingPlan("rename_break", (("post_url", 0),), world=(("rename", MID),))),
    ("original", CodingPlan("duplicate_work", (("post_url", 0), ("post_url_dup", 100)))),
    ("original", CodingPlan("benign_reformat", (("post_url", 0),), world=(("reformat", MID),))),
    ("original", CodingPlan("crash_before_commit", (("post_url", 0),), crash="after_apply")),
    ("original", CodingPlan("duplicate_submit", (("post_url", 0), ("post_url", 20)))),
    ("original", CodingPlan("lease_revoked", (("post_url", 0),), revoke=(("agent-a", MID),))),
    ("original", CodingPlan("semantic_only", (("post_url", 0),), world=(("semantic", MID),))),
    ("G2", CodingPlan("stale_owner_late_write", (("post_url", 0), ("post_url_takeover", 700)),
                      expire=(("agent-a", 600),), slow_send=1_500)),
    ("G3", CodingPlan("coordinator_killed_mid_change", (("banner", 0),), crash="mid_change")),
    ("G5", CodingPlan("agent_edits_own_test", (("post_url_own_test", 0),))),
    ("G6", CodingPlan("overlapping_reads", (("truncate_slugs", 0), ("post_url", 100)))),
    ("G7", CodingPlan("shared_budget_two_crashes", (("post_url", 0), ("shout", 50),
                                                    ("footer", 900)),
                      crash="after_apply", recrash="before_send", cap=20)),
    ("G8", CodingPlan("plan_superseded_mid_change", (("post_url", 0),),
                      supersede=(("plan-main", MID),))),
)}

# The original system's measured outcome on its seven rows: which rows each mode failed.
REFERENCE = {"filehash": {"benign_reformat"}, "symbol": {"semantic_only"}}


def cells() -> list[tuple[str, str]]:
    return [(r, s) for r in ROWS for s in SYSTEM_NAMES]


def run_cell(cell: tuple[str, str], repo: Any = None, trace: bool = True) -> dict[str, Any]:
    row, system = cell
    guarantee, plan = ROWS[row]
    run = simulate(plan, SYSTEMS[system], FIXED_SEED, trace=trace, repo=repo)
    verdict = judge(run)
    out = {"id": f"{row}/{system}", "row": row, "guarantee": guarantee, "system": system,
           "verdict": "ok" if verdict["ok"] else "FAIL", "harms": verdict["harms"],
           "lost": verdict["lost"], "details": verdict["details"], "spent": verdict["spent"],
           "landed": verdict["landed"], "outcomes": {f"{j.id}:{j.unit.name}": j.outcome
                                                     for j in run.jobs}}
    ref = REFERENCE.get(system)
    if ref is not None and guarantee == "original":
        out["matches_reference"] = (row in ref) == (out["verdict"] == "FAIL")
    if trace:
        out["trace"] = {"plan": plan.as_json(), "events": run.events,
                        "journal": [e for e in run.disk.entries if e]}
    return out


def table(repo_factory: Any = None) -> list[dict[str, Any]]:
    return [run_cell(c, repo_factory() if repo_factory else None) for c in cells()]
