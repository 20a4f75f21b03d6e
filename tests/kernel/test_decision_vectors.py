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
from kernel import Capabilities, Effect, Executed, Lease, Lookup, Proposal, State, Timing

ROOT = Path(__file__).resolve().parents[2]
DOC = json.loads((ROOT / "kernel" / "decision_vectors.json").read_text(encoding="utf-8"))
VECTORS = DOC["vectors"]
RECOVERY_REASONS = {
    "claim_in_flight", "lookup_needed", "found_by_lookup", "dedup_window_expired_no_lookup",
    "no_dedup_no_lookup", "lease_dead_at_recovery", "premise_stale_at_recovery",
    "lease_dead_at_recovery_cannot_confirm", "premise_stale_at_recovery_cannot_confirm",
    "resend_same_key", "resend_after_absent"}
ENTRY_REASONS = {"lease_dead", "premise_stale", "conflicting_payload"}
REPLIES = {"in_flight", "duplicate", "conflicting_payload", "already_final"}


def _proposal(raw: dict[str, Any]) -> Proposal:
    p = Proposal(payload=raw["payload"], premises=raw["premises"], lease=raw["lease"],
                 capabilities=Capabilities(**raw["capabilities"]),
                 timing=Timing(**raw["timing"]), key=raw["key"], target=raw["target"])
    assert (p.effect_id, p.payload_digest) == (raw["effect_id"], raw["payload_digest"])
    return p


def _effect(raw: dict[str, Any] | None) -> Effect | None:
    if raw is None:
        return None
    return Effect(_proposal(raw["proposal"]), State(raw["state"]), raw["attempts"],
                  raw["first_sent_at"], raw["claim_until"], Executed(raw["executed"]),
                  raw["reason"])


def _event(raw: dict[str, Any]) -> Any:
    fields = {k: v for k, v in raw.items() if k != "type"}
    if "proposal" in fields:
        fields["proposal"] = _proposal(fields["proposal"])
    if "lease" in fields:
        fields["lease"] = Lease(**fields["lease"])
    if fields.get("lookup") is not None:
        fields["lookup"] = Lookup(**fields["lookup"])
    return getattr(kernel, raw["type"])(**fields)


def _effect_json(e: Effect) -> dict[str, Any]:
    p = e.proposal
    proposal = {"payload": p.payload, "key": p.key, "premises": dict(p.premises),
                "lease": p.lease, "target": p.target, "capabilities": p.capabilities.as_json(),
                "timing": p.timing.as_json(), "effect_id": p.effect_id,
                "payload_digest": p.payload_digest}
    return {"proposal": proposal, "state": e.state.value, "attempts": e.attempts,
            "first_sent_at": e.first_sent_at, "claim_until": e.claim_until,
            "executed": e.executed.value, "reason": e.reason}


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["name"])
def test_the_kernel_makes_each_recorded_decision(vector: dict[str, Any]) -> None:
    before, event = _effect(vector["effect"]), _event(vector["event"])
    if "decision" in vector:
        assert before is not None
        checks = kernel.machine._checks(event.now, event.lease, event.facts, before.proposal)
        d = kernel.decide(before, event.now, checks["lease"]["live"], not checks["stale"],
                          event.lookup)
        assert {"action": d.action, "reason": d.reason} == vector["decision"]
    if "error" in vector:
        with pytest.raises(kernel.IllegalTransition) as caught:
            kernel.step(before, event)
        assert str(caught.value) == vector["error"]["message"]
        return
    result = kernel.step(before, event)
    assert [{"type": type(c).__name__, **asdict(c)} for c in result.commands] \
        == vector["commands"]
    assert _effect_json(result.effect) == vector["next"]


def test_the_vectors_cover_every_reason_code_and_reply() -> None:
    decided = {v["decision"]["reason"] for v in VECTORS if "decision" in v}
    assert decided == RECOVERY_REASONS
    commands = [c for v in VECTORS for c in v.get("commands", [])]
    reasons = {c["entry"].get("reason") for c in commands if c["type"] == "Append"}
    assert ENTRY_REASONS | (RECOVERY_REASONS - {"claim_in_flight", "lookup_needed",
                                                "found_by_lookup", "resend_same_key",
                                                "resend_after_absent"}) <= reasons
    assert {c["outcome"] for c in commands if c["type"] == "Reply"} == REPLIES
    kinds = {c["entry"]["kind"] for c in commands if c["type"] == "Append"}
    assert kinds == {"PROPOSED", "AUTHORIZED", "DISPATCHED", "COMMITTED", "REFUSED",
                     "AMBIGUOUS", "REJECTED", "LATE"}
    assert {c["type"] for c in commands} == {"Append", "Send", "Query", "WaitUntil", "Surface",
                                             "Reply", "Alert"}


def test_the_vectors_file_is_what_the_generator_writes() -> None:
    spec = importlib.util.spec_from_file_location(
        "make_decision_vectors", ROOT / "tests/kernel/make_decision_vectors.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "kernel" / "decision_vectors.json").read_text(encoding="utf-8") \
        == module.render(), "run: python tests/kernel/make_decision_vectors.py"
