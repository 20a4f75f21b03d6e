"""The reference oracle: ``kernel.oracle.check`` and ``python -m kernel check``.

Journals come from driving the real kernel (``Run``) and, for wrong decisions, from entries
appended by hand to a real chain, so integrity passes and only the decision is wrong.
Target histories are recorded the way a simulator would: a send per Send command, an apply
per application at the target.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import kernel
from kernel import invariants, oracle
from kernel.journal import MAX_LINE, Chain, verify
from kernel.reexecute import Divergence, reexecute

ROOT = Path(__file__).resolve().parents[2]
TIMING = kernel.Timing(send_timeout=200, settle_margin=100, dedup_margin=1_000)
TIERS = {1: kernel.Capabilities(dedupes=True, queryable=False, dedup_window=100_000),
         2: kernel.Capabilities(dedupes=False, queryable=True, lookup_lag=50),
         3: kernel.Capabilities(dedupes=False, queryable=False)}
FACTS = {"paid": 100, "refunded": 0}


class Run:
    """One effect driven through the kernel, its journal and the target's history."""

    def __init__(self, tier: int, lease_expires: int = 10**6) -> None:
        self.lease = kernel.Lease("L", lease_expires)
        self.proposal = kernel.Proposal(payload={"amount": 20, "order": 881}, premises=FACTS,
                                        lease="L", capabilities=TIERS[tier], timing=TIMING,
                                        key={"order": 881})
        self.eid = self.proposal.effect_id
        self.effects = kernel.Effects()
        self.chain = Chain()
        self.lines: list[str] = []
        self.history: list[dict[str, Any]] = []
        self.sends: list[kernel.Send] = []

    @property
    def text(self) -> str:
        return "".join(self.lines)

    @property
    def effect(self) -> kernel.Effect:
        return self.effects.by_id[self.eid]

    def step(self, event: Any) -> tuple[kernel.Command, ...]:
        commands = self.effects.apply(event, self.eid)
        for c in commands:
            if isinstance(c, kernel.Append):
                self.lines.append(self.chain.seal(c.entry)[1])
            if isinstance(c, kernel.Send):
                self.sends.append(c)
                self.history.append({"op": "send", "effect_id": self.eid,
                                     "attempt": c.attempt, "ts": event.now})
        return commands

    def apply_at_target(self, ts: int, digest: str | None = None) -> None:
        self.history.append({"op": "apply", "effect_id": self.eid, "ts": ts,
                             "payload_digest": digest or self.proposal.payload_digest})

    def dispatch(self, t: int = 10) -> Run:
        self.step(kernel.Propose(t, self.proposal))
        self.step(kernel.Authorize(t + 1, self.lease, FACTS))
        self.step(kernel.Dispatch(t + 2, self.lease, FACTS))
        return self

    def happy(self) -> Run:
        self.dispatch()
        self.apply_at_target(13)
        self.step(kernel.Ack(14, 1))
        return self

    def forge(self, **body: Any) -> Run:
        """Append an entry the kernel did not decide (chain and hash stay correct)."""
        self.lines.append(self.chain.seal({"effect_id": self.eid, **body})[1])
        return self

    def ok_checks(self, now: int) -> dict[str, Any]:
        return {"lease": {"id": "L", "expires_at": self.lease.expires_at, "revoked": False,
                          "live": self.lease.live(now)},
                "facts": dict(FACTS), "stale": []}


def invariants_named(verdict: oracle.OracleVerdict) -> set[str]:
    return {a["invariant"] for a in verdict.anomalies}


# ---------------------------------------------------------------- verdicts from check()


@pytest.mark.parametrize("tier", [1, 2, 3])
def test_a_happy_journal_with_its_history_is_valid(tier: int) -> None:
    run = Run(tier).happy()
    verdict = oracle.check(run.text, run.history, complete=True)
    assert verdict.valid is True and verdict.anomalies == []
    assert verdict.first.startswith("4 entries: chain intact")


def test_check_accepts_entries_as_dicts_too() -> None:
    run = Run(2).happy()
    assert oracle.check(verify(run.text).entries, run.history).valid is True


def test_an_unresolved_dispatch_without_history_is_unknown() -> None:
    run = Run(2).dispatch()
    verdict = oracle.check(run.text)
    assert verdict.valid == "unknown"
    assert verdict.first.startswith(f"effect {run.eid[:12]} was DISPATCHED")


def test_an_unresolved_dispatch_with_complete_is_a_k9_violation() -> None:
    run = Run(2).dispatch()
    verdict = oracle.check(run.text, complete=True)
    assert verdict.valid is False and invariants_named(verdict) == {"K9"}
    assert verdict.first.startswith("K9: ")


def test_a_corrupted_journal_reports_k8_with_its_line() -> None:
    run = Run(1).happy()
    lines = run.lines
    verdict = oracle.check(lines[0] + lines[2] + lines[3])
    assert verdict.valid is False
    assert verdict.anomalies[0]["invariant"] == "K8"
    assert verdict.anomalies[0]["witnesses"] == ["line 2"]


def test_a_torn_tail_is_a_note_in_the_oracle_verdict() -> None:
    run = Run(1).happy()
    verdict = oracle.check(run.text + run.lines[0][:30])
    assert verdict.valid is True and "torn write" in verdict.notes[0]


# ---------------------------------------------------------------- re-execution: one test per class


