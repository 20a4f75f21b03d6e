"""The decision vectors (kernel/decision_vectors.json) against the kernel, as a port would use
them: rebuild each effect record and event from the JSON alone, step the kernel, and compare
the commands, the next effect record, the recovery decision, or the error."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

import kernel
from kernel import (
    Capabilities,
    Claim,
    Coordination,
    Effect,
    Executed,
    Lease,
    Lookup,
    Plan,
    Proposal,
    State,
    Timing,
    View,
)

ROOT = Path(__file__).resolve().parents[2]
DOC = json.loads((ROOT / "kernel" / "decision_vectors.json").read_text(encoding="utf-8"))
VECTORS = DOC["vectors"]
RECOVERY_REASONS = {
    "claim_in_flight", "lookup_needed", "found_by_lookup", "dedup_window_expired_no_lookup",
    "no_dedup_no_lookup", "lease_dead_at_recovery", "premise_stale_at_recovery",
    "lease_dead_at_recovery_cannot_confirm", "premise_stale_at_recovery_cannot_confirm",
    "resend_same_key", "resend_after_absent"}
ENTRY_REASONS = {"lease_dead", "premise_stale", "conflicting_payload", "plan_superseded",
                 "over_budget", "read_overlap_moved", "claim_expired", "verification_failed",
                 "plan_superseded_at_recovery"}
REPLIES = {"in_flight", "duplicate", "conflicting_payload", "already_final"}


def _proposal(raw: dict[str, Any]) -> Proposal:
    unit = raw["coordination"]
    p = Proposal(payload=raw["payload"], premises=raw["premises"], lease=raw["lease"],
                 capabilities=Capabilities(**raw["capabilities"]),
                 timing=Timing(**raw["timing"]), key=raw["key"], target=raw["target"],
                 coordination=Coordination.from_json(unit) if unit else None)
    assert (p.effect_id, p.payload_digest) == (raw["effect_id"], raw["payload_digest"])
    return p


def _effect(raw: dict[str, Any] | None) -> Effect | None:
    if raw is None:
        return None
    return Effect(_proposal(raw["proposal"]), State(raw["state"]), raw["attempts"],
                  raw["first_sent_at"], raw["claim_until"], Executed(raw["executed"]),
                  raw["reason"], None, raw["admission"], raw["verified"])


def _event(raw: dict[str, Any]) -> Any:
    fields = {k: v for k, v in raw.items() if k != "type"}
    if "proposal" in fields:
        fields["proposal"] = _proposal(fields["proposal"])
    if "lease" in fields:
        fields["lease"] = Lease(**fields["lease"])
    if fields.get("lookup") is not None:
        fields["lookup"] = Lookup(**fields["lookup"])
    if "plan" in fields:
        fields["plan"] = Plan(**fields["plan"])
    if "view" in fields:
        v = fields["view"]
        fields["view"] = View(claims={k: Claim(**c) for k, c in v["claims"].items()},
                              reserved=v["reserved"], spent=v["spent"], caps=v["caps"],
                              plans=v["plans"], moved=frozenset(v["moved"]))
    return getattr(kernel, raw["type"])(**fields)


def _effect_json(e: Effect) -> dict[str, Any]:
    p = e.proposal
    proposal = {"payload": p.payload, "key": p.key, "premises": dict(p.premises),
                "lease": p.lease, "target": p.target, "capabilities": p.capabilities.as_json(),
                "timing": p.timing.as_json(), "effect_id": p.effect_id,
                "payload_digest": p.payload_digest,
                "coordination": p.coordination.as_json() if p.coordination else None}
    return {"proposal": proposal, "state": e.state.value, "attempts": e.attempts,
            "first_sent_at": e.first_sent_at, "claim_until": e.claim_until,
            "executed": e.executed.value, "reason": e.reason, "admission": e.admission,
            "verified": e.verified}


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["name"])
def test_the_kernel_makes_each_recorded_decision(vector: dict[str, Any]) -> None:
    before, event = _effect(vector["effect"]), _event(vector["event"])
    if "decision" in vector:
        assert before is not None
        m = kernel.machine
        checks = m._unit_send_checks(before, event, m._checks(event.now, event.lease,
                                                              event.facts, before.proposal))
        failing = m._refusal(checks)
        d = kernel.decide(before, event.now, failing not in m._AUTHORITY,
                          failing in m._AUTHORITY or failing is None, event.lookup, failing)
        assert {"action": d.action, "reason": d.reason} == vector["decision"]
    if "error" in vector:
        with pytest.raises(kernel.IllegalTransition) as caught:
            kernel.step(before, event)
        assert str(caught.value) == vector["error"]["message"]
        return
    result = kernel.step(before, event)
    commands = [{"type": type(c).__name__, **asdict(c)} for c in result.commands]
    assert json.loads(json.dumps(commands)) == vector["commands"]
    assert _effect_json(result.effect) == vector["next"]


def test_the_vectors_cover_every_reason_code_and_reply() -> None:
    decided = {v["decision"]["reason"] for v in VECTORS if "decision" in v}
    assert decided == RECOVERY_REASONS | {"plan_superseded_at_recovery"}
    commands = [c for v in VECTORS for c in v.get("commands", [])]
    reasons = {c["entry"].get("reason") for c in commands if c["type"] == "Append"}
    assert ENTRY_REASONS | (RECOVERY_REASONS - {"claim_in_flight", "lookup_needed",
                                                "found_by_lookup", "resend_same_key",
                                                "resend_after_absent"}) <= reasons
    assert {c["outcome"] for c in commands if c["type"] == "Reply"} == REPLIES
    kinds = {c["entry"]["kind"] for c in commands if c["type"] == "Append"}
    assert kinds == {"PROPOSED", "AUTHORIZED", "DISPATCHED", "COMMITTED", "REFUSED",
                     "AMBIGUOUS", "REJECTED", "LATE", "LANDED", "VERIFIED"}
    assert {c["type"] for c in commands} == {"Append", "Send", "Query", "WaitUntil", "Surface",
                                             "Reply", "Alert", "Blocked", "Verify", "Restore"}


def test_the_vectors_file_is_what_the_generator_writes() -> None:
    spec = importlib.util.spec_from_file_location(
        "make_decision_vectors", ROOT / "tests/kernel/make_decision_vectors.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "kernel" / "decision_vectors.json").read_text(encoding="utf-8") \
        == module.render(), "run: python tests/kernel/make_decision_vectors.py"
