"""Judging a run from what the target actually applied, never from what a system claims.

How it works. Every application the target made carries the request that caused it, and the
request was stamped when it left the worker with the ground truth of that moment: was the
lease live, did the decision's first premises still hold (its own refunds excluded). From
these records alone: money refunded versus approved, duplicate applications of one
decision, applications whose amount differs from the first decision (conflicting payloads),
sends under a revoked lease or a stale premise. For the kernel, also: receipts that
contradict the target, effects left unresolved, AMBIGUOUS outcomes, kernel alerts, and the
verdict of the kernel's own oracle (``kernel.oracle.check``) over the journal and the
target-side history. A run is ``ok`` when no violation is found; AMBIGUOUS and REFUSED are
availability, not violations. A refund landing after the world moved, when its request had
left under holding premises, is reported as ``world_race`` (nothing a worker can prevent).
"""

from __future__ import annotations

import importlib
from collections import Counter
from typing import Any

import kernel

VIOLATIONS = ("duplicate", "conflicting_applied", "revoked_lease_send", "stale_premise_send",
              "dishonest_receipt", "unresolved", "kernel_alert", "driver_error", "oracle")

try:  # imported once, up front: forked workers then all judge with the same oracle
    _oracle_module: Any = importlib.import_module("kernel.oracle")
except ImportError:  # the lead's oracle has not landed: keep our own measurements only
    _oracle_module = None


def oracle() -> Any:
    """kernel.oracle if the lead has landed it, else None."""
    return _oracle_module


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
    """Journal, receipts and their honesty against the target, and the oracle's verdict."""
    entries = run.disk.entries  # sealed with the lines on disk; the oracle re-verifies the text
    receipts = kernel.receipts(entries)
    applied = run.target.by_effect
    dishonest = 0
    for r in receipts:
        landed = r.effect_id in applied
        if (r.executed == "true" and not landed) or (r.executed == "false" and landed) \
                or (r.final == "COMMITTED" and not landed):
            dishonest += 1
    finals = Counter(r.final for r in receipts)
    rejected = sum(e["kind"] == "REJECTED" for e in entries)
    view = {"entries": entries, "receipts": receipts, "dishonest": dishonest,
            "unresolved": finals[None], "ambiguous": finals["AMBIGUOUS"],
            "refused": finals["REFUSED"], "committed": finals["COMMITTED"], "rejected": rejected,
            "resolution_ms": resolution(entries), "oracle": None}
    check = oracle()
    if check is not None:
        view["oracle"] = oracle_verdict(check, run.disk.text(), run.history)
    return view


def oracle_verdict(module: Any, journal: str,
                   history: list[dict[str, Any]]) -> dict[str, Any]:
    try:
        v = module.check(journal, history=history, complete=True)
    except Exception as exc:  # noqa: BLE001 - an oracle crash is reported, not hidden
        return {"valid": "unknown", "anomalies": [{"type": "oracle_error",
                                                   "explanation": repr(exc)}]}
    anomalies = []
    for a in getattr(v, "anomalies", []):
        get = a.get if isinstance(a, dict) else lambda k, a=a: getattr(a, k, None)
        anomalies.append({k: _plain(get(k)) for k in ("type", "invariant", "explanation")}
                         | {"witnesses": [_plain(w) for w in get("witnesses") or []]})
    return {"valid": v.valid, "anomalies": anomalies}


def _plain(value: Any) -> Any:
    return value if value is None or isinstance(value, (str, int, bool)) else str(value)


def resolution(entries: list[dict[str, Any]]) -> int | None:
    """ms from each effect's proposal to its final entry; the longest; None if any is open."""
    start: dict[str, int] = {}
    end: dict[str, int] = {}
    for e in entries:
        if e["kind"] == "PROPOSED":
            start.setdefault(e["effect_id"], e["ts"])
        elif e["kind"] in ("COMMITTED", "REFUSED", "AMBIGUOUS"):
            end.setdefault(e["effect_id"], e["ts"])
    if not start or start.keys() - end.keys():
        return None
    return max(end[k] - start[k] for k in start)


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
        m.update({k: view[k] for k in ("dishonest", "unresolved", "ambiguous", "refused",
                                       "committed", "rejected", "resolution_ms")})
        _count(violations, view["dishonest"], "dishonest_receipt")
        _count(violations, view["unresolved"], "unresolved")
        if view["oracle"] is not None and view["oracle"]["valid"] is False:
            violations.append("oracle")
        m["outcome"] = kernel_outcome(view)
    else:
        done = [j.done_at - j.at for j in run.jobs if j.done_at is not None]
        m["resolution_ms"] = max(done) if done else None
        m["unresolved"] = sum(not j.done for j in run.jobs)
        _count(violations, m["unresolved"], "unresolved")
        m["outcome"] = f"{m['applications']} applied"
    _count(violations, len(run.alerts), "kernel_alert")
    _count(violations, len(run.errors), "driver_error")
    m["world_race"] = story.overreached() and not violations
    m["violations"] = violations
    m["ok"] = not violations
    return m | ({"kernel": view} if view is not None else {})


def _count(out: list[str], n: int, name: str) -> None:
    if n:
        out.append(name)


def kernel_outcome(view: dict[str, Any]) -> str:
    parts = [f"{r.final or 'OPEN'} ({r.reason})" for r in view["receipts"]]
    if view["rejected"]:
        parts.append("REJECTED conflicting_payload")
    return "; ".join(parts) or "nothing proposed"
