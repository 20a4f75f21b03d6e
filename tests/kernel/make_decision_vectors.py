"""Writes kernel/decision_vectors.json: the kernel's decisions as cross-language test vectors.

Each vector is one step of the pure decision function: an effect record (its proposal,
state, attempts, first send time, claim, what is known of its execution) and an event (the
time, the lease record, the facts observed, a lookup's answer, an ack's attempt) in; the
kernel's commands out, in order (the journal entry it appends, the send, the wait, the
query...), and the effect record after the step, or the error when the event is illegal.
Recovery vectors also carry the recovery decision (action and reason code). Together they
cover every reason code and every branch of the recovery order (DESIGN.md section 4).

A port checks its own decision function against these without writing a journal; the test
``tests/kernel/test_decision_vectors.py`` checks the file against the kernel and checks that
this script rewrites it byte for byte (nothing here is random).

    python tests/kernel/make_decision_vectors.py        # rewrite the file
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import kernel  # noqa: E402
from kernel import (  # noqa: E402
    Ack,
    Authorize,
    Capabilities,
    Claim,
    Coordination,
    Dispatch,
    Effect,
    Executed,
    Lease,
    Lookup,
    LookupAnswer,
    Proposal,
    Propose,
    Recover,
    State,
    Timing,
    Verification,
    View,
)

OUT = Path(__file__).resolve().parents[2] / "kernel" / "decision_vectors.json"
TIMING = Timing(send_timeout=200, settle_margin=100, dedup_margin=1_000)
TIERS = {"t1": Capabilities(dedupes=True, queryable=True, dedup_window=100_000, lookup_lag=50),
         "t1_dedupe_only": Capabilities(dedupes=True, queryable=False, dedup_window=100_000),
         "t2": Capabilities(dedupes=False, queryable=True, lookup_lag=50),
         "t3": Capabilities(dedupes=False, queryable=False)}
FACTS = {"paid": 100, "refunded": 0}
LIVE = Lease("L", expires_at=1_000_000)
REVOKED = Lease("L", expires_at=1_000_000, revoked=True)
EXPIRED = Lease("L", expires_at=500)
OTHER = Lease("M", expires_at=1_000_000)
STALE = {"paid": 100, "refunded": 20}
MISSING = {"paid": 100}
SENT, CLAIM = 12, 312  # the first send at 12: deadline 212, claim until 312


def proposal(tier: str, amount: int = 20) -> Proposal:
    return Proposal(payload={"amount": amount, "order": 881}, premises=FACTS, lease="L",
                    capabilities=TIERS[tier], timing=TIMING, key={"order": 881})


def effect(tier: str, state: State, attempts: int = 0, executed: Executed = Executed.FALSE,
           first: int | None = None, claim: int = 0, reason: str | None = None) -> Effect:
    return Effect(proposal(tier), state, attempts, first, claim, executed, reason)


def dispatched(tier: str, attempts: int = 1, first: int = SENT, claim: int = CLAIM) -> Effect:
    return effect(tier, State.DISPATCHED, attempts, Executed.UNKNOWN, first, claim)


def final(tier: str, state: State, executed: Executed, reason: str) -> Effect:
    return effect(tier, state, 1, executed, SENT, CLAIM, reason)


PAST = CLAIM + 8  # a recovery after the claim expired, the lookup asked at CLAIM + 3
ABSENT, FOUND, EARLY = Lookup(False, CLAIM + 3), Lookup(True, CLAIM + 3), Lookup(False, 300)
CLOSED = SENT + 100_000 - 1_000  # from here a resend may land after the dedup window

CASES: list[tuple[str, Effect | None, Any]] = [
    ("propose a new effect", None, Propose(10, proposal("t1"))),
    ("resubmit the same payload while open", effect("t1", State.AUTHORIZED),
     Propose(20, proposal("t1"))),
    ("resubmit another payload: conflicting_payload", effect("t1", State.PROPOSED),
     Propose(20, proposal("t1", amount=30))),
    ("resubmit after COMMITTED: duplicate", final("t1", State.COMMITTED, Executed.TRUE, "ack"),
     Propose(20, proposal("t1"))),
    ("resubmit after REFUSED: already_final",
     final("t1", State.REFUSED, Executed.FALSE, "lease_dead"), Propose(20, proposal("t1"))),
    ("authorize: lease live, premises hold", effect("t1", State.PROPOSED),
     Authorize(11, LIVE, FACTS)),
    ("authorize: lease revoked", effect("t1", State.PROPOSED), Authorize(11, REVOKED, FACTS)),
    ("authorize: lease expired", effect("t1", State.PROPOSED), Authorize(600, EXPIRED, FACTS)),
    ("authorize: another lease than the proposal's", effect("t1", State.PROPOSED),
     Authorize(11, OTHER, FACTS)),
    ("authorize: premise stale", effect("t1", State.PROPOSED), Authorize(11, LIVE, STALE)),
    ("authorize: premise not observed", effect("t1", State.PROPOSED),
     Authorize(11, LIVE, MISSING)),
    ("dispatch: first send", effect("t1", State.AUTHORIZED), Dispatch(12, LIVE, FACTS)),
    ("dispatch: lease revoked since authorize", effect("t2", State.AUTHORIZED),
     Dispatch(12, REVOKED, FACTS)),
    ("dispatch: premise stale since authorize", effect("t2", State.AUTHORIZED),
     Dispatch(12, LIVE, STALE)),
    ("ack of the attempt sent", dispatched("t2"), Ack(50, 1)),
    ("ack of an attempt never sent", dispatched("t2"), Ack(50, 2)),
    ("recover: claim_in_flight (wait)", dispatched("t1"), Recover(CLAIM - 1, LIVE, FACTS)),
    ("recover: lookup_needed (no lookup yet)", dispatched("t2"), Recover(CLAIM, LIVE, FACTS)),
    ("recover: lookup_needed (lookup asked before the claim expired)", dispatched("t2"),
     Recover(PAST, LIVE, FACTS, EARLY)),
    ("recover: found_by_lookup", dispatched("t2"), Recover(PAST, LIVE, FACTS, FOUND)),
    ("recover: resend_after_absent", dispatched("t2"), Recover(PAST, LIVE, FACTS, ABSENT)),
    ("recover: lease_dead_at_recovery", dispatched("t2"), Recover(PAST, REVOKED, FACTS, ABSENT)),
    ("recover: premise_stale_at_recovery", dispatched("t2"), Recover(PAST, LIVE, STALE, ABSENT)),
    ("recover: no_dedup_no_lookup (tier 3)", dispatched("t3"), Recover(PAST, LIVE, FACTS)),
    ("recover: resend_same_key (tier 1, window open)", dispatched("t1_dedupe_only"),
     Recover(PAST, LIVE, FACTS)),
    ("recover: resend_same_key, second resend keeps first_sent_at",
     dispatched("t1_dedupe_only", attempts=2, claim=PAST + 300),
     Recover(PAST + 300, LIVE, FACTS)),
    ("recover: lease_dead_at_recovery_cannot_confirm (tier 1 without lookup)",
     dispatched("t1_dedupe_only"), Recover(PAST, REVOKED, FACTS)),
    ("recover: premise_stale_at_recovery_cannot_confirm (tier 1 without lookup)",
     dispatched("t1_dedupe_only"), Recover(PAST, LIVE, STALE)),
    ("recover: dedup_window_expired_no_lookup (tier 1 past its window, no lookup)",
     dispatched("t1_dedupe_only"), Recover(CLOSED, LIVE, FACTS)),
    ("recover: tier 1 past its window is treated as tier 2 (query)", dispatched("t1"),
     Recover(CLOSED, LIVE, FACTS)),
    ("recover: tier 1 past its window, absent: resend_after_absent", dispatched("t1"),
     Recover(CLOSED, LIVE, FACTS, Lookup(False, CLOSED))),
    ("recover: tier 1 in its window with lookup: found_by_lookup", dispatched("t1"),
     Recover(PAST, LIVE, FACTS, FOUND)),
    ("late ack settles an AMBIGUOUS receipt",
     final("t3", State.AMBIGUOUS, Executed.UNKNOWN, "no_dedup_no_lookup"), Ack(900, 1)),
    ("late ack contradicts a REFUSED: K7 alert",
     final("t2", State.REFUSED, Executed.FALSE, "lease_dead_at_recovery"), Ack(900, 1)),
    ("late lookup not found after the claim contradicts COMMITTED: K7 alert",
     final("t2", State.COMMITTED, Executed.TRUE, "ack"), LookupAnswer(900, False, CLAIM)),
    ("late lookup not found before the claim expired is no evidence",
     final("t2", State.COMMITTED, Executed.TRUE, "ack"), LookupAnswer(900, False, CLAIM - 1)),
    ("late lookup found on COMMITTED", final("t2", State.COMMITTED, Executed.TRUE, "ack"),
     LookupAnswer(900, True, 800)),
    ("illegal: dispatch before authorize", effect("t1", State.PROPOSED),
     Dispatch(12, LIVE, FACTS)),
    ("illegal: recover a COMMITTED effect", final("t2", State.COMMITTED, Executed.TRUE, "ack"),
     Recover(PAST, LIVE, FACTS)),
]


# Coordinated units (DESIGN.md section 8): a repository target, one unit writing a.py.
REPO = Capabilities(dedupes=True, queryable=True, dedup_window=600_000, lookup_lag=10)
UNIT_TIMING = Timing(send_timeout=2_000, settle_margin=1_000, dedup_margin=5_000)
PLAN, NEWER = kernel.Plan("p", 1), kernel.Plan("p", 2)
TREE = {"a.py": "d0"}
OTHER_ID = "ab" * 32


def unit(reads: tuple[str, ...] = (), cost: int = 0, verify: bool = False) -> Proposal:
    c = Coordination(writes=("a.py",), reads=reads, ttl=60_000, budget="b" if cost else None,
                     cost=cost, cap=10 if cost else 0, plan="p", plan_version=1, verify=verify)
    return Proposal(payload={"unit": "u1"}, premises=TREE, lease="L", capabilities=REPO,
                    timing=UNIT_TIMING, key={"unit": "u1"}, coordination=c)


def unit_effect(state: State, p: Proposal | None = None, attempts: int = 0,
                executed: Executed = Executed.FALSE) -> Effect:
    admission = None if state is State.PROPOSED else {"token": 1, "until": 60_002,
                                                      "overlaps": {}}
    sent = attempts > 0
    return Effect(p or unit(), state, attempts, 3 if sent else None, 3_003 if sent else 0,
                  executed, None, None, admission)


HELD = View(claims={"a.py": Claim("a.py", OTHER_ID, 0, 50_000)})
READ_MOVED = View(claims={"b.py": Claim("b.py", OTHER_ID, 0, 50_000)},
                  moved=frozenset({OTHER_ID}))
SPENT = View(reserved={"b": 8}, caps={"b": 10})
EMPTY = View()

CASES += [
    ("unit: admitted, its write set claimed with the entry's seq as token",
     unit_effect(State.PROPOSED), Authorize(2, LIVE, TREE, EMPTY, PLAN, 1)),
    ("unit: a write item under another unit's live claim blocks admission",
     unit_effect(State.PROPOSED), Authorize(2, LIVE, TREE, HELD, PLAN, 1)),
    ("unit: plan_superseded at admission", unit_effect(State.PROPOSED),
     Authorize(2, LIVE, TREE, EMPTY, NEWER, 1)),
    ("unit: over_budget at admission", unit_effect(State.PROPOSED, unit(cost=5)),
     Authorize(2, LIVE, TREE, SPENT, PLAN, 1)),
    ("unit: read_overlap_moved (a unit holding one of its reads was sent)",
     unit_effect(State.PROPOSED, unit(reads=("b.py",))),
     Authorize(2, LIVE, TREE, READ_MOVED, PLAN, 1)),
    ("unit: claim_expired at dispatch", unit_effect(State.AUTHORIZED),
     Dispatch(60_002, LIVE, TREE, EMPTY, PLAN)),
    ("unit: dispatch carries the fencing token", unit_effect(State.AUTHORIZED),
     Dispatch(3, LIVE, TREE, EMPTY, PLAN)),
    ("unit: plan_superseded_at_recovery (absent)", unit_effect(State.DISPATCHED, attempts=1,
                                                               executed=Executed.UNKNOWN),
     Recover(3_010, LIVE, TREE, Lookup(False, 3_005), EMPTY, NEWER)),
    ("unit: an ack of a unit that needs verification lands it",
     unit_effect(State.DISPATCHED, unit(verify=True), 1, Executed.UNKNOWN), Ack(50, 1)),
    ("unit: verification passed commits",
     unit_effect(State.LANDED, unit(verify=True), 1, Executed.TRUE), Verification(60, "passed")),
    ("unit: verification failed refuses and restores (verification_failed)",
     unit_effect(State.LANDED, unit(verify=True), 1, Executed.TRUE), Verification(60, "failed")),
    ("unit: verification could not run is journaled",
     unit_effect(State.LANDED, unit(verify=True), 1, Executed.TRUE),
     Verification(60, "could_not_run")),
    ("unit: a landed unit found open at recovery is verified again",
     unit_effect(State.LANDED, unit(verify=True), 1, Executed.TRUE),
     Recover(70, LIVE, TREE, None, EMPTY, PLAN)),
]


def view_json(v: View) -> dict[str, Any]:
    return {"claims": {k: asdict(c) for k, c in sorted(v.claims.items())},
            "reserved": dict(v.reserved), "spent": dict(v.spent), "caps": dict(v.caps),
            "plans": dict(v.plans), "moved": sorted(v.moved)}


def proposal_json(p: Proposal) -> dict[str, Any]:
    return {"payload": p.payload, "key": p.key, "premises": dict(p.premises), "lease": p.lease,
            "target": p.target, "capabilities": p.capabilities.as_json(),
            "timing": p.timing.as_json(), "effect_id": p.effect_id,
            "payload_digest": p.payload_digest,
            "coordination": p.coordination.as_json() if p.coordination else None}


def effect_json(e: Effect | None) -> dict[str, Any] | None:
    if e is None:
        return None
    return {"proposal": proposal_json(e.proposal), "state": e.state.value,
            "attempts": e.attempts, "first_sent_at": e.first_sent_at,
            "claim_until": e.claim_until, "executed": e.executed.value, "reason": e.reason,
            "admission": e.admission, "verified": e.verified}


def event_json(ev: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type(ev).__name__}
    for name, value in asdict(ev).items():
        if name == "proposal":
            out[name] = proposal_json(ev.proposal)
        elif name == "view" and value is not None:
            out[name] = view_json(ev.view)
        elif value is not None or name == "lookup":
            out[name] = value
    return out


def command_json(c: Any) -> dict[str, Any]:
    return {"type": type(c).__name__, **asdict(c)}


def decision_json(before: Effect, ev: Recover) -> dict[str, str]:
    """The recovery decision on the observations, as the machine computes it."""
    m = kernel.machine
    checks = m._unit_send_checks(before, ev, m._checks(ev.now, ev.lease, ev.facts,
                                                       before.proposal))
    refusal = m._refusal(checks)
    d = kernel.decide(before, ev.now, refusal not in m._AUTHORITY,
                      refusal in m._AUTHORITY or refusal is None, ev.lookup, refusal)
    return {"action": d.action, "reason": d.reason}


def vector(name: str, before: Effect | None, ev: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "effect": effect_json(before), "event": event_json(ev)}
    if isinstance(ev, Recover) and before is not None and before.state is State.DISPATCHED:
        out["decision"] = decision_json(before, ev)
    try:
        result = kernel.step(before, ev)
    except kernel.IllegalTransition as exc:
        out["error"] = {"type": "IllegalTransition", "message": str(exc)}
        return out
    out["commands"] = [command_json(c) for c in result.commands]
    out["next"] = effect_json(result.effect)
    return out


def render() -> str:
    doc = {"description": "Decision vectors: (effect record, event) -> the kernel's commands "
           "in order and the effect record after the step, or the error for an illegal "
           "event. Times are integers (ms). An Append's entry is the journal entry without "
           "seq, prev and hash. Recovery vectors carry the recovery decision.",
           "vectors": [vector(*case) for case in CASES]}
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    OUT.write_text(render(), encoding="utf-8")
    print(f"wrote {OUT} ({len(CASES)} vectors)", file=sys.stderr)
