"""Judging a run from what the target actually applied, never from what a system claims.

How it works. Every application the target made carries the request that caused it, and the
request was stamped when it left the worker with the ground truth of that moment: was the
lease live, did the decision's premises still hold (its own refunds excluded). From these
records alone, for every system: money refunded versus approved, duplicate applications of
one decision, applications whose amount differs from the first decision (conflicting
payloads), sends under a revoked lease or a stale premise, jobs never answered. For the
kernel, ``sim.judge`` adds its three independent judges (ground truth against the receipts,
the invariants, the spec). A run is ``ok`` when no violation is found; AMBIGUOUS and
REFUSED are availability, not violations. A refund landing after the world moved, when its
request had left under holding premises, is ``world_race`` (nothing a worker can prevent).

Time to resolution is measured the same way for every system: from each job's submission
until its caller can know the outcome (a final answer; for the kernel, a resubmission told
"in flight" knows when the effect reaches its final state); the run's is the longest.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from sim import judge

VIOLATIONS = ("duplicate", "conflicting_applied", "revoked_lease_send", "stale_premise_send",
              "dishonest_receipt", "receipt_not_journal", "conflict_not_refused", "unresolved",
              "resent_t3", "self_race", "invariants", "spec", "kernel_alert", "driver_error")
# Harm kinds, as the plots and tables separate them.
HARM = {"money": ("duplicate", "conflicting_applied"),
        "authority": ("revoked_lease_send", "stale_premise_send"),
        "dishonest": ("dishonest_receipt", "receipt_not_journal", "conflict_not_refused"),
        "unresolved": ("unresolved",),
        "protocol": ("resent_t3", "self_race", "invariants", "spec", "kernel_alert",
                     "driver_error")}


def applications(run: Any) -> dict[str, int]:
    story = run.story
    seen: Counter[str] = Counter()
    counts = {"applications": 0, "duplicates": 0, "conflicting": 0, "revoked_lease": 0,
              "stale_premise": 0}
    for app in run.target.applications:
        req = app.request
        seen[req.decision] += 1
        counts["applications"] += 1
        counts["duplicates"] += seen[req.decision] > 1
        counts["conflicting"] += story.conflicts(req.payload, req.decision)
        counts["revoked_lease"] += not req.lease_live
        counts["stale_premise"] += not req.premises_hold
    return counts


def kernel_view(run: Any) -> dict[str, Any]:
    """Journal, receipts, outcome counts and the independent judges' verdicts."""
    entries = judge.entries_of(run)
    finals = Counter(r["final"] for r in run.receipts)
    verdict = judge.judge(run, entries)
    return {"entries": entries, "receipts": run.receipts, "unresolved": finals[None],
            "ambiguous": finals["AMBIGUOUS"], "refused": finals["REFUSED"],
            "committed": finals["COMMITTED"],
            "rejected": sum(e["kind"] == "REJECTED" for e in entries), "judge": verdict}


def resolution(run: Any, final_at: int | None) -> int | None:
    """The longest time from a job's submission until its caller can know the outcome."""
    longest = 0
    for job in run.jobs:
        known = job.done_at if job.done and job.outcome != "in_flight" else final_at
        if known is None:
            return None
        longest = max(longest, known - job.at)
    return longest


def measure(run: Any) -> dict[str, Any]:
    """The run's measurements, outcome, violations and verdict (the kernel view attached)."""
    story = run.story
    m: dict[str, Any] = story.metrics()
    m.update(applications(run))
    violations: list[str] = []
    _count(violations, m["duplicates"], "duplicate")
    _count(violations, m["conflicting"], "conflicting_applied")
    _count(violations, m["revoked_lease"], "revoked_lease_send")
    _count(violations, m["stale_premise"], "stale_premise_send")
    view = None
    if run.system.name == "kernel":
        view = kernel_view(run)
        verdict = view["judge"]
        m.update({k: view[k] for k in ("unresolved", "ambiguous", "refused", "committed",
                                       "rejected")})
        violations += [v for v in verdict["ground_truth"] if v not in violations]
        _count(violations, len(verdict["invariants"]), "invariants")
        _count(violations, verdict["spec"] is not None, "spec")
        m["caught_by"] = verdict["caught_by"]
        m["outcome"] = kernel_outcome(view)
        m["resolution_ms"] = resolution(run, judge.final_at(view["entries"]))
    else:
        m["resolution_ms"] = resolution(run, None)
        m["unresolved"] = sum(not j.done for j in run.jobs)
        _count(violations, m["unresolved"], "unresolved")
        m["outcome"] = f"{m['applications']} applied"
    _count(violations, len(run.alerts), "kernel_alert")
    _count(violations, len(run.errors), "driver_error")
    if run.system.name == "kernel":
        m["caught_by"] = caught_by(violations, m["caught_by"])
    m["world_race"] = story.overreached() and not violations
    m["violations"] = violations
    m["ok"] = not violations
    return m | ({"kernel": view} if view is not None else {})


def caught_by(violations: list[str], judges: list[str]) -> list[str]:
    """Which judges found something: the three of sim.judge, plus the kernel's own alert and
    the driver's error (a command the driver could not carry out)."""
    found = set(judges)
    if set(violations) & {"duplicate", "conflicting_applied", "revoked_lease_send",
                          "stale_premise_send", "unresolved"}:
        found.add("ground_truth")
    found |= {"alert"} if "kernel_alert" in violations else set()
    found |= {"driver"} if "driver_error" in violations else set()
    return [j for j in (*judge.JUDGES, "alert", "driver") if j in found]


def _count(out: list[str], n: int, name: str) -> None:
    if n:
        out.append(name)


def kernel_outcome(view: dict[str, Any]) -> str:
    parts = [f"{r['final'] or 'OPEN'} ({r['reason']})" for r in view["receipts"]]
    if view["rejected"]:
        parts.append("REJECTED conflicting_payload")
    return "; ".join(parts) or "nothing proposed"