def _resend(run: Run, ts: int, **changes: Any) -> Run:
    e = run.effect
    body = dict(kind="DISPATCHED", ts=ts, attempt=e.attempts + 1, phase="recovery",
                deadline=ts + 200, claim_until=ts + 300, first_sent_at=e.first_sent_at,
                checks=run.ok_checks(ts))
    return run.forge(**{**body, **changes})


def _diverges(run: Run, kind: str, history: Any = None) -> str:
    """The oracle rejects the last line of ``run`` as a divergence of class ``kind``."""
    verdict = oracle.check(run.text, history)
    assert verdict.valid is False, verdict.first
    first = verdict.anomalies[0]
    assert first["type"] == kind, first
    assert first["invariant"] == "re-execution"
    assert first["witnesses"] == [f"line {len(run.lines)}"]
    assert verdict.first.startswith(f"line {len(run.lines)}: effect {run.eid[:12]}: ")
    return verdict.first


def test_silent_kernel_a_resend_before_the_claim_expired() -> None:
    run = Run(1).dispatch()
    why = _diverges(_resend(run, run.effect.claim_until - 1), "silent_kernel")
    assert why.endswith(f"it waits until {run.effect.claim_until}, when the last send's "
                        f"claim expires")


def test_the_same_resend_after_the_claim_is_the_reference_decision() -> None:
    run = Run(1).dispatch()
    assert oracle.check(_resend(run, run.effect.claim_until).text).valid == "unknown"


def test_wrong_outcome_a_resend_at_tier_3() -> None:
    run = Run(3).dispatch()
    why = _diverges(_resend(run, run.effect.claim_until + 5), "wrong_outcome")
    assert "recorded DISPATCHED, the kernel writes AMBIGUOUS (no_dedup_no_lookup)" in why


@pytest.mark.parametrize("tier", [1, 3])
def test_wrong_outcome_committed_via_lookup_at_a_non_queryable_target(tier: int) -> None:
    run = Run(tier).dispatch()
    t = run.effect.claim_until + 5
    run.forge(kind="COMMITTED", ts=t, via="lookup", lookup={"found": True, "asked_at": t})
    # a lookup answer from a target that cannot be looked up is no observation at all
    assert "cannot be looked up" in _diverges(run, "impossible_observation")


def test_committed_via_lookup_at_a_queryable_target_conforms() -> None:
    run = Run(2).dispatch()
    t = run.effect.claim_until + 5
    run.forge(kind="COMMITTED", ts=t, via="lookup", lookup={"found": True, "asked_at": t})
    assert oracle.check(run.text).valid is True


def _dead(run: Run, t: int) -> dict[str, Any]:
    checks = run.ok_checks(t)
    checks["lease"] = {**checks["lease"], "revoked": True, "live": False}
    return checks


def test_silent_kernel_refused_at_recovery_without_a_lookup_at_tier_2() -> None:
    run = Run(2).dispatch()
    t = run.effect.claim_until + 5
    run.forge(kind="REFUSED", ts=t, reason="lease_dead_at_recovery", executed="false",
              checks=_dead(run, t))
    assert "it asks the target first" in _diverges(run, "silent_kernel")


def test_wrong_outcome_refused_at_recovery_with_a_positive_lookup() -> None:
    run = Run(2).dispatch()
    t = run.effect.claim_until + 5
    run.forge(kind="REFUSED", ts=t, reason="lease_dead_at_recovery", executed="false",
              checks=_dead(run, t), lookup={"found": True, "asked_at": t})
    assert "the kernel writes COMMITTED" in _diverges(run, "wrong_outcome")


def test_wrong_outcome_refused_at_recovery_at_a_dedupe_only_target() -> None:
    run = Run(1).dispatch()
    t = run.effect.claim_until + 5
    run.forge(kind="REFUSED", ts=t, reason="lease_dead_at_recovery", executed="false",
              checks=_dead(run, t))
    assert ("the kernel writes AMBIGUOUS (lease_dead_at_recovery_cannot_confirm)"
            in _diverges(run, "wrong_outcome"))


def test_refused_at_recovery_after_a_negative_lookup_conforms() -> None:
    run = Run(2).dispatch()
    t = run.effect.claim_until + 5
    run.forge(kind="REFUSED", ts=t, reason="lease_dead_at_recovery", executed="false",
              checks=_dead(run, t), lookup={"found": False, "asked_at": t})
    assert oracle.check(run.text).valid is True


def test_silent_kernel_ambiguous_at_a_queryable_target_without_lookup() -> None:
    run = Run(2).dispatch()
    t = run.effect.claim_until + 5
    run.forge(kind="AMBIGUOUS", ts=t, reason="no_dedup_no_lookup", checks=run.ok_checks(t))
    assert "it asks the target first" in _diverges(run, "silent_kernel")


def test_wrong_outcome_ambiguous_after_a_negative_lookup_when_a_resend_is_safe() -> None:
    run = Run(2).dispatch()
    t = run.effect.claim_until + 5
    run.forge(kind="AMBIGUOUS", ts=t, reason="no_dedup_no_lookup", checks=run.ok_checks(t),
              lookup={"found": False, "asked_at": t})
    assert "the kernel writes DISPATCHED" in _diverges(run, "wrong_outcome")


def test_wrong_field_a_dispatch_recording_a_stale_premise_that_holds() -> None:
    run = Run(2)
    run.step(kernel.Propose(10, run.proposal))
    run.step(kernel.Authorize(11, run.lease, FACTS))
    checks = {**run.ok_checks(12), "stale": ["refunded"]}
    run.forge(kind="DISPATCHED", ts=12, attempt=1, phase="dispatch", deadline=212,
              claim_until=312, first_sent_at=12, checks=checks)
    why = _diverges(run, "wrong_field")
    assert 'checks.stale is ["refunded"], the kernel computes [] from the premises' in why


