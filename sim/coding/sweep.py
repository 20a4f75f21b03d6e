"""The seeded coding sweep: random plans, every system, judged from the repository.

How it works. ``plan_from_seed(seed)`` draws one ``CodingPlan`` with one
``random.Random(seed)``: three to five units of work (sometimes one resubmitted, sometimes a
second agent on the same work, sometimes a takeover after the first agent's lease ends),
world edits at random times, a crash point (or none) and a second crash during recovery, an
outage, a slow first write, a revoked lease, a superseded plan, a shared budget, a claim
shorter than the work or the outage (fencing must stop its late write). Case ``seed``
runs that plan against every system with the same seed; ``run`` streams one JSON line per
case to ``coding_sweep_cases.jsonl`` as cases complete (in seed order) and folds them into
the summary: per system, runs with harm, by kind of harm, runs with a change refused for no
reason, and the fault kinds each system fails on. ``COVERAGE_FLOOR`` is the share of cases
each fault kind must reach, or the sweep says so and fails.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sim.coding.judge import HARMS, judge
from sim.coding.registry import SYSTEM_NAMES, SYSTEMS
from sim.coding.story import UNITS, WORK, CodingPlan, simulate

CRASHES = (None, "before_send", "sent", "after_apply", "after_ack", "mid_change")
POOL = ("post_url", "banner", "shout", "footer", "truncate_slugs", "post_url_own_test",
        "post_url_buggy")
COVERAGE_FLOOR = 0.05
FAULT_KINDS = ("crash", "crash mid-change", "crash during recovery", "rename", "reformat",
               "semantic edit", "duplicate work", "duplicate submit", "takeover after lease end",
               "lease revoked", "plan superseded", "shared budget", "slow write",
               "overlapping reads", "edits own test", "buggy change", "short claim")


def plan_from_seed(seed: int) -> CodingPlan:
    rng = random.Random(seed)
    names = rng.sample(POOL, rng.randint(3, 5))
    units = [(n, rng.randrange(0, 1_200, 10)) for n in names]
    expire: list[tuple[str, int]] = []
    if rng.random() < 0.25:
        units.append(("post_url", rng.randrange(0, 300, 10)))
    if rng.random() < 0.2:
        units.append(("post_url_dup", rng.randrange(0, 1_200, 10)))
    if rng.random() < 0.2 and "post_url" in dict(units):
        start = dict(units)["post_url"]
        expire.append(("agent-a", start + rng.randrange(150, WORK + 300, 10)))
        units.append(("post_url_takeover", expire[-1][1] + rng.randrange(50, 400, 10)))
    edit = rng.choice(("rename", "reformat", "semantic", None, None))  # one edit by others
    world = ((edit, rng.randrange(0, 1_500, 10)),) if edit else ()
    crash = rng.choice(CRASHES)
    agents = sorted({UNITS[n].agent for n, _ in units})
    return CodingPlan(
        name=f"random {seed}", units=tuple(sorted(units, key=lambda u: (u[1], u[0]))),
        world=world, crash=crash,
        recrash=rng.choice((None, "before_send", "after_apply")) if crash and
        rng.random() < 0.3 else None,
        outage=rng.randrange(300, 3_000, 100),
        slow_send=rng.choice((0, 0, 0, rng.randrange(200, 2_500, 100))),
        revoke=((rng.choice(agents), rng.randrange(0, 1_500, 10)),) if rng.random() < 0.2
        else (),
        expire=tuple(expire),
        supersede=(("plan-main", rng.randrange(0, 1_500, 10)),) if rng.random() < 0.15 else (),
        cap=rng.choice((None, None, 20, 30, 29)),  # 29: one short of three units' cost
        claim_ttl=rng.randrange(100, 1_000, 50) if rng.random() < 0.25 else None)


def fault_kinds(plan: CodingPlan) -> list[str]:
    names = [n for n, _ in plan.units]
    kinds = []
    if plan.crash:
        kinds.append("crash mid-change" if plan.crash == "mid_change" else "crash")
    if plan.recrash:
        kinds.append("crash during recovery")
    events = {w for w, _ in plan.world}
    kinds += [k for w, k in (("rename", "rename"), ("reformat", "reformat"),
                             ("semantic", "semantic edit")) if w in events]
    if "post_url_dup" in names:
        kinds.append("duplicate work")
    if len(names) != len(set(names)):
        kinds.append("duplicate submit")
    if "post_url_takeover" in names:
        kinds.append("takeover after lease end")
    if plan.revoke:
        kinds.append("lease revoked")
    if plan.supersede:
        kinds.append("plan superseded")
    if plan.cap is not None:
        kinds.append("shared budget")
    if plan.slow_send:
        kinds.append("slow write")
    if "truncate_slugs" in names and any(n.startswith("post_url") for n in names):
        kinds.append("overlapping reads")
    if "post_url_own_test" in names:
        kinds.append("edits own test")
    if "post_url_buggy" in names:
        kinds.append("buggy change")
    if plan.claim_ttl is not None:
        kinds.append("short claim")
    return kinds or ["no fault"]


def case(seed: int) -> dict[str, Any]:
    plan = plan_from_seed(seed)
    cells = {}
    for system in SYSTEM_NAMES:
        v = judge(simulate(plan, SYSTEMS[system], seed))
        cells[system] = {"ok": v["ok"], "harms": v["harms"], "lost": v["lost"],
                         "spent": v["spent"]}
    return {"seed": seed, "kinds": fault_kinds(plan), "plan": plan.as_json(), "cells": cells}


def replay_command(seed: int, system: str) -> str:
    return f"python -m sim.coding --replay {seed} --system {system}"


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    kinds: Counter[str] = Counter(k for r in records for k in r["kinds"])
    systems: dict[str, dict[str, Any]] = {}
    failing_kinds: dict[str, Counter[str]] = defaultdict(Counter)
    first: dict[str, list[str]] = defaultdict(list)
    for r in records:
        for name, cell in r["cells"].items():
            row = systems.setdefault(name, {"runs": 0, "harmed": 0, "lost_availability": 0,
                                            "ok": 0, "by_harm": dict.fromkeys(HARMS, 0)})
            row["runs"] += 1
            row["ok"] += cell["ok"]
            row["harmed"] += bool(cell["harms"])
            row["lost_availability"] += bool(cell["lost"])
            for h in cell["harms"]:
                row["by_harm"][h] += 1
            if cell["harms"]:
                failing_kinds[name].update(r["kinds"])
                if len(first[name]) < 3:
                    first[name].append(replay_command(r["seed"], name))
    n = len(records)
    floor = int(COVERAGE_FLOOR * n)
    short = sorted(k for k in FAULT_KINDS if kinds[k] < floor)
    return {"cases": n, "systems": systems, "coverage": dict(sorted(kinds.items())),
            "coverage_floor": floor, "below_floor": short,
            "failing_kinds": {s: dict(sorted(c.items())) for s, c in failing_kinds.items()},
            "replay": dict(first)}


def run(pool: Any, seed: int, cases: int, out: Path, say: Callable[[str], None]) -> dict[str, Any]:
    records = []
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "coding_sweep_cases.jsonl", "w", encoding="utf-8") as f:
        for n, rec in enumerate(pool.imap(case, range(seed, seed + cases), chunksize=8), 1):
            f.write(json.dumps(rec, sort_keys=True, separators=(",", ":")) + "\n")
            records.append(rec)
            if n % 500 == 0:
                say(f"      {n}/{cases} cases")
    return summarize(records)
