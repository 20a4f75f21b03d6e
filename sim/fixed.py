"""The fixed fault table: every catalogue row against every system at every tier.

How it works. Each (fault, system, tier) cell is one traced run with ``FIXED_SEED``; its
measurements are compared with the reference outcome of DESIGN.md section 6 where the
reference has one (dollars, and the outcome word for the kernel; the verdict for the
baselines at t1). Cells are independent, so they are computed in any order and emitted
sorted by the catalogue, system and tier order.
"""

from __future__ import annotations

from typing import Any

from faults.plans import CATALOGUE, REFERENCE, REFERENCE_FAILS
from faults.systems import SYSTEM_NAMES, SYSTEMS
from sim import trace
from sim.measure import measure
from sim.tiers import TIER_NAMES
from sim.world import simulate

FIXED_SEED = 1

# Where this simulator's outcome differs from the reference on purpose (cell -> why).
EXPLAINED = {
    "kernel/t1d": "dedupe-only target: when our own refund may have landed, the premises "
                  "cannot exclude it (the target cannot say which refund is ours), so recovery "
                  "ends AMBIGUOUS instead of resending; never a second refund",
}


def cells() -> list[tuple[str, str, str]]:
    return [(f, s, t) for f in CATALOGUE for s in SYSTEM_NAMES for t in TIER_NAMES]


def expected(fault: str, system: str, tier: str) -> dict[str, Any] | None:
    ref = REFERENCE.get((fault, system, tier))
    if ref is None:
        return None
    out: dict[str, Any] = {"dollars": ref[0], "outcome": ref[1] or None}
    fails = REFERENCE_FAILS.get((fault, system))
    if fails is not None and tier == "t1":
        out["verdict"] = "FAIL" if fails else "ok"
    elif system == "kernel":
        out["verdict"] = "ok"
    return out


def matches(m: dict[str, Any], exp: dict[str, Any] | None) -> bool | None:
    if exp is None:
        return None
    if m["refunded"] != exp["dollars"]:
        return False
    if exp["outcome"] and exp["outcome"] not in m["outcome"]:
        return False
    verdict = "ok" if m["ok"] else "FAIL"
    return exp.get("verdict", verdict) == verdict


def run_cell(cell: tuple[str, str, str]) -> dict[str, Any]:
    """One traced cell: its trace document (which carries the table row)."""
    fault, system, tier = cell
    run = simulate(CATALOGUE[fault], SYSTEMS[system], tier, FIXED_SEED, trace=True)
    m = measure(run)
    exp = expected(fault, system, tier)
    return trace.build(run, m, fault, exp, matches(m, exp))


def row(doc: dict[str, Any]) -> dict[str, Any]:
    """The table row of a cell's trace."""
    return {k: doc[k] for k in ("id", "fault", "system", "tier", "approved", "refunded",
                                "outcome", "verdict", "reasons", "expected",
                                "matches_reference")} | {
        "oracle_valid": (doc["oracle"] or {}).get("valid"),
        "spec_valid": (doc["spec_check"] or {}).get("valid")}