def test_unexpected_entry_a_final_entry_before_dispatch() -> None:
    run = Run(2)
    run.step(kernel.Propose(10, run.proposal))
    run.forge(kind="COMMITTED", ts=11, via="ack", attempt=1)
    assert _diverges(run, "unexpected_entry").endswith(
        "the kernel never writes COMMITTED for PROPOSED")


def test_unexpected_entry_for_an_unproposed_effect() -> None:
    run = Run(2).forge(kind="AUTHORIZED", ts=1, checks=Run(2).ok_checks(1))
    assert "never writes AUTHORIZED for an effect never proposed" in _diverges(
        run, "unexpected_entry")


def test_wrong_field_a_proposed_entry_whose_id_does_not_match_its_key() -> None:
    run = Run(2)
    run.step(kernel.Propose(10, run.proposal))
    entry = verify(run.text).entries[0]
    forged = Run(2).forge(**{k: v for k, v in entry.items() if k not in ("seq", "prev", "hash")}
                          | {"key": {"order": 882}})
    verdict = oracle.check(forged.text)
    assert verdict.anomalies[0]["type"] == "wrong_field"
    assert verdict.anomalies[0]["field"] == "effect_id"
    assert "from the SHA-256 of the canonical decision key" in verdict.first


def test_refused_proposal_timing_the_kernel_would_not_accept() -> None:
    run = Run(2)
    run.step(kernel.Propose(10, run.proposal))
    entry = verify(run.text).entries[0]
    body = {k: v for k, v in entry.items() if k not in ("seq", "prev", "hash")}
    body["timing"] = {**body["timing"], "settle_margin": 10}  # below the lookup lag 50
    verdict = oracle.check(Run(2).forge(**body).text)
    assert verdict.anomalies[0]["type"] == "refused_proposal"
    assert "settle_margin 10 must exceed the target's lookup lag 50" in verdict.first


def test_silent_kernel_a_second_proposed_entry() -> None:
    run = Run(2)
    run.step(kernel.Propose(10, run.proposal))
    run.lines.append(run.chain.seal({**verify(run.text).entries[0], "ts": 11})[1])
    assert "is answered 'in_flight', not journaled" in _diverges(run, "silent_kernel")


def test_silent_kernel_a_rejection_of_the_same_payload() -> None:
    run = Run(2).happy()
    run.forge(kind="REJECTED", ts=20, reason="conflicting_payload",
              payload_digest=run.proposal.payload_digest)
    assert "answered 'duplicate'" in _diverges(run, "silent_kernel")


def test_a_rejection_of_another_payload_conforms() -> None:
    run = Run(2).happy()
    run.forge(kind="REJECTED", ts=20, reason="conflicting_payload", payload_digest="ab" * 32)
    assert oracle.check(run.text, run.history).valid is True


def test_wrong_field_attempts_that_skip() -> None:
    run = Run(1).dispatch()
    why = _diverges(_resend(run, run.effect.claim_until, attempt=3), "wrong_field")
    assert why.endswith("attempt is 3, the kernel computes 2 from 1 earlier attempt(s) + 1")


def test_missing_observation_a_refusal_without_its_check_record() -> None:
    run = Run(2)
    run.step(kernel.Propose(10, run.proposal))
    run.forge(kind="REFUSED", ts=11, reason="lease_dead", executed="false")
    why = _diverges(run, "missing_observation")
    assert "REFUSED records no checks" in why and "not a dead lease" in why


def test_impossible_observation_a_late_ack_of_an_attempt_never_sent() -> None:
    run = Run(2).happy()
    run.forge(kind="LATE", ts=30, answer="ack", attempt=2)
    why = _diverges(run, "impossible_observation")
    assert why.endswith("a late ack of attempt 2, but the kernel sent 1 attempt(s) of this effect")


def test_impossible_observation_a_late_lookup_asked_after_its_entry() -> None:
    run = Run(2).happy()
    run.forge(kind="LATE", ts=30, answer="lookup", found=True, asked_at=31)
    assert "asked at 31, after its own entry's time 30" in _diverges(run, "impossible_observation")


def test_a_late_ack_of_a_sent_attempt_conforms() -> None:
    run = Run(2).happy()
    run.forge(kind="LATE", ts=30, answer="ack", attempt=1)
    assert oracle.check(run.text, run.history).valid is True


# ---------------------------------------------------------------- the planted bugs
# Each journal has a valid chain and schema; each breaks the contract; each used to pass.


def _late_resend(tier: int = 1, **changes: Any) -> Run:
    run = Run(tier).dispatch()
    return _resend(run, run.effect.claim_until + 5, **changes)


def test_planted_a_resend_recorded_live_under_a_revoked_lease() -> None:
    run = Run(1).dispatch()
    t = run.effect.claim_until + 5
    checks = run.ok_checks(t)
    checks["lease"]["revoked"] = True  # live stays true: the implementation's own flag
    why = _diverges(_resend(run, t, checks=checks), "wrong_outcome")
    assert "the kernel writes AMBIGUOUS (lease_dead_at_recovery_cannot_confirm)" in why


