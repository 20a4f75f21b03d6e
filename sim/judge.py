"""The sweep's judgment of one kernel run: three judges, none of them the kernel's own code.

How it works. A run is judged from what it left behind, after it ended:

1. ground truth: the target's record (every request was stamped, when it left, with the
   truth of that moment: lease live, premises holding) and the receipts the system reported
   at the end. A receipt that says ``executed`` true while nothing landed (or false while
   something did), or other than its journal says (an AMBIGUOUS settled by a late
   confirmation is true), an effect never resolved, a submission whose payload was never
   proposed answered as anything but ``conflicting_payload``, a tier-3 effect sent twice, or
   a send made
   while an earlier send of the same effect was still on its way and then landed anyway;
2. invariants: ``kernel.invariants.check`` (K1-K7 and K9 from the journal and the
   target-side history), the project's judge that imports nothing of the decision code;
3. spec: the journal replayed step by step against ``spec/Kernel.tla``
   (``spec.conformance.trace.validate_journal``), each entry folded by the validator itself.

Money and authority harm (duplicates, conflicting payloads, sends under a revoked lease or a
stale premise) is measured for every system by ``sim.measure``; this module adds what only a
journaled system can be held to. ``tests/sim/test_sim_judge_independent.py`` checks that no
module here imports or calls the kernel's decision code (``kernel.machine``,
``kernel.recovery``, ``kernel.oracle``, ``kernel.receipts``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kernel import invariants as _invariants
from spec.conformance import trace as _trace

JUDGES = ("ground_truth", "invariants", "spec")
FINALS = ("COMMITTED", "REFUSED", "AMBIGUOUS")


def entries_of(run: Any) -> list[dict[str, Any]]:
    return [e for e in run.disk.entries if e is not None]


def receipt_faults(run: Any, entries: list[dict[str, Any]] | None = None) -> list[str]:
    """Ground truth against the receipts the kernel reported: honesty and resolution."""
    entries = entries_of(run) if entries is None else entries
    applied = run.target.by_effect
    out = []
    for r in run.receipts:
        landed = r["effect_id"] in applied
        if (r["executed"] == "true" and not landed) or (r["executed"] == "false" and landed) \
                or (r["final"] == "COMMITTED" and not landed):
            out.append("dishonest_receipt")
        if r["final"] is None:
            out.append("unresolved")
    journaled = journal_outcomes(entries)
    for r in run.receipts:
        if r["effect_id"] in journaled and r["executed"] != journaled[r["effect_id"]]:
            out.append("receipt_not_journal")
    proposed = {e["effect_id"] for e in entries if e["kind"] == "PROPOSED"}
    if proposed - {r["effect_id"] for r in run.receipts}:
        out.append("unresolved")  # an effect of the journal without any receipt
    payloads = [e["payload"] for e in entries if e["kind"] == "PROPOSED"]
    for job in run.jobs:
        if job.done and job.payload not in payloads and job.outcome != "conflicting_payload":
            out.append("conflict_not_refused")  # answered as if its own payload were in hand
    return sorted(set(out))


def journal_outcomes(entries: list[dict[str, Any]]) -> dict[str, str]:
    """What each finished effect's receipt must say it executed, read off the journal alone
    (DESIGN.md section 4): COMMITTED "true"; REFUSED what its entry records; AMBIGUOUS
    "unknown" until a late confirmation (a LATE ack, or a LATE lookup that found it)
    settles it "true"."""
    out: dict[str, str] = {}
    for e in entries:
        eid, kind = e["effect_id"], e["kind"]
        if kind in FINALS and eid not in out:
            out[eid] = {"COMMITTED": "true", "AMBIGUOUS": "unknown"}.get(
                kind, str(e.get("executed")))
        elif kind == "LATE" and out.get(eid) == "unknown" and (
                e.get("answer") == "ack" or e.get("found") is True):
            out[eid] = "true"
    return out


def send_faults(run: Any) -> list[str]:
    """Ground truth from the requests themselves: tier-3 resends and self-races."""
    out = set()
    by_effect: dict[str, list[Any]] = {}
    for req in run.sent:
        if req.effect_id is not None:
            by_effect.setdefault(req.effect_id, []).append(req)
    for reqs in by_effect.values():
        if not run.caps.dedupes and not run.caps.queryable and len(reqs) > 1:
            out.add("resent_t3")
        for i, later in enumerate(reqs):
            if any(raced(earlier, later) for earlier in reqs[:i]):
                out.add("self_race")
    return sorted(out)


def raced(earlier: Any, later: Any) -> bool:
    """``later`` left while ``earlier`` was still on its way, and ``earlier`` then landed."""
    return earlier.accepted and earlier.arrived_at is not None and \
        earlier.arrived_at > later.sent_at


def invariant_faults(entries: list[dict[str, Any]], history: list[dict[str, Any]]
                     ) -> list[dict[str, str]]:
    try:
        found = _invariants.check(entries, history=history, complete=True)
    except Exception as exc:  # noqa: BLE001 - a judge that cannot judge is a finding
        return [{"invariant": "error", "explanation": f"invariants raised {exc!r}"}]
    return [{"invariant": str(v.invariant), "explanation": str(v.explanation)} for v in found]


def spec_fault(entries: list[dict[str, Any]]) -> str | None:
    """None when the spec accepts the journal, or when the journal is outside what the spec
    models: Kernel.tla's targets all bound their in-flight requests, so an effect at a target
    that declares no bound is judged by the other two judges only."""
    if any(e.get("kind") == "PROPOSED"
           and e.get("capabilities", {}).get("bounds_in_flight") is False for e in entries):
        return None
    try:
        result = _trace.validate_journal(entries)
    except Exception as exc:  # noqa: BLE001 - a journal the validator cannot read is a finding
        return f"trace validation raised {exc!r}"
    return None if result.ok else result.explanation


def judge(run: Any, entries: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The three verdicts of a kernel run and which judges caught something."""
    entries = entries_of(run) if entries is None else entries
    ground = sorted(set(receipt_faults(run, entries)) | set(send_faults(run)))
    inv = invariant_faults(entries, run.history)
    spec = spec_fault(entries)
    caught = [name for name, bad in zip(JUDGES, (ground, inv, spec)) if bad]
    return {"ground_truth": ground, "invariants": inv, "spec": spec, "caught_by": caught}


def final_at(entries: Iterable[dict[str, Any]]) -> int | None:
    """When the (first) effect of a journal reached a final state: the caller can know."""
    for e in entries:
        if e["kind"] in FINALS:
            return int(e["ts"])
    return None


def warm(capabilities: Iterable[Any], timing: Any) -> None:
    """Compile the spec for these tiers now (before worker processes fork)."""
    _trace.warm(capabilities, timing)
