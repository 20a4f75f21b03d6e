"""Coverage floors: in how many kernel runs each fault actually took effect, per tier.

How it works. A plan only says what may go wrong; the world records what did (``Run.took``:
the slow send landed after the restart, the torn tail was on disk at the restart, a second
recoverer stepped the same effect, the lookup lag hid the effect or would have at the
deadline...). ``Coverage`` counts, per tier, the kernel runs in which each fault kind took
effect. ``FLOOR`` is the share every fault must reach at every tier where it applies
(``APPLIES``); ``misses`` lists the ones below it, which the tests turn into a failure.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from faults.plans import LATE_WORLD_EVENTS, LEASE_EXPIRY, LEASE_RENEWAL, WORLD_EVENTS
from sim.tiers import TIER_NAMES

FLOOR = 0.05
KINDS = ("crash before send", "crash in flight", "crash after apply", "crash after ack",
         "late recovery", "crash during recovery", "two recoverers", "torn write",
         *(f"{e} before dispatch" for e in WORLD_EVENTS),
         *(f"{e} during outage" for e in WORLD_EVENTS if e != "manual_refund"),
         f"{LEASE_RENEWAL} before dispatch", *(f"{e} during outage" for e in LATE_WORLD_EVENTS),
         "duplicate submit", "conflicting payload", "model re-decides", "slow send",
         "ack lost", "late ack", "lookup lag", "delivery bound", "late delivery", "early lookup")
# Where a fault can matter: a dedup window only at deduplicating tiers, a lookup lag only
# where the target can be looked up. Everything else applies at every tier.
APPLIES = {"late recovery": ("t1", "t1d"), "lookup lag": ("t1", "t2"),
           "early lookup": ("t1", "t2")}
NOTES = {
    "lookup lag": "the lag hid the applied effect from a lookup, or it landed so close to its "
                  "deadline that a lookup made at the deadline would have missed it (the "
                  "settle margin is what kept recovery honest)",
    "slow send": "the first request reached the target after the worker restarted",
    "two recoverers": "a second restarted worker stepped recovery of the same effect",
    "torn write": "a torn last line was on disk when the worker restarted",
    "late recovery": "recovery began past the dedup window minus its margin, effect open",
    "delivery bound": "a request was lost because it would have arrived past the bound",
    "late ack": "the delayed answer arrived after the sender's timeout or crash",
    f"{LEASE_RENEWAL} before dispatch": "the decision's lease was revoked and the agent held "
                                        "a fresh one of another id",
    f"{LEASE_EXPIRY} during outage": "the decision's lease expired at the very instant of the "
                                     "restart",
    "early lookup": "a lookup answer asked before the claim's end was offered to a recovery "
                    "step after it",
    "late delivery": "a request reached a target that keeps no in-flight bound (and says so) "
                     "after its deadline",
}


def tiers_of(kind: str) -> tuple[str, ...]:
    return APPLIES.get(kind, TIER_NAMES)


class Coverage:
    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()
        self.took: dict[str, Counter[str]] = {t: Counter() for t in TIER_NAMES}

    def add(self, tier: str, took: list[str]) -> None:
        self.runs[tier] += 1
        self.took[tier].update(took)

    def result(self) -> dict[str, Any]:
        rows = {}
        for kind in KINDS:
            rows[kind] = {t: self.took[t][kind] for t in tiers_of(kind)}
        return {"floor": FLOOR, "runs": dict(self.runs), "took_effect": rows}


def misses(cov: dict[str, Any]) -> list[str]:
    """Every (fault, tier) below the floor, as readable lines."""
    out = []
    for kind, per_tier in cov["took_effect"].items():
        for tier, n in per_tier.items():
            runs = cov["runs"].get(tier, 0)
            if runs and n < cov["floor"] * runs:
                out.append(f"{kind} at {tier}: took effect in {n} of {runs} kernel runs "
                           f"({n / runs:.1%} < {cov['floor']:.0%})")
    return out


def markdown(cov: dict[str, Any], cases: int) -> str:
    out = ["# Coverage: in how many kernel runs each fault took effect", "",
           f"{cases} sweep cases. A fault counts only when it took effect in the run (not "
           f"when it was merely planned). Floor: {cov['floor']:.0%} of the kernel runs at every "
           "tier where the fault applies (`-`: does not apply). `tests/sim/test_sim_coverage.py` "
           "fails when a floor is missed.", ""]
    head = ["fault", *TIER_NAMES, "took effect means"]
    out += ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for kind, per_tier in cov["took_effect"].items():
        cells = []
        for t in TIER_NAMES:
            runs = cov["runs"].get(t, 0)
            if t not in per_tier:
                cells.append("-")
            else:
                n = per_tier[t]
                low = " **below floor**" if runs and n < cov["floor"] * runs else ""
                cells.append(f"{n} ({n / max(1, runs):.1%}){low}")
        out.append("| " + " | ".join([kind, *cells, NOTES.get(kind, "")]) + " |")
    missed = misses(cov)
    out += ["", f"Floors missed: {len(missed)}."] + [f"- {m}" for m in missed]
    return "\n".join(out)