def test_planted_a_resend_under_a_lease_whose_expiry_had_passed() -> None:
    run = Run(2).dispatch()
    t = run.effect.claim_until + 5
    checks = run.ok_checks(t)
    checks["lease"]["expires_at"] = t - 1
    run = _resend(run, t, checks=checks, lookup={"found": False, "asked_at": t})
    assert "the kernel writes REFUSED (lease_dead_at_recovery)" in _diverges(run,
                                                                           "wrong_outcome")


def test_planted_a_resend_checked_against_another_lease_id() -> None:
    run = Run(1).dispatch()
    t = run.effect.claim_until + 5
    checks = run.ok_checks(t)
    checks["lease"]["id"] = "someone-else"
    assert "the kernel writes AMBIGUOUS" in _diverges(_resend(run, t, checks=checks),
                                                      "wrong_outcome")


def test_planted_a_recovery_whose_facts_contradict_its_premises_listing_no_stale() -> None:
    run = Run(2).dispatch()
    t = run.effect.claim_until + 5
    checks = run.ok_checks(t)
    checks["facts"]["refunded"] = 20  # a manual refund; stale stays []
    run = _resend(run, t, checks=checks, lookup={"found": False, "asked_at": t})
    assert "the kernel writes REFUSED (premise_stale_at_recovery)" in _diverges(
        run, "wrong_outcome")


def test_planted_a_claim_shorter_than_deadline_plus_settle_margin() -> None:
    run = Run(1).dispatch()
    t = run.effect.claim_until + 5
    why = _diverges(_resend(run, t, claim_until=t + 201), "wrong_field")
    assert why.endswith(f"claim_until is {t + 201}, the kernel computes {t + 300} from "
                        f"deadline {t + 200} + settle margin 100")


def test_planted_a_rewritten_first_sent_at_that_reopens_a_closed_dedup_window() -> None:
    run = Run(1).dispatch()  # window 100,000, margin 1,000: closed from 12 + 99,000
    t = 12 + 99_000
    why = _diverges(_resend(run, t, first_sent_at=t - 10), "wrong_outcome")
    assert "the kernel writes AMBIGUOUS (dedup_window_expired_no_lookup)" in why
    run = Run(1).dispatch()  # and where the window is still open, the field itself
    why = _diverges(_resend(run, 500, first_sent_at=400), "wrong_field")
    assert why.endswith("first_sent_at is 400, the kernel computes 12 from the first "
                        "send's time 12")


def test_planted_committed_by_an_ack_of_an_attempt_never_sent() -> None:
    run = Run(2).dispatch()
    run.forge(kind="COMMITTED", ts=20, via="ack", attempt=2)
    assert "no attempt 2 was sent" in _diverges(run, "impossible_observation")


def test_planted_a_refusal_citing_a_lookup_asked_after_the_entry_itself() -> None:
    run = Run(2).dispatch()
    t = run.effect.claim_until + 5
    run.forge(kind="REFUSED", ts=t, reason="lease_dead_at_recovery", executed="false",
              checks=_dead(run, t), lookup={"found": False, "asked_at": t + 1})
    why = _diverges(run, "impossible_observation")
    assert why.endswith(f"the lookup was asked at {t + 1}, after its own entry's time {t}")


def test_planted_a_dispatch_recording_a_live_lease_that_was_revoked() -> None:
    run = Run(2)
    run.step(kernel.Propose(10, run.proposal))
    run.step(kernel.Authorize(11, run.lease, FACTS))
    checks = run.ok_checks(12)
    checks["lease"]["revoked"] = True
    run.forge(kind="DISPATCHED", ts=12, attempt=1, phase="dispatch", deadline=212,
              claim_until=312, first_sent_at=12, checks=checks)
    assert "recorded DISPATCHED, the kernel writes REFUSED (lease_dead)" in _diverges(
        run, "wrong_outcome")


def test_planted_a_wrong_reason() -> None:
    run = Run(2)
    run.step(kernel.Propose(10, run.proposal))
    run.forge(kind="REFUSED", ts=11, reason="premise_stale", executed="false",
              checks=_dead(run, 11))
    assert 'reason is "premise_stale", the kernel computes "lease_dead"' in _diverges(
        run, "wrong_field")


# ---------------------------------------------------------------- invariants by name


def test_k1_a_send_with_no_dispatched_entry() -> None:
    run = Run(1).happy()
    run.history.append({"op": "send", "effect_id": run.eid, "attempt": 2, "ts": 20})
    assert "K1" in invariants_named(oracle.check(run.text, run.history))


def test_k1_a_send_before_its_dispatched_entry() -> None:
    run = Run(1).happy()
    run.history[0]["ts"] = 5  # DISPATCHED was journaled at 12
    verdict = oracle.check(run.text, run.history)
    assert invariants_named(verdict) == {"K1"}
    assert verdict.anomalies[0]["witnesses"] == ["h0"]


def test_k2_an_effect_applied_twice() -> None:
    run = Run(1).happy()
    run.apply_at_target(15)
    verdict = oracle.check(run.text, run.history)
    assert invariants_named(verdict) == {"K2"}
    assert verdict.anomalies[0]["type"] == "applied_twice"


def test_k2_a_tier_3_effect_sent_twice() -> None:
    run = Run(3).happy()
    run.history.append({"op": "send", "effect_id": run.eid, "attempt": 1, "ts": 1000})
    types = {a["type"] for a in oracle.check(run.text, run.history).anomalies}
    assert "tier3_resent" in types


def test_k3_an_application_with_another_payload() -> None:
    run = Run(2).dispatch()
    run.apply_at_target(13, digest="f" * 64)
    run.step(kernel.Ack(14, 1))
    assert invariants_named(oracle.check(run.text, run.history)) == {"K3"}


def test_k4_a_send_after_the_lease_expired() -> None:
    run = Run(2, lease_expires=100).dispatch()
    run.history[0]["ts"] = 150  # the request left the worker after the lease ended
    run.apply_at_target(151)
    run.step(kernel.Ack(152, 1))
    verdict = oracle.check(run.text, run.history)
    assert invariants_named(verdict) == {"K4"}
    assert verdict.first.startswith("K4: ")


def test_k6_a_second_send_while_the_first_may_be_in_flight() -> None:
    run = Run(1).happy()
    run.history.append({"op": "send", "effect_id": run.eid, "attempt": 1, "ts": 100})
    assert invariants_named(oracle.check(run.text, run.history)) == {"K6"}


def test_k7_committed_but_never_applied() -> None:
    run = Run(1).dispatch()
    run.step(kernel.Ack(14, 1))
    verdict = oracle.check(run.text, run.history)
    assert invariants_named(verdict) == {"K7"}
    assert verdict.anomalies[0]["type"] == "committed_not_applied"


def _refused_at_recovery(run: Run) -> Run:
    t = run.effect.claim_until
    dead = kernel.Lease("L", run.lease.expires_at, revoked=True)
    run.step(kernel.Recover(t, dead, FACTS, kernel.Lookup(False, t)))
    assert run.effect.state is kernel.State.REFUSED
    return run


def test_k7_refused_as_never_applied_but_the_target_applied_it() -> None:
    run = _refused_at_recovery(Run(2).dispatch())
    assert oracle.check(run.text, run.history).valid is True
    run.apply_at_target(13)
    verdict = oracle.check(run.text, run.history)
    assert invariants_named(verdict) == {"K7"}
    assert verdict.anomalies[0]["type"] == "refused_but_applied"


def test_k9_unresolved_only_when_the_history_is_complete() -> None:
    run = Run(2).dispatch()
    assert oracle.check(run.text, run.history).valid is True
    assert invariants_named(oracle.check(run.text, run.history, complete=True)) == {"K9"}


# The oracle stops at the first divergence: a dispatch on stale premises or a refusal without
# cause is already a wrong decision, so K5 and K10 are judged here by the predicates directly.


def _entries_with(run: Run, **body: Any) -> list[dict[str, Any]]:
    return verify(run.forge(**body).text).entries


def test_k5_a_send_after_a_failed_premise_check() -> None:
    run = Run(2)
    run.step(kernel.Propose(10, run.proposal))
    run.step(kernel.Authorize(11, run.lease, FACTS))
    checks = {**run.ok_checks(12), "stale": ["refunded"]}
    entries = _entries_with(run, kind="DISPATCHED", ts=12, attempt=1, phase="dispatch",
                            deadline=212, claim_until=312, first_sent_at=12, checks=checks)
    history = [{"op": "send", "effect_id": run.eid, "attempt": 1, "ts": 12}]
    named = {v.invariant for v in invariants.check(entries, history)}
    assert named == {"K5"}


def test_k10_a_refusal_while_the_lease_was_live_and_premises_held() -> None:
    run = Run(2)
    run.step(kernel.Propose(10, run.proposal))
    entries = _entries_with(run, kind="REFUSED", ts=11, reason="lease_dead", executed="false",
                            checks=run.ok_checks(11))
    assert {v.invariant for v in invariants.check(entries)} == {"K10"}
    assert oracle.check(run.text).anomalies[0]["type"] == "wrong_outcome"


def test_k7_a_needless_ambiguity_at_a_queryable_target() -> None:
    run = Run(2).dispatch()
    t = run.effect.claim_until
    entries = _entries_with(run, kind="AMBIGUOUS", ts=t, reason="x", checks=run.ok_checks(t))
    assert [v.type for v in invariants.check(entries)] == ["needless_ambiguity"]


def test_the_kernel_alerts_k7_when_a_late_ack_contradicts_a_refusal() -> None:
    run = _refused_at_recovery(Run(2).dispatch())
    commands = run.step(kernel.Ack(run.effect.claim_until + 50, 1))
    assert [c.invariant for c in commands if isinstance(c, kernel.Alert)] == ["K7"]


# ---------------------------------------------------------------- the command line


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernel", "check", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def history_file(tmp_path: Path, history: list[dict[str, Any]]) -> Path:
    return write(tmp_path, "history.jsonl", "".join(json.dumps(h) + "\n" for h in history))


def test_cli_exit_0_on_a_valid_journal(tmp_path: Path) -> None:
    run = Run(2).happy()
    out = cli(write(tmp_path, "j.jsonl", run.text), "--history",
              history_file(tmp_path, run.history), "--complete")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "valid: true"


def _corruptions(lines: list[str]) -> dict[str, tuple[list[str], int]]:
    edited = lines[2].replace('"attempt":1', '"attempt":2')
    return {"edit": ([*lines[:2], edited, *lines[3:]], 3),
            "drop": ([lines[0], *lines[2:]], 2),
            "insert": ([*lines[:2], lines[1], *lines[2:]], 3),
            "reorder": ([lines[0], lines[2], lines[1], lines[3]], 2)}


@pytest.mark.parametrize("how", ["edit", "drop", "insert", "reorder"])
def test_cli_exit_1_and_names_the_line_of_a_corruption(tmp_path: Path, how: str) -> None:
    lines, line_no = _corruptions(Run(1).happy().lines)[how]
    out = cli(write(tmp_path, "j.jsonl", "".join(lines)))
    assert out.returncode == 1, out.stdout + out.stderr
    first_sentence = out.stdout.splitlines()[1]
    assert first_sentence.startswith(f"line {line_no}: "), first_sentence


def test_cli_exit_2_on_an_unresolved_dispatch_without_history(tmp_path: Path) -> None:
    out = cli(write(tmp_path, "j.jsonl", Run(2).dispatch().text))
    assert out.returncode == 2
    assert out.stdout.splitlines()[0] == "valid: unknown"


def test_cli_exit_1_when_complete_and_unresolved(tmp_path: Path) -> None:
    out = cli(write(tmp_path, "j.jsonl", Run(2).dispatch().text), "--complete")
    assert out.returncode == 1 and out.stdout.splitlines()[1].startswith("K9: ")


def test_cli_reports_an_invariant_from_the_history(tmp_path: Path) -> None:
    run = Run(1).happy()
    run.apply_at_target(15)
    out = cli(write(tmp_path, "j.jsonl", run.text), "--history",
              history_file(tmp_path, run.history))
    assert out.returncode == 1 and out.stdout.splitlines()[1].startswith("K2: ")


def test_cli_json_output_is_the_verdict(tmp_path: Path) -> None:
    out = cli(write(tmp_path, "j.jsonl", Run(2).dispatch().text), "--json")
    verdict = json.loads(out.stdout)
    assert out.returncode == 2
    assert verdict["valid"] == "unknown" and verdict["entries"] == 3


def test_cli_now_flags_a_journal_from_the_future(tmp_path: Path) -> None:
    out = cli(write(tmp_path, "j.jsonl", Run(2).happy().text), "--now", "11")
    assert out.returncode == 1
    assert out.stdout.splitlines()[1] == "line 3: ts 12 is later than now (11)"


def test_cli_254_on_a_missing_journal(tmp_path: Path) -> None:
    out = cli(tmp_path / "nope.jsonl")
    assert out.returncode == 254 and "cannot read journal" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("line", ["{not json", '{"op": "delete", "effect_id": "x", "ts": 1}',
                                  '{"op": "send", "effect_id": "x", "ts": "1"}', "[1]",
                                  '{"op": "send", "effect_id": "x", "ts": 1}',
                                  '{"op": "send", "effect_id": "x", "ts": 1, "attempt": "1"}'])
def test_cli_254_on_a_bad_history_line(tmp_path: Path, line: str) -> None:
    journal = write(tmp_path, "j.jsonl", Run(2).happy().text)
    history = write(tmp_path, "h.jsonl", '{"op": "apply", "effect_id": "x", "ts": 1}\n'
                    + line + "\n")
    out = cli(journal, "--history", history)
    assert out.returncode == 254 and "history line 2" in out.stderr
    assert "Traceback" not in out.stderr


def test_cli_254_on_a_missing_history_file(tmp_path: Path) -> None:
    out = cli(write(tmp_path, "j.jsonl", ""), "--history", tmp_path / "none.jsonl")
    assert out.returncode == 254 and "cannot read history" in out.stderr


@pytest.mark.parametrize("args", [[], ["--now", "soon"], ["--bogus"]])
def test_cli_254_on_bad_arguments(tmp_path: Path, args: list[str]) -> None:
    journal = write(tmp_path, "j.jsonl", "")
    out = cli(*([journal] if args else []), *args)
    assert out.returncode == 254 and "error:" in out.stderr


def test_cli_never_prints_a_traceback_on_garbage(tmp_path: Path) -> None:
    out = cli(write(tmp_path, "j.jsonl", '{"seq": 0}\n\x00\xff garbage\n'))
    assert out.returncode == 1 and "Traceback" not in out.stderr


def test_cli_accepts_a_json_array_of_entries_and_a_trace_document(tmp_path: Path) -> None:
    run = Run(2).happy()
    entries = verify(run.text).entries
    array = write(tmp_path, "journal.json", json.dumps(entries, indent=2))
    document = write(tmp_path, "trace.json", json.dumps({"id": "x", "journal": entries}))
    for path in (array, document):
        done = cli(path)
        assert done.returncode == 0 and done.stdout.startswith("valid: true"), done.stdout


def test_cli_says_which_array_element_is_not_an_entry(tmp_path: Path) -> None:
    done = cli(write(tmp_path, "bad.json", "[1, 2]"))
    assert done.returncode == 1
    assert "entry 1 of the journal array is not a JSON object" in done.stdout


def test_a_one_entry_journal_reads_in_the_singular() -> None:
    run = Run(2)
    run.step(kernel.Propose(0, run.proposal))
    assert oracle.check(run.text).first.startswith("1 entry:")


def test_applied_may_be_given_as_effect_ids_or_counts() -> None:
    run = Run(2).happy()
    assert oracle.check(run.text, applied=[run.eid]).valid is True
    twice = oracle.check(run.text, applied={run.eid: 2})
    assert twice.valid is False and "K2" in invariants_named(twice)
    never = oracle.check(run.text, applied=[])
    assert never.valid is False and "K7" in invariants_named(never)


def test_a_malformed_applied_record_is_a_clear_error() -> None:
    with pytest.raises(kernel.KernelError, match="record 1"):
        oracle.check(Run(2).happy().text, applied=[{"op": "send", "effect_id": "x"}])


def test_cli_reads_a_json_array_history(tmp_path: Path) -> None:
    run = Run(2).happy()
    journal = write(tmp_path, "j.jsonl", run.text)
    history = write(tmp_path, "h.json", json.dumps(run.history + [run.eid]))
    out = cli(journal, "--history", history)
    assert out.returncode == 1 and "K2" in out.stdout


# ---------------------------------------------------------------- hostile input at the command line

HOSTILE = {
    "deep array": (b"[" * 1500 + b"]" * 1500 + b"\n", 1, "nests deeper than 35 levels"),
    "deep payload": (b'{"a":' * 400 + b"1" + b"}" * 400 + b"\n", 1, "nests deeper than 35"),
    "deep array document": (b"[" * 5000 + b"]" * 5000, 1, "not the beginning of a journal"),
    "escaped lone surrogate": (b'{"kind":"\\ud800"}\n', 1, "lone surrogate"),
    "encoded surrogate": (b'{"kind":"\xed\xa0\x80"}\n', 1, "not valid UTF-8"),
    "50 MB line": (b'{"a":"' + b"x" * 50_000_000 + b'"}\n', 1, "longer than the limit"),
    "50 MB second line": (b'{"seq":0}\n{"a":"' + b"x" * 50_000_000 + b'"}\n', 1,
                          "line 2: longer than the limit of 1,048,576 bytes"),
    "line just over the limit": (b'{"a":"' + b"x" * (MAX_LINE - 7) + b'"}\n', 1,
                                 "line 1: longer than the limit"),
    "line at the limit": (b'{"a":"' + b"x" * (MAX_LINE - 8) + b'"}\n', 1, "missing field 'seq'"),
    "torn array": (b'[{"seq":0', 1, "not the beginning of a journal entry"),
    "hello world": (b"hello world", 1, "not the beginning of a journal entry"),
    "journal 5": (b'{"journal": 5}', 1, "not the beginning of a journal entry"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_cli_hostile_input_is_one_line_and_an_exit_code(tmp_path: Path, case: str) -> None:
    data, code, words = HOSTILE[case]
    path = tmp_path / "j.jsonl"
    path.write_bytes(data)
    out = cli(path)
    assert out.returncode == code, out.stdout + out.stderr[-400:]
    assert "Traceback" not in out.stderr and out.stderr == ""
    assert out.stdout.splitlines()[0] == "valid: false"
    assert len(out.stdout.splitlines()) == 2 and words in out.stdout


@pytest.mark.parametrize("make", ["directory", "missing"])
def test_cli_a_directory_or_a_missing_file_is_bad_usage(tmp_path: Path, make: str) -> None:
    path = tmp_path / "j.jsonl"
    if make == "directory":
        path.mkdir()
    out = cli(path)
    assert out.returncode == 254 and "Traceback" not in out.stderr
    assert out.stdout == "" and len(out.stderr.splitlines()) == 1


def test_cli_a_torn_last_line_inside_a_utf8_character_is_torn(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(Run(1).happy().text.encode() + '{"capabilities":{"é'.encode()[:-1])
    out = cli(path)
    assert out.returncode == 0 and "torn write" in out.stdout


# ---------------------------------------------------------------- coordinated units re-executed

REPO = kernel.Capabilities(dedupes=True, queryable=True, dedup_window=600_000, lookup_lag=10)
UNIT_TIMING = kernel.Timing(send_timeout=2_000, settle_margin=1_000, dedup_margin=5_000)


def _unit_journal(verify: bool = True, **forged: Any) -> tuple[list[str], str]:
    """A coordinated unit admitted, sent, acked and verified; ``forged`` rewrites members of
    its AUTHORIZED entry (re-sealed, so the chain stays valid)."""
    c = kernel.Coordination(writes=("a.py",), ttl=60_000, plan="p", plan_version=1,
                            verify=verify)
    p = kernel.Proposal(payload={"unit": "u1"}, premises={"a.py": "d0"}, lease="L1",
                        capabilities=REPO, timing=UNIT_TIMING, key={"unit": "u1"},
                        coordination=c)
    lease, plan, facts = kernel.Lease("L1", 10**9), kernel.Plan("p", 1), {"a.py": "d0"}
    chain, folder, effects, lines = Chain(), kernel.Folder(), kernel.Effects(), []

    def run(event: Any) -> None:
        for cmd in effects.apply(event, p.effect_id):
            if isinstance(cmd, kernel.Append):
                body = dict(cmd.entry)
                if body["kind"] == "AUTHORIZED":
                    body.update(forged)
                entry, line = chain.seal(body)
                folder.add(entry)
                lines.append(line)

    run(kernel.Propose(1, p))
    run(kernel.Authorize(2, lease, facts, folder.view(), plan, chain.seq))
    run(kernel.Dispatch(3, lease, facts, folder.view(), plan))
    run(kernel.Ack(4, 1))
    if verify:
        run(kernel.Verification(5, "passed"))
    return lines, p.effect_id


def test_a_coordinated_unit_verified_then_committed_re_executes() -> None:
    lines, _ = _unit_journal()
    kinds = [json.loads(line)["kind"] for line in lines]
    assert kinds == ["PROPOSED", "AUTHORIZED", "DISPATCHED", "LANDED", "COMMITTED"]
    assert oracle.check("".join(lines)).valid is True


def test_wrong_field_an_admission_whose_token_is_not_its_seq() -> None:
    good, _ = _unit_journal()
    admission = json.loads(good[1])["admission"]
    lines, _ = _unit_journal(admission={**admission, "token": 7})
    verdict = oracle.check("".join(lines))
    assert verdict.anomalies[0]["type"] == "wrong_field"
    assert verdict.first.startswith("line 2: ") and "admission.token is 7" in verdict.first


def test_wrong_field_a_claim_longer_than_its_ttl() -> None:
    good, _ = _unit_journal()
    admission = json.loads(good[1])["admission"]
    lines, _ = _unit_journal(admission={**admission, "until": admission["until"] + 1})
    assert "admission.until is 60003, the kernel computes 60002" in oracle.check(
        "".join(lines)).first


def test_one_effect_resent_20000_times_is_judged_in_linear_time() -> None:
    """Regression: the send checks once scanned every DISPATCHED per send (over 100 s here);
    now the whole check takes a couple of seconds (measured, not asserted: not a timing test)."""
    caps = kernel.Capabilities(dedupes=True, queryable=False, dedup_window=10**9)
    p = kernel.Proposal(payload={"a": 1}, premises={}, lease="L", capabilities=caps,
                        timing=TIMING)
    lease, effects, chain = kernel.Lease("L", 10**12), kernel.Effects(), Chain()
    lines: list[str] = []
    history: list[dict[str, Any]] = []

    def run(event: Any) -> None:
        for c in effects.apply(event, p.effect_id):
            if isinstance(c, kernel.Append):
                lines.append(chain.seal(c.entry)[1])
            if isinstance(c, kernel.Send):
                history.append({"op": "send", "effect_id": p.effect_id,
                                "attempt": c.attempt, "ts": event.now})

    run(kernel.Propose(1, p))
    run(kernel.Authorize(2, lease, {}))
    run(kernel.Dispatch(3, lease, {}))
    for _ in range(19_999):
        run(kernel.Recover(effects.by_id[p.effect_id].claim_until, lease, {}))
    t = effects.by_id[p.effect_id].claim_until
    run(kernel.Ack(t, 20_000))
    history.append({"op": "apply", "effect_id": p.effect_id, "ts": t})
    assert oracle.check("".join(lines), history, complete=True).valid is True


def test_cli_stops_reading_a_journal_at_a_line_over_the_limit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The reader itself stops at the long line: it never returns the text to be parsed."""
    from kernel.__main__ import _read_journal

    path = tmp_path / "j.jsonl"
    path.write_bytes(b'{"seq":0}\n{"a":"' + b"x" * 50_000_000 + b'"}\n')
    with pytest.raises(SystemExit) as stopped:
        _read_journal(str(path))
    assert stopped.value.code == 1
    assert capsys.readouterr().out.splitlines() == [
        "valid: false", "line 2: longer than the limit of 1,048,576 bytes for a journal line"]


# ---------------------------------------------------------------- type-exact comparison
# Python's == says True == 1 and 5.0 == 5: a recorded value of another JSON type must still
# be a divergence. The first two journals pass the schema and the chain (the members are
# untyped there), so only re-execution can see them.


def _coordinated() -> list[dict[str, Any]]:
    unit = kernel.Coordination(writes=("f",), plan="p", plan_version=1)
    p = kernel.Proposal(payload={"a": 1}, premises={"f": 1}, lease="L",
                        capabilities=TIERS[2], timing=TIMING, coordination=unit)
    effects, chain, entries = kernel.Effects(), Chain(), []
    for event in (kernel.Propose(10, p),
                  kernel.Authorize(11, kernel.Lease("L", 10**9), {"f": 1},
                                   plan=kernel.Plan("p", 1), view=kernel.View(), seq=1)):
        for c in effects.apply(event, p.effect_id):
            if isinstance(c, kernel.Append):
                entries.append(chain.seal(c.entry)[0])
    return entries


@pytest.mark.parametrize(("path", "value", "kernel_value"),
                         [(("admission", "token"), True, "1"),
                          (("checks", "unit", "plan", "ok"), 1, "true")])
def test_a_recorded_value_of_another_json_type_is_a_divergence(
        path: tuple[str, ...], value: Any, kernel_value: str) -> None:
    entries = _coordinated()
    assert oracle.check(entries).valid is True
    chain, forged = Chain(), []
    for entry in entries:
        body = json.loads(json.dumps(entry))
        if body["kind"] == "AUTHORIZED":
            inner = body
            for name in path[:-1]:
                inner = inner[name]
            inner[path[-1]] = value
        forged.append(chain.seal(body)[0])
    verdict = oracle.check(forged)
    assert verdict.valid is False, verdict.first
    first = verdict.anomalies[0]
    assert (first["type"], first["field"]) == ("wrong_field", ".".join(path))
    assert verdict.first.endswith(f"the kernel computes {kernel_value} from the observations "
                                  f"recorded"), verdict.first


@pytest.mark.parametrize(("name", "value"), [("attempt", True), ("deadline", 12.0 + 200),
                                             ("claim_until", 312.0)])
def test_reexecution_of_entries_given_as_dicts_is_type_exact(name: str, value: Any) -> None:
    entries = verify(Run(1).dispatch().text).entries
    assert entries[2]["kind"] == "DISPATCHED" and entries[2][name] == value
    entries[2] = {**entries[2], name: value}
    with pytest.raises(Divergence) as caught:
        reexecute(entries)
    assert (caught.value.kind, caught.value.field, caught.value.line) == ("wrong_field", name, 3)
